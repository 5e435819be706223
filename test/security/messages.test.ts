// An error message quotes the value it was given (`take expects a number ..., got string "..."`),
// escaped as printed data. Computed from hidden context, the quote is a stand-in, whatever short
// pieces of hidden text the program took out too: a piece quoted inside the long quote
// (`"]\"2R5W…7K\"["` ends with `"["`, a character the program took out) must not stop the long
// one from being recognized, nor a hidden piece that starts with its opening quote and ends inside
// it (`"K7Z2Q9-`) keep the rest of it from being hidden.
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { fragments, leaks } from "../support/hidden.js";

const TOKEN = "K7Z2Q9-B3M8X4-W5R2";

const PROGRAMS = [
  // The reversed printed vector ends with `"[`; its last character, `[`, is taken out.
  "(let [s (clojure.string/reverse (pr-str [tok]))] (last s) (take s [1]))",
  "(let [s (clojure.string/reverse (pr-str [tok]))] (first s) (last s) (take s [1]))",
  // A short piece quoted at the start of the long quote, and one in its middle.
  '(let [s (str "\\"a" (clojure.string/lower-case tok))] (subs s 0 2) (take s [1]))',
  '(let [s (str (clojure.string/reverse tok) "\\"ab\\"" (clojure.string/reverse tok))] (subs tok 0 2) (take s [1]))',
  // A hidden piece that starts with the quote before the value and ends inside it (`"K7Z2Q9-`).
  "(let [s (subs (pr-str [tok]) 1 9)] (merge tok {}))",
  "(let [s (subs (pr-str [tok]) 1 9) t (subs tok 5 12)] (merge (str tok tok) {}))",
  // A keyword longer than a message quotes: cut short, still a stand-in.
  "(inc (keyword (str tok tok tok)))",
  // A caught error's message, as the program reads it.
  '(let [s (clojure.string/reverse (pr-str [tok]))] (last s) (println (try (take s [1]) (catch Exception e (ex-message e)))))',
];

describe("an error message quoting a value computed from hidden context", () => {
  it.each(PROGRAMS.flatMap((p) => (["none", "worker"] as const).map((isolation) => [p, isolation] as const)))("%s (isolation %s)", async (program, isolation) => {
    const r = await evaluate(`(def tok (:token data/_creds))\n${program}`, { ctx: { _creds: { token: TOKEN } }, isolation });
    const text = showStandIns([...r.prints, r.ok ? "" : r.error.message].join("\n"));
    expect(text).toContain("<hidden string");
    expect(leaks(text, fragments([TOKEN])), text).toEqual([]);
  });
});
