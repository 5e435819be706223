// Every TypeScript sample in the README and docs/ compiles against the library as it is: a
// sample declares the names it assumes (`declare const questions: string[]`) instead of
// leaving a reader to guess. Each sample is its own module, type-checked strictly.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const docs = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

interface Sample {
  doc: string;
  line: number;
  code: string;
}

const samples: Sample[] = docs.flatMap((doc) => {
  const text = readFileSync(join(root, doc), "utf8");
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => ({ doc, line: text.slice(0, m.index).split("\n").length + 1, code: m[1] }));
});

// Inside the repository, so "zod" and "openai" resolve from its node_modules; "ptc-lisp" maps to the sources.
const dir = mkdtempSync(join(root, ".doc-samples-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fileOf = (sample: Sample): string => join(dir, `${sample.doc.replace(/\W/g, "_")}_${sample.line}.ts`);

/** Each sample's diagnostics, from one program holding them all (the library is checked once). */
let checked: Map<string, string[]> | undefined;
function diagnostics(sample: Sample): string[] {
  if (checked === undefined) {
    for (const s of samples) writeFileSync(fileOf(s), `${s.code}\nexport {};\n`);
    const program = ts.createProgram(samples.map(fileOf), {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      baseUrl: root,
      paths: { "ptc-lisp": ["src/index.ts"], "ptc-lisp/advanced": ["src/advanced.ts"] },
    });
    checked = new Map(samples.map((s) => [fileOf(s), []]));
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const s = samples.find((x) => fileOf(x) === d.file?.fileName);
      if (s === undefined || d.file === undefined) continue;
      checked.get(fileOf(s))?.push(`${s.doc}:${s.line + d.file.getLineAndCharacterOfPosition(d.start ?? 0).line}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    }
  }
  return checked.get(fileOf(sample)) ?? [];
}

describe("the TypeScript samples in the README and docs", () => {
  it("are found", () => {
    expect(samples.length).toBeGreaterThanOrEqual(12);
  });

  it.each(samples.map((s) => [`${s.doc}:${s.line}`, s] as const))("%s type-checks", (_where, sample) => {
    expect(diagnostics(sample)).toEqual([]);
  }, 300_000);
});
