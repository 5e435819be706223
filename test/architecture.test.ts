// The layers, bottom to top: src/json (where a JSON text went wrong; input files as text), src/lisp
// and src/llm, then src/compaction, the turn records
// (src/trace), the prompt views (src/history), the agent, the tools built on it (harness, proxy,
// viewer), and the CLI (docs/architecture.md). A folder imports only from folders below it, and
// only through src/lisp/index.ts into the interpreter; no files import each other in a cycle,
// except the analyzer and its special forms, which recurse into each other by design. Checked
// here on every import of every source file: static, side-effect, re-export, dynamic, found by
// the TypeScript parser so neither comments nor strings can hide or fake one.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");

/** What each folder may import from (besides itself). Anything unlisted is a layering error. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  json: [],
  lisp: ["json"],
  llm: ["json"],
  compaction: ["json", "llm"],
  trace: ["json", "lisp", "llm", "compaction"],
  history: ["json", "lisp", "llm", "compaction", "trace"],
  agent: ["json", "lisp", "llm", "compaction", "trace", "history"],
  harness: ["json", "lisp", "llm", "compaction", "trace", "history", "agent"],
  proxy: ["json", "lisp", "llm", "compaction", "trace", "history", "agent"],
  // The viewer reads saved runs, run states and traces through src/trace's readers, never the agent.
  viewer: ["json", "lisp", "llm", "compaction", "trace", "history"],
  cli: ["json", "lisp", "llm", "compaction", "trace", "history", "agent", "harness", "proxy", "viewer", "examples"],
  // The public entries (src/index.ts, src/advanced.ts) gather everything.
  entry: ["json", "lisp", "llm", "compaction", "trace", "history", "agent", "harness", "proxy", "viewer"],
};

/** The CLI's readers of run files: like the viewer, they read a saved run without the agent. */
const READS_RUN_FILES = [join(src, "cli", "file-kind.ts"), join(src, "cli", "trace.ts")];

/** Imports of the agent from a reader of run files, as "from -> to" lines. */
const agentInReaders = (imports: readonly Edge[]): string[] =>
  imports.filter((e) => READS_RUN_FILES.includes(e.from) && layerOf(e.to) === "agent").map((e) => `${relative(root, e.from)} -> ${relative(root, e.to)}`);

/** The interpreter's one door: outside src/lisp, nothing else of it may be imported. */
const LISP_ENTRY = join(src, "lisp", "index.ts");

/** The one cycle allowed: the analyzer and its special forms (an `if` analyzes its branches). */
const MAY_CYCLE = join(src, "lisp", "analyzer");

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

interface Edge {
  from: string;
  to: string;
  /** False when the compiler erases the import (types only), so it loads nothing. */
  runtime: boolean;
}

const typesOnly = (clause: ts.NamedImportBindings | ts.NamedExportBindings | undefined): boolean =>
  clause !== undefined && (ts.isNamedImports(clause) || ts.isNamedExports(clause)) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);

/** Every relative import of one file's text. */
function importsOf(file: string, text: string): Edge[] {
  const out: Edge[] = [];
  const add = (spec: ts.Expression | undefined, runtime: boolean): void => {
    if (spec && ts.isStringLiteralLike(spec) && spec.text.startsWith(".")) out.push({ from: file, to: resolve(dirname(file), spec.text).replace(/\.js$/, ".ts"), runtime });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      // No clause is a side-effect import (`import "./x.js"`): it runs the module.
      add(node.moduleSpecifier, !c || (!c.isTypeOnly && (c.name !== undefined || !typesOnly(c.namedBindings))));
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, !node.isTypeOnly && !typesOnly(node.exportClause));
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return out;
}

const edges = (files: readonly string[]): Edge[] => files.flatMap((f) => importsOf(f, readFileSync(f, "utf8")));

/** The imports that break the layering, as "from -> to" lines. */
function violations(imports: readonly Edge[]): string[] {
  const bad: string[] = [];
  for (const { from, to } of imports) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === b) continue;
    const allowed = MAY_IMPORT[a];
    if (allowed === undefined || !allowed.includes(b)) bad.push(`${relative(root, from)} (${a}) -> ${relative(root, to)} (${b})`);
    else if (b === "lisp" && to !== LISP_ENTRY) bad.push(`${relative(root, from)} (${a}) -> ${relative(root, to)} (inside lisp; import src/lisp/index.ts)`);
  }
  return bad;
}

/** The groups of files that import each other in a cycle at runtime (Tarjan's strongly connected components), as sorted relative paths. */
function cycles(imports: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of imports) if (e.runtime) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (f: string): void => {
    index.set(f, index.size);
    low.set(f, index.get(f)!);
    stack.push(f);
    onStack.add(f);
    for (const g of next.get(f) ?? []) {
      if (!index.has(g)) {
        visit(g);
        low.set(f, Math.min(low.get(f)!, low.get(g)!));
      } else if (onStack.has(g)) low.set(f, Math.min(low.get(f)!, index.get(g)!));
    }
    if (low.get(f) !== index.get(f)) return;
    const group: string[] = [];
    let g: string;
    do {
      g = stack.pop()!;
      onStack.delete(g);
      group.push(g);
    } while (g !== f);
    if (group.length > 1 || (next.get(f) ?? []).includes(f)) found.push(group.map((x) => relative(root, x)).sort());
  };
  for (const f of next.keys()) if (!index.has(f)) visit(f);
  return found;
}

/** The cycles not allowed: any with a file outside the analyzer. */
const badCycles = (imports: readonly Edge[]): string[][] => cycles(imports).filter((group) => group.some((f) => !join(root, f).startsWith(MAY_CYCLE)));

describe("the architecture", () => {
  const files = sources(src);
  const all = edges(files);

  it("knows every folder under src/", () => {
    const folders = new Set(files.map(layerOf));
    for (const f of folders) expect(Object.keys(MAY_IMPORT), `src/${f} has no place in the layering`).toContain(f);
  });

  it("imports only downwards, and into the interpreter only through its entry module", () => {
    expect(all.length).toBeGreaterThan(100);
    expect(violations(all)).toEqual([]);
  });

  it("reads run files (saved runs, run states, traces) without the agent: the viewer and the CLI's readers", () => {
    for (const f of READS_RUN_FILES) expect(files).toContain(f);
    expect(agentInReaders(all)).toEqual([]);
  });

  it("has no cycle of runtime imports between files, but the analyzer's recursive descent", () => {
    expect(badCycles(all)).toEqual([]);
    // The allowed one is really there: the check looks inside src/lisp.
    expect(cycles(all).some((g) => g.includes("src/lisp/analyzer/analyze.ts"))).toBe(true);
  });
});

describe("the import check can fail", () => {
  const at = (...p: string[]): string => join(src, ...p);

  it("on an upward import", () => {
    expect(violations([{ from: at("history", "x.ts"), to: at("agent", "subagent.ts"), runtime: true }])).toEqual(["src/history/x.ts (history) -> src/agent/subagent.ts (agent)"]);
    expect(violations([{ from: at("compaction", "y.ts"), to: at("lisp", "index.ts"), runtime: false }])).toHaveLength(1);
    expect(violations([{ from: at("agent", "z.ts"), to: at("history", "view.ts"), runtime: true }])).toEqual([]);
  });

  it("on a reader of run files, or the viewer, importing the agent", () => {
    expect(agentInReaders([{ from: at("cli", "trace.ts"), to: at("agent", "resume.ts"), runtime: false }])).toEqual(["src/cli/trace.ts -> src/agent/resume.ts"]);
    expect(agentInReaders([{ from: at("cli", "demo.ts"), to: at("agent", "saved-run.ts"), runtime: true }])).toEqual([]);
    expect(violations([{ from: at("viewer", "input.ts"), to: at("agent", "saved-run.ts"), runtime: true }])).toEqual(["src/viewer/input.ts (viewer) -> src/agent/saved-run.ts (agent)"]);
  });

  it("on a side-effect import", () => {
    const found = importsOf(at("compaction", "x.ts"), `import "../agent/loop.js";\nexport const x = 1;\n`);
    expect(found).toEqual([{ from: at("compaction", "x.ts"), to: at("agent", "loop.ts"), runtime: true }]);
    expect(violations(found)).toHaveLength(1);
  });

  it("on imports around comments and strings holding quotes", () => {
    const text = [
      "// the agent's loop, imported after a comment with an apostrophe",
      "import {",
      "  run, // it's the loop",
      "  type Step, /* don't */",
      '} from "../agent/loop.js";',
      "const s = 'import { fake } from \"../cli/main.js\"';",
      "/* import { alsoFake } from '../cli/main.js' */",
      'export * from "../harness/compare.js"; // what\'s compared',
      'const later = () => import("../proxy/index.js");',
    ].join("\n");
    const found = importsOf(at("history", "x.ts"), text);
    expect(found.map((e) => relative(src, e.to))).toEqual(["agent/loop.ts", "harness/compare.ts", "proxy/index.ts"]);
    expect(violations(found)).toHaveLength(3);
  });

  it("tells type-only imports, which load nothing, from runtime ones", () => {
    const text = `import type { A } from "./a.js";\nimport { type B } from "./b.js";\nimport { type C, d } from "./c.js";\nexport type { E } from "./e.js";\ntype F = import("./f.js").F;\n`;
    expect(importsOf(at("lisp", "x.ts"), text).map((e) => [relative(src, e.to), e.runtime])).toEqual([
      ["lisp/a.ts", false],
      ["lisp/b.ts", false],
      ["lisp/c.ts", true],
      ["lisp/e.ts", false],
      ["lisp/f.ts", false],
    ]);
  });

  it("on an import of an interpreter module other than its entry", () => {
    const found = importsOf(at("agent", "x.ts"), `import { Vec } from "../lisp/vector.js";\nimport { evaluate } from "../lisp/index.js";\n`);
    expect(violations(found)).toEqual(["src/agent/x.ts (agent) -> src/lisp/vector.ts (inside lisp; import src/lisp/index.ts)"]);
    // The public entries go through the door too.
    expect(violations([{ from: at("index.ts"), to: at("lisp", "evaluate.ts"), runtime: true }])).toHaveLength(1);
  });

  it("on a cycle, inside src/lisp too, but not the analyzer's", () => {
    const edge = (a: string[], b: string[], runtime = true): Edge => ({ from: at(...a), to: at(...b), runtime });
    const lisp = [edge(["lisp", "compile.ts"], ["lisp", "seq.ts"]), edge(["lisp", "seq.ts"], ["lisp", "fn.ts"]), edge(["lisp", "fn.ts"], ["lisp", "compile.ts"])];
    expect(badCycles(lisp)).toEqual([["src/lisp/compile.ts", "src/lisp/fn.ts", "src/lisp/seq.ts"]]);
    expect(badCycles([edge(["agent", "a.ts"], ["agent", "a.ts"])])).toEqual([["src/agent/a.ts"]]);
    // Type-only imports load nothing, so they close no cycle.
    expect(badCycles([edge(["agent", "a.ts"], ["agent", "b.ts"]), edge(["agent", "b.ts"], ["agent", "a.ts"], false)])).toEqual([]);
    const analyzer = [edge(["lisp", "analyzer", "analyze.ts"], ["lisp", "analyzer", "specials", "control.ts"]), edge(["lisp", "analyzer", "specials", "control.ts"], ["lisp", "analyzer", "analyze.ts"])];
    expect(badCycles(analyzer)).toEqual([]);
    expect(cycles(analyzer)).toHaveLength(1);
  });
});
