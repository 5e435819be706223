// The layers, bottom to top: src/lisp and src/llm, then src/compaction, the turn records
// (src/trace), the prompt views (src/history), the agent, the tools built on it (harness, proxy,
// viewer), and the CLI. A folder imports only from folders below it: checked here on every
// import (static and dynamic) of every source file.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");

/** What each folder may import from (besides itself). Anything unlisted is a layering error. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  lisp: [],
  llm: [],
  compaction: ["llm"],
  trace: ["lisp", "llm", "compaction"],
  history: ["lisp", "llm", "compaction", "trace"],
  agent: ["lisp", "llm", "compaction", "trace", "history"],
  harness: ["lisp", "llm", "compaction", "trace", "history", "agent"],
  proxy: ["lisp", "llm", "compaction", "trace", "history", "agent"],
  viewer: ["lisp", "llm", "compaction", "trace", "history", "agent"],
  cli: ["lisp", "llm", "compaction", "trace", "history", "agent", "harness", "proxy", "viewer", "examples"],
  // The public entries (src/index.ts, src/advanced.ts) gather everything.
  entry: ["lisp", "llm", "compaction", "trace", "history", "agent", "harness", "proxy", "viewer"],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** The layer a file belongs to: its first folder under src/ (or "entry"), or "examples" outside src/. */
function layerOf(file: string): string {
  const rel = relative(src, file);
  if (rel.startsWith("..")) return relative(root, file).split(/[\\/]/)[0];
  const parts = rel.split(/[\\/]/);
  return parts.length === 1 ? "entry" : parts[0];
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^"'`]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Every relative import of the source files: [importer, imported file]; `runtime` skips type-only ones. */
function edges(files: readonly string[], runtime = false): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      if (runtime && /^\s*(import|export) type\b/.test(m[0])) continue;
      if (spec.startsWith(".")) out.push([file, resolve(dirname(file), spec).replace(/\.js$/, ".ts")]);
    }
  }
  return out;
}

/** A cycle of runtime imports between files, as a list of paths, or null. */
function cycle(imports: ReadonlyArray<[string, string]>): string[] | null {
  const next = new Map<string, string[]>();
  for (const [a, b] of imports) next.set(a, [...(next.get(a) ?? []), b]);
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (f: string): string[] | null => {
    if (state.get(f) === "done") return null;
    if (state.get(f) === "open") return path.slice(path.indexOf(f)).concat(f);
    state.set(f, "open");
    path.push(f);
    for (const g of next.get(f) ?? []) {
      const found = visit(g);
      if (found) return found;
    }
    path.pop();
    state.set(f, "done");
    return null;
  };
  for (const f of next.keys()) {
    const found = visit(f);
    if (found) return found.map((x) => relative(root, x));
  }
  return null;
}

/** The imports that break the layering, as "from -> to" lines. */
function violations(imports: ReadonlyArray<[string, string]>): string[] {
  const bad: string[] = [];
  for (const [from, to] of imports) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === b) continue;
    const allowed = MAY_IMPORT[a];
    if (allowed === undefined || !allowed.includes(b)) bad.push(`${relative(root, from)} (${a}) -> ${relative(root, to)} (${b})`);
  }
  return bad;
}

describe("the architecture", () => {
  const files = sources(src);

  it("knows every folder under src/", () => {
    const folders = new Set(files.map(layerOf));
    for (const f of folders) expect(Object.keys(MAY_IMPORT), `src/${f} has no place in the layering`).toContain(f);
  });

  it("imports only downwards, so the folders form no cycle", () => {
    const all = edges(files);
    expect(all.length).toBeGreaterThan(100);
    expect(violations(all)).toEqual([]);
  });

  it("has no cycle of runtime imports between the files of the agent and the layers under it", () => {
    // The interpreter's analyzer and its special forms recurse into each other by design, so
    // src/lisp is left out; everywhere else a cycle means a concern in the wrong module.
    const checked = files.filter((f) => !layerOf(f).startsWith("lisp") && layerOf(f) !== "entry");
    expect(cycle(edges(checked, true).filter(([, to]) => checked.includes(to)))).toBeNull();
    // The check finds one when there is one.
    const [a, b, c] = ["a.ts", "b.ts", "c.ts"].map((f) => join(src, "agent", f));
    expect(cycle([[a, b], [b, c], [c, a]])).toEqual(["src/agent/a.ts", "src/agent/b.ts", "src/agent/c.ts", "src/agent/a.ts"]);
  });

  it("catches an upward import (the check can fail)", () => {
    const from = join(src, "history", "x.ts");
    const to = join(src, "agent", "subagent.ts");
    expect(violations([[from, to]])).toEqual(["src/history/x.ts (history) -> src/agent/subagent.ts (agent)"]);
    expect(violations([[join(src, "compaction", "y.ts"), join(src, "lisp", "values.ts")]])).toHaveLength(1);
    expect(violations([[join(src, "agent", "z.ts"), join(src, "history", "view.ts")]])).toEqual([]);
  });
});
