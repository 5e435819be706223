// The TypeScript examples of a doc, run as written: the ts block after a heading, with the
// package name swapped for the sources, written into the project (so its bare imports resolve
// to node_modules) and imported, with what it logs and writes to stdout captured.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, expect, vi } from "vitest";

const root = resolve(import.meta.dirname, "../..");

export interface DocExamples {
  /** The first ts block after the text `after` (a heading with its newlines, say). */
  example(after: string): string;
  /** Runs an example's code: its console.log calls' arguments and what it wrote to stdout. */
  run(name: string, code: string): Promise<{ logged: unknown[][]; written: string }>;
}

/** The examples of `doc` (a path from the project root); their files go when the test file ends. */
export function docExamples(doc: string): DocExamples {
  const text = readFileSync(join(root, doc), "utf8");
  mkdirSync(join(root, "node_modules/.cache"), { recursive: true });
  const dir = mkdtempSync(join(root, "node_modules/.cache/ptc-doc-examples-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    example(after) {
      const at = text.indexOf(after);
      expect(at).toBeGreaterThan(0);
      // Up to the fence on a line of its own (an example may hold ``` inside a string).
      const m = /```ts\n([\s\S]*?)^```$/m.exec(text.slice(at));
      expect(m).not.toBeNull();
      return (m as RegExpExecArray)[1].replaceAll('from "ptc-lisp"', `from ${JSON.stringify(join(root, "src/index.ts"))}`);
    },
    async run(name, code) {
      const file = join(dir, `${name}.ts`);
      writeFileSync(file, `${code}\nexport {};\n`);
      const logged: unknown[][] = [];
      let written = "";
      const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void logged.push(args));
      const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((written += String(chunk)), true));
      try {
        await import(file);
      } finally {
        log.mockRestore();
        write.mockRestore();
      }
      return { logged, written };
    },
  };
}
