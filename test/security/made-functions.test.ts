// A builtin given a function builds its result from what the function returns. A closure that
// reads a hidden definition it does not close over (`tok`, defined at the top) returns a marked
// value; wrapped by a builtin (comp, partial, juxt, fnil, a transducer) it is no closure itself,
// and a result built by `map` from it must still be searched for the marked value it holds.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { fragments, leaks } from "../support/hidden.js";

const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
const code = (body: string): string => "```clojure\n" + body + "\n```";

const PROGRAMS = [
  '(println (map (comp (fn [x] (str tok "a")) str) [1]))',
  '(println (filter count (map (comp (fn [x] (str (keyword tok))) str) "x")))',
  '(println (map (partial (fn [y x] (str tok "a")) 1) "x"))',
  '(println (map (juxt (fn [x] (str tok "a")) str) [1]))',
  '(println (map (fnil (fn [x] (str tok "a")) 1) [1]))',
  '(println (mapv (comp clojure.string/lower-case (fn [x] tok)) [1 2]))',
  '(println (into [] (comp (map (fn [x] (str tok "a"))) (filter some?)) [1]))',
  '(println (sequence (map (fn [x] (str tok "a"))) [1]))',
  '(def f (comp (fn [x] (str tok "a")) str))\n(println (map f [1]))',
];

describe("a function a builtin made of a closure reading a hidden definition, handed to a builtin", () => {
  it.each(PROGRAMS.flatMap((p) => (["none", "worker"] as const).map((isolation) => [p, isolation] as const)))("%s (isolation %s)", async (program, isolation) => {
    const r = await evaluate(`(def tok (:token data/_creds))\n${program}`, { ctx: { _creds: { token: TOKEN } }, isolation });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const text = showStandIns(r.prints.join("\n"));
    expect(text).toContain("<hidden string derived from data/_creds>");
    expect(leaks(text, fragments([TOKEN])), text).toEqual([]);
  });

  it("defined in one turn and handed to map in a later one, in both views", async () => {
    const programs = ['(def tok (:token data/_creds))\n(def f (comp (fn [x] (str "Bearer " tok)) str))\n(def g (partial (fn [a x] (clojure.string/lower-case tok)) 1))\n(println "ok")', "(println (map f [1 2]) (mapv g [1]))", "(return :done)"];
    for (const compressHistory of [false, true]) {
      for (const isolation of ["none", "worker"] as const) {
        const agent = SubAgent.create({ prompt: "Use the token.", maxTurns: programs.length });
        const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: TOKEN } }, compressHistory, isolation });
        expect(step.ok).toBe(true);
        for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, fragments([TOKEN])), m.content).toEqual([]);
        expect(leaks(JSON.stringify(step.trace), fragments([TOKEN]))).toEqual([]);
        expect(step.trace.turns[1].prints).toEqual(["[<hidden string derived from data/_creds> <hidden string derived from data/_creds>] [<hidden string derived from data/_creds>]"]);
      }
    }
  });
});
