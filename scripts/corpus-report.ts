// Prints the conformance cases that fail, optionally only those whose source contains a word.
// Usage: npx tsx scripts/corpus-report.ts [word] [--all]
import { print } from "../src/lisp/evaluate.js";
import { loadCorpus, runCase } from "../test/support/corpus.js";
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const word = args.find((a) => !a.startsWith("--"));
const skips = JSON.parse(readFileSync(new URL("../test/conformance/skip.json", import.meta.url), "utf8")) as Record<string, string>;
let pass = 0;
let fail = 0;
for (const c of loadCorpus()) {
  if (word && !c.source.includes(word)) continue;
  const out = await runCase(c);
  if (out.pass) {
    pass++;
    continue;
  }
  fail++;
  const got = out.result.ok ? print(out.result.lisp) : `${out.result.error.kind}: ${out.result.error.message}`;
  console.log(`✗ ${c.id}${skips[c.id] ? " (skipped)" : ""}\n  ${c.source.replace(/\n/g, "\n  ")}\n  ${out.detail}\n  got: ${got}\n`);
}
console.log(`${pass} passed, ${fail} failed`);
