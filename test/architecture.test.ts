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

/** Every relative import of the source files: [importer, imported file]. */
function edges(files: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith(".")) out.push([file, resolve(dirname(file), spec)]);
    }
  }
  return out;
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

  it("catches an upward import (the check can fail)", () => {
    const from = join(src, "history", "x.ts");
    const to = join(src, "agent", "subagent.ts");
    expect(violations([[from, to]])).toEqual(["src/history/x.ts (history) -> src/agent/subagent.ts (agent)"]);
    expect(violations([[join(src, "compaction", "y.ts"), join(src, "lisp", "values.ts")]])).toHaveLength(1);
    expect(violations([[join(src, "agent", "z.ts"), join(src, "history", "view.ts")]])).toEqual([]);
  });
});
