// `npm run test:diff`: differential testing against Clojure. Generated programs over the subset
// PTC-Lisp shares with Clojure run in ptc-lisp and in nbb (ClojureScript's SCI on Node, a dev
// dependency); their results must agree as data. Each disagreement is a bug to fix or a
// deliberate difference listed in KNOWN below with its reason. Exits 1 on any other.
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { evaluate } from "../../src/lisp/evaluate.js";

interface Nbb {
  loadString(source: string): Promise<unknown>;
}

/**
 * Disagreements that are deliberate, by the substring of the program that causes them. nbb is
 * ClojureScript: numbers are JS doubles there, so integer/float distinctions cannot disagree.
 */
const KNOWN: ReadonlyArray<readonly [string, string]> = [["(/ ", "/ always returns a float in PTC-Lisp (ClojureScript's / on integers may give an integer)"]];

// Integer-valued expressions and vector-valued expressions over the shared subset.
const small = fc.integer({ min: -20, max: 20 });
const vecLit = fc.array(small, { maxLength: 8 }).map((xs) => `[${xs.join(" ")}]`);
const pred = fc.constantFrom("odd?", "even?", "pos?", "neg?", "zero?", "#(> % 3)");
const fn1 = fc.constantFrom("inc", "dec", "-", "#(* % 2)", "#(mod % 5)", "#(quot % 3)");
const count = fc.integer({ min: 0, max: 6 });

const { vexpr } = fc.letrec<{ vexpr: string; iexpr: string }>((tie) => ({
  vexpr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    vecLit,
    fc.tuple(fn1, tie("vexpr")).map(([f, v]) => `(mapv ${f} ${v})`),
    fc.tuple(pred, tie("vexpr")).map(([p, v]) => `(filterv ${p} ${v})`),
    fc.tuple(pred, tie("vexpr")).map(([p, v]) => `(vec (remove ${p} ${v}))`),
    fc.tuple(count, tie("vexpr")).map(([n, v]) => `(vec (take ${n} ${v}))`),
    fc.tuple(count, tie("vexpr")).map(([n, v]) => `(vec (drop ${n} ${v}))`),
    fc.tuple(count, tie("vexpr")).map(([n, v]) => `(vec (take-last ${n} ${v}))`),
    tie("vexpr").map((v) => `(vec (butlast ${v}))`),
    tie("vexpr").map((v) => `(vec (reverse ${v}))`),
    tie("vexpr").map((v) => `(vec (sort ${v}))`),
    tie("vexpr").map((v) => `(vec (distinct ${v}))`),
    tie("vexpr").map((v) => `(vec (dedupe ${v}))`),
    tie("vexpr").map((v) => `(vec (rseq (vec (sort ${v}))))`),
    fc.tuple(tie("vexpr"), tie("vexpr")).map(([a, b]) => `(vec (concat ${a} ${b}))`),
    fc.tuple(tie("iexpr"), tie("vexpr")).map(([x, v]) => `(conj ${v} ${x})`),
    fc.tuple(fn1, pred, tie("vexpr")).map(([f, p, v]) => `(into [] (comp (map ${f}) (filter ${p})) ${v})`),
    fc.tuple(count, tie("vexpr")).map(([n, v]) => `(into [] (comp (take ${n}) (map inc)) ${v})`),
    fc.tuple(fc.integer({ min: 1, max: 3 }), tie("vexpr")).map(([n, v]) => `(into [] (comp (partition-all ${n}) (map #(reduce + %))) ${v})`),
    fc.tuple(tie("vexpr")).map(([v]) => `(into [] (comp (distinct) (interpose 0)) ${v})`),
    tie("vexpr").map((v) => `(vec (keys (into (sorted-map) (map (fn [x] [x (* x x)]) ${v}))))`),
    tie("vexpr").map((v) => `(vec (vals (reduce (fn [m x] (assoc m x 1)) (sorted-map) ${v})))`),
    tie("vexpr").map((v) => `(vec (sort > ${v}))`),
    tie("vexpr").map((v) => `(vec (map-indexed (fn [i x] (+ i x)) ${v}))`),
    tie("vexpr").map((v) => `(vec (for [x ${v} :when (odd? x)] (* x 3)))`),
  ),
  iexpr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    small.map(String),
    tie("vexpr").map((v) => `(count ${v})`),
    tie("vexpr").map((v) => `(reduce + 0 ${v})`),
    tie("vexpr").map((v) => `(transduce (map inc) + 0 ${v})`),
    tie("vexpr").map((v) => `(reduce (fn [a x] (if (> a 10) (reduced a) (+ a x))) 0 ${v})`),
    tie("vexpr").map((v) => `(or (first ${v}) -1)`),
    tie("vexpr").map((v) => `(or (last ${v}) -1)`),
    tie("vexpr").map((v) => `(if (butlast ${v}) 1 0)`),
    tie("vexpr").map((v) => `(if (take-last 1 ${v}) 1 0)`),
    tie("vexpr").map((v) => `(count (frequencies ${v}))`),
    fc.tuple(tie("iexpr"), fc.integer({ min: 1, max: 7 })).map(([x, d]) => `(quot ${x} ${d})`),
    fc.tuple(tie("iexpr"), fc.integer({ min: 1, max: 7 })).map(([x, d]) => `(rem ${x} ${d})`),
    fc.tuple(tie("iexpr"), fc.integer({ min: 1, max: 7 })).map(([x, d]) => `(mod ${x} ${d})`),
    fc.tuple(tie("iexpr"), tie("iexpr")).map(([a, b]) => `(max ${a} ${b})`),
    fc.tuple(tie("iexpr"), tie("iexpr")).map(([a, b]) => `(bit-and ${a} ${b})`),
    fc.tuple(tie("iexpr"), tie("iexpr")).map(([a, b]) => `(bit-xor ${a} ${b})`),
    tie("iexpr").map((x) => `(bit-shift-left ${x} 3)`),
    tie("vexpr").map((v) => `(letfn [(f [xs] (if (seq xs) (+ (first xs) (f (rest xs))) 0))] (f ${v}))`),
    tie("vexpr").map((v) => `(count (with-out-str (run! print ${v})))`),
  ),
}));

const program = fc.oneof(vexpr, vexpr.map((v) => `{:n (count ${v}) :v ${v}}`));

/** nbb's value as plain data: seqs become vectors, then JS data as ptc-lisp's host values are. */
const WRAP = (source: string): string => `(clj->js (clojure.walk/postwalk (fn [x] (if (seq? x) (vec x) x)) (do ${source})))`;

async function main(): Promise<void> {
  const runs = Number(process.env.DIFF_RUNS ?? 400);
  (globalThis as { SCI_DISABLE_JIT?: boolean }).SCI_DISABLE_JIT = true;
  const specifier = "nbb";
  const nbb = (await import(specifier)) as Nbb;
  await nbb.loadString("(require '[clojure.walk])");
  // DIFF_PROGRAM runs one program of your own instead of the generated ones.
  const samples = process.env.DIFF_PROGRAM ? [process.env.DIFF_PROGRAM] : fc.sample(program, { numRuns: runs, seed: Number(process.env.DIFF_SEED ?? 42) });
  let agree = 0;
  let known = 0;
  const disagreements: string[] = [];
  for (const source of samples) {
    const ours = await evaluate(source);
    let theirs: { ok: true; value: unknown } | { ok: false; error: string };
    try {
      theirs = { ok: true, value: JSON.parse(JSON.stringify(await nbb.loadString(WRAP(source))) ?? "null") };
    } catch (e) {
      theirs = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    const same = ours.ok && theirs.ok ? isDeepStrictEqual(JSON.parse(JSON.stringify(ours.value ?? null)), theirs.value) : ours.ok === theirs.ok;
    if (same) {
      agree++;
      continue;
    }
    const reason = KNOWN.find(([needle]) => source.includes(needle));
    if (reason) {
      known++;
      continue;
    }
    const mine = ours.ok ? JSON.stringify(ours.value) : `${ours.error.kind}: ${ours.error.message}`;
    const other = theirs.ok ? JSON.stringify(theirs.value) : `error: ${theirs.error}`;
    disagreements.push(`${source}\n  ptc-lisp: ${mine}\n  nbb:      ${other}`);
  }
  console.log(`differential test against nbb: ${samples.length} generated programs, ${agree} agree, ${known} known differences, ${disagreements.length} unexplained`);
  for (const d of disagreements.slice(0, 20)) console.log(`\n${d}`);
  console.log(`${agree + known} passed, ${disagreements.length} failed`);
  if (disagreements.length > 0) process.exitCode = 1;
}

await main();
