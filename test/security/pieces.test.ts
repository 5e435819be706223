// The adversary for what value-marking alone misses: a hidden string taken apart into pieces
// too short to be marked by value (its characters, two at a time) and printed or glued back
// together, and hidden values too small to be marked by value (a 3-digit CVV, a PIN of 42)
// taken out of hidden context by every way a program can take a value out of a collection.
// The other way round, a program that only passes hidden context on (to a tool) shows an
// ordinary number that happens to equal a small hidden one.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { fragments } from "../support/hidden.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { resumeRun, saveRun } from "../../src/agent/resume.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

/** Each row's program, run in both isolations over `ctx`, prints the row's text (stand-ins shown). */
function printsInBoth(ctx: Readonly<Record<string, unknown>>, rows: ReadonlyArray<readonly [string, string]>): void {
  it.each(rows)("%s", async (program, shown) => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate(program, { ctx, isolation });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(showStandIns(r.prints.join("\n"))).toBe(shown);
    }
  });
}
const TOKEN = "K7Z2Q9-B3M8X4-W5R2";

// Each prints the token (or a 4+ character run of it) rebuilt from pieces of 1 or 2 characters.
const PIECES = [
  "(doseq [c tok] (print c))",
  "(doseq [c (seq tok)] (print c))",
  "(loop [i 0] (when (< i (count tok)) (print (nth tok i)) (recur (inc i))))",
  "(loop [s tok] (when (seq s) (print (first s)) (recur (rest s))))",
  "(doseq [i (range 0 18 2)] (print (subs tok i (min 18 (+ i 2)))))",
  "(println (str (first tok) (second tok) (nth tok 2) (nth tok 3)))",
  "(print (subs tok 0 2)) (print (subs tok 2 4)) (print (subs tok 4 6)) (println)",
  "(let [[a b c d e] tok] (println (str a b c d e)))",
  "(println (apply str (for [c tok] c)))",
  "(println (reduce (fn [acc c] (str acc c)) \"\" (vec tok)))",
  "(run! print (vec tok))",
  "(doseq [c (.split tok \"\")] (print c))",
  "(doseq [[i c] (map-indexed vector tok)] (print c))",
  "(println (with-out-str (doseq [c tok] (print c))))",
  "(doseq [c (clojure.string/lower-case tok)] (print c))",
  "(doseq [c (reverse tok)] (print c))",
  "(println (.charAt tok 0) (.charAt tok 1) (.charAt tok 2) (.charAt tok 3))",
  // A builtin takes apart the string a function returned.
  "(run! print (mapcat (fn [_] tok) [1]))",
  "(run! print (rest (mapcat (fn [_] tok) [1])))",
  "(run! print (mapcat (fn [a b] tok) [1] [2]))",
  "(run! print (into [] (mapcat (fn [_] tok)) [1]))",
  "(run! print (into [] (comp (map (fn [_] tok)) cat) [1]))",
  "(run! print (sequence (mapcat (fn [_] (subs tok 1))) [1]))",
  "(run! print (rest (tree-seq vector? (fn [_] tok) [1])))",
  // Keywords made of pieces, read back out of the error messages that quote them (`keyword :K7Z`).
  '(doseq [i (range 0 18 3)] (try (count (keyword (subs tok i (+ i 3)))) (catch e (print (last (clojure.string/split (clojure.string/lower-case (ex-message e)) #":"))))))',
  '(doseq [i (range 0 18 2)] (try (+ 1 {(keyword (subs tok i (+ i 2))) 1}) (catch e (print (second (re-find #"\\{:(.*) 1\\}" (clojure.string/lower-case (ex-message e))))))))',
  // Pieces an error message quotes bare (an assert's message) or between backticks (the part of a regex RE2 could not read).
  '(doseq [i (range 0 18 3)] (try (assert false (subs tok i (+ i 3))) (catch e (print (subs (clojure.string/lower-case (ex-message e)) 15)))))',
  '(doseq [i (range 0 18 2)] (try (re-pattern (str "[" (subs tok i (+ i 2)))) (catch e (print (clojure.string/replace (last (clojure.string/split (clojure.string/lower-case (ex-message e)) #"\\]: ")) #"[`\\[]" "")))))',
];

// Each prints a letters-only token rebuilt from single characters that error messages quote
// (lower-cased, so a digit would equal its marked piece): a regex's source as written (`#"\K"`),
// a replacement's group name.
const LETTERS = "KJMHGYLNRT";
const QUOTED = [
  '(doseq [i (range 10)] (try (re-pattern (str "\\\\" (subs tok i (inc i)))) (catch e (print (-> (ex-message e) clojure.string/lower-case (subs 15) (clojure.string/split #": ") first (clojure.string/replace "\\"" "") (clojure.string/replace "\\\\" ""))))))',
  '(doseq [i (range 10)] (try (clojure.string/replace "x" #"x" (str "${" (subs tok i (inc i)) "}")) (catch e (print (clojure.string/replace (last (clojure.string/split (clojure.string/lower-case (ex-message e)) #"named ")) "\\"" "")))))',
];

describe("pieces of a hidden string stay hidden", () => {
  it.each(QUOTED)("%s", async (program) => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n${program}`, { ctx: { _creds: { crm: { token: LETTERS } } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([LETTERS])) expect(out, out).not.toContain(f);
    expect(out).toContain("<hidden string");
  });

  it.each(PIECES)("%s", async (program) => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n${program}`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out).toContain("<hidden string");
  });

  it("pieces kept in memory stay hidden on later turns, in both views", async () => {
    for (const compressHistory of [false, true]) {
      const programs = ['(def tok (:token data/_creds))\n(def head (subs tok 0 2))\n(def cs (mapv str tok))\n(def c0 (first tok))\n(println "ok")', '(println (str head (subs tok 2 4)) c0 (first cs) (str (nth cs 4) (nth cs 5)))', "(return :done)"];
      const agent = SubAgent.create({ prompt: "Find it.", maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: TOKEN } }, compressHistory });
      expect(step.ok).toBe(true);
      const text = step.messages.flat().map((m) => m.content).join("\n");
      for (const f of fragments([TOKEN])) expect(text).not.toContain(f);
      expect(text).not.toMatch(/\bK7\b|\bQ9\b/);
      expect(JSON.stringify(step.trace)).not.toContain("K7Z2");
    }
  });

  it("public text cut at hidden characters, kept to a later turn, keeps its lengths hidden", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const programs = ['(def alpha "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-")\n(def ps (mapv (fn [c] (first (clojure.string/split alpha c))) (:token data/_creds)))', '(doseq [p ps] (print (count p) ""))', "(return :done)"];
      const agent = SubAgent.create({ prompt: "Find it.", maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: TOKEN } }, isolation });
      expect(step.ok).toBe(true);
      const printed = showStandIns(step.trace.turns[1].prints.join(""));
      expect(printed, printed).not.toMatch(/\d/);
      expect(printed).toContain("<hidden integer derived from data/_creds>");
    }
    // Saved after the first turn and resumed: the mark is in the saved state.
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Find it.", maxTurns });
    const first = await SubAgent.run(make(1), { llm: scriptedLlm([code('(def alpha "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-")\n(def ps (mapv (fn [c] (first (clojure.string/split alpha c))) (:token data/_creds)))')]), context: { _creds: { token: TOKEN } } });
    const state = runStateFromJson(runStateToJson(saveRun(first, make(1))));
    expect(state.memory.find((d) => d.name === "ps")?.hidden).toMatchObject({ cut: true });
    const live = scriptedLlm([code('(doseq [p ps] (print (count p) ""))'), code("(return :done)")]);
    const step = await resumeRun(make(3), state, { llm: live, context: { _creds: { token: TOKEN } } });
    const printed = showStandIns(step.trace.turns.at(-2)?.prints.join("") ?? "");
    expect(printed, printed).not.toMatch(/\d/);
    expect(printed).toContain("<hidden integer derived from data/_creds>");
  });

  it("a program that takes no piece of a hidden string shows short strings as they are", async () => {
    const r = await evaluate('(def tok (:token data/_creds))\n(println (clojure.string/join "-" ["a" "b"]) (str "K" 7) (count tok))', { ctx: { _creds: { token: TOKEN } }, isolation: "none" });
    expect(r.ok).toBe(true);
    expect(r.prints).toEqual(["a-b K7 18"]);
  });
});

const charged: Array<Record<string, unknown>> = [];
const charge = tool({
  description: "Charges a card.",
  input: z.object({ card: z.unknown(), amount: z.number() }),
  run: async (args) => {
    charged.push(args);
    return { ok: true };
  },
});

// Each takes the CVV (123), the PIN (42) or the 2-character code ("Q7") out of hidden context.
const SMALL = [
  "(println (:cvv data/_card))",
  "(println (get data/_card :pin))",
  "(println (data/_card :code))",
  "(println (get-in data/_wallet [:card :cvv]))",
  "(println (:cvv (:card data/_wallet)))",
  "(let [{:keys [cvv pin]} data/_card] (println cvv pin))",
  "(let [{cvv :cvv} data/_card] (println (str \"cvv=\" cvv)))",
  "(doseq [[k v] data/_card] (println k v))",
  "(run! println (vals data/_card))",
  "(doseq [v (vals data/_card)] (println v))",
  "(println (first (vals data/_card)))",
  "(println (map :cvv [data/_card]))",
  "(println (mapv (fn [[k v]] v) data/_card))",
  "(defn cvv-of [c] (:cvv c))\n(println (cvv-of data/_card))",
  "(println (+ 0 (:cvv data/_card)) (inc (:pin data/_card)))",
  "(println (select-keys data/_card [:cvv]))",
  "(println (str (:code data/_card)))",
  "(println data/_pin)",
  "(println (str \"pin \" data/_pin))",
  "(println (parse-long (subs data/_code 0 2)) (Integer/parseInt (subs data/_code 2)))",
  "(println (extract-int #\"(\\d\\d)\" data/_code))",
];

// Each prints what a table holds under a key taken from the token (a character, a keyword made
// of one, a digit read from one): the words it prints spell the token as surely as its characters.
const WORDS = '(def words (mapv #(str "word" %) (range 40)))\n(def alpha (map str "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"))\n(def t (zipmap alpha words))\n(def kt (zipmap (map keyword alpha) words))';
const LOOKUPS = [
  "(doseq [c tok] (print (t c)))",
  "(doseq [c tok] (print ({\"K\" \"word10\" \"7\" \"word33\"} c)))",
  "(println (loop [i 0 acc []] (if (< i (count tok)) (recur (inc i) (conj acc (t (nth tok i)))) acc)))",
  "(doseq [c tok] (print (kt (keyword c))))",
  "(doseq [c tok] (print ((keyword c) kt)))",
  "(doseq [c tok] (print (get kt (keyword c))))",
  "(doseq [c tok] (when-let [d (parse-long c)] (print (words d))))",
  "(doseq [c tok] (when-let [d (parse-long c)] (print (nth words d))))",
  "(doseq [c tok] (when-let [d (parse-long c)] (print (get words d))))",
  "(println (mapv #(get-in {:k kt} [:k (keyword %)]) (vec tok)))",
  // A case of constants is a table looked up by its test value.
  '(doseq [c tok] (print (case c "K" "word10" "7" "word33" "Z" "word25" "word99")))',
  '(doseq [c tok] (print (case (keyword c) :K "word10" :7 "word33" "word99")))',
];

describe("a value looked up by a key taken from a hidden string is hidden", () => {
  it.each(LOOKUPS)("%s", async (program) => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n${WORDS}\n${program}`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    expect(out).not.toMatch(/word\d/);
    expect(out).toContain("<hidden string");
  });

  it("a case of constants chosen by a hidden character, in a program that may call a tool", async () => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n(doseq [c tok] (print (case ((fn [x] x) c) "K" "word10" "7" "word33" "Z" "word25" "word99")))\n(tool/echo {})`, {
      ctx: { _creds: { crm: { token: TOKEN } } },
      tools: { echo: () => ({}) },
      isolation: "none",
    });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    expect(out).not.toMatch(/word\d/);
    expect(out).toContain("<hidden string");
  });

  // A position of a hidden piece in public text is the piece: (nth alpha i) spells it back.
  it.each([
    '(doseq [c tok] (print (.indexOf alpha c) ""))',
    '(doseq [c tok] (print (clojure.string/index-of alpha c) ""))',
    '(doseq [c tok] (print (clojure.string/last-index-of alpha c) ""))',
    '(doseq [c tok] (print (.lastIndexOf alpha c) ""))',
  ])("where a hidden character is in public text: %s", async (program) => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n(def alpha "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")\n${program}`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    // 0 and 1 are never marked (docs/history.md): the token's B, at 1, shows.
    expect(out, out).not.toMatch(/\b([2-9]|\d\d)\b/);
    expect(out).toContain("<hidden integer");
  });

  // The entry a hidden key finds: its value was chosen by the key, as a lookup's is.
  it.each([
    "(doseq [c tok] (print (val (find n c)) \"\"))",
    "(doseq [c tok] (print (second (find n c)) \"\"))",
    "(doseq [c tok] (let [[_ v] (find n c)] (print v \"\")))",
    "(doseq [c tok] (when-let [d (parse-long c)] (print (second (find (vec (range 10 20)) d)) \"\")))",
  ])("the value of an entry a hidden key finds: %s", async (program) => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n(def n (zipmap (map str "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") (range 40)))\n${program}`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    // 0 and 1 are never marked (docs/history.md): the token's B, at 1, shows.
    expect(out, out).not.toMatch(/\b([2-9]|\d\d)\b/);
    expect(out).toContain("<hidden integer");
  });

  // A cut of public numbers that a digit of the token placed: its first value is the digit plus 10.
  it.each([
    "(print (first (drop d s)) \"\")",
    "(print (first (subvec s d)) \"\")",
    "(print (last (take (inc d) s)) \"\")",
    "(print (get (vec (drop d s)) 0) \"\")",
    "(let [[x] (drop d s)] (print x \"\"))",
    "(doseq [x (take 1 (drop d s))] (print x \"\"))",
  ])("a small value taken out of a collection a hidden number cut: %s", async (program) => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n(def s (vec (range 10 50)))\n(doseq [c tok] (when-let [d (parse-long c)] ${program}))`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    expect(out, out).not.toMatch(/\d/);
    expect(out).toContain("<hidden integer");
  });

  it("where public text is in a hidden string stays shown (a position, as a count is)", async () => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n(println (clojure.string/index-of tok "-") (.lastIndexOf tok "-") (count tok))`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok && showStandIns(r.prints.join("\n"))).toBe("6 13 18");
  });

  it("a key not taken from hidden context looks up a value shown as it is", async () => {
    const r = await evaluate(`(def tok (get-in data/_creds [:crm :token]))\n${WORDS}\n(println (count tok) (t "K") (kt :K) (words 7) (:K kt))`, { ctx: { _creds: { crm: { token: TOKEN } } }, isolation: "none" });
    expect(r.ok && showStandIns(r.prints.join("\n"))).toBe("18 word10 word10 word7 word10");
  });
});

describe("small hidden values stay hidden once taken out", () => {
  it("a digit of a hidden string read as a replacement's group number", async () => {
    const program = '(doseq [i (range 4)] (try (clojure.string/replace "x" #"x" (str "$" (subs data/_code i (inc i)))) (catch e (print (ex-message e)))))';
    const r = await evaluate(program, { ctx: { _code: "9876" }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    expect(out, out).not.toMatch(/[6-9]/);
    expect(out).toContain("the regex has no group <hidden string derived from data/_code> (it has 0)");
  });

  it.each(SMALL)("%s", async (program) => {
    const card = { cvv: 123, pin: 42, code: "Q7" };
    const r = await evaluate(program, { ctx: { _card: card, _wallet: { card }, _pin: 42, _code: "4243" }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    expect(out, out).not.toMatch(/\b123\b|\b42\b|\b43\b|Q7/);
    expect(out).toContain("<hidden");
  });

  it("a small value taken out and kept stays hidden on later turns, and the tool still gets it", async () => {
    charged.length = 0;
    const programs = ['(def cvv (:cvv data/_card))\n(println "kept")', '(println cvv)\n(tool/charge {:card {:cvv cvv} :amount 5})', "(return :done)"];
    const agent = SubAgent.create({ prompt: "Pay.", tools: { charge }, maxTurns: programs.length });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _card: { cvv: 123 } }, compressHistory: true });
    expect(step.ok).toBe(true);
    const text = step.messages.flat().map((m) => m.content).join("\n");
    expect(text).not.toMatch(/\b123\b/);
    expect(text).toContain("<hidden integer");
    expect(charged).toEqual([{ card: { cvv: 123 }, amount: 5 }]);
  });

  it("passing hidden context to a tool leaves an equal ordinary number shown", async () => {
    charged.length = 0;
    const r = await evaluate("(def rows [1 2 3])\n(tool/charge {:card data/_card :amount 5})\n(println (count rows) \"rows\" 42)", {
      ctx: { _card: { cvv: 123, retries: 3, pin: 42 } },
      tools: { charge: (args: unknown) => (charged.push(args as Record<string, unknown>), { ok: true }) },
      isolation: "none",
    });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.prints).toEqual(["3 rows 42"]);
    expect(charged).toEqual([{ card: { cvv: 123, retries: 3, pin: 42 }, amount: 5 }]);
  });
});

describe("an error quoting a piece of a hidden string", () => {
  it("shows the piece as a stand-in", async () => {
    const r = await evaluate("(def tok (:token data/_creds))\n(+ 1 (nth tok 2))", { ctx: { _creds: { token: TOKEN } }, isolation: "none" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(showStandIns(r.error.message)).toContain("<hidden string derived from data/_creds>");
    expect(r.error.message).not.toContain('"Z"');
  });
});

// Error messages the interpreter writes quote values: caught by the program or ending it, a
// hidden one shows as a stand-in however it is quoted (escaped, cut short, 3 characters, a
// small number).
describe("errors quoting hidden values", () => {
  const ctx = { _creds: { token: TOKEN, cvv: 123, rate: 3.75 }, _s: { q: 'Pa"ssW0rd!Secret', n: "BEGIN-KEY\nM5Q8-Z3X7-W2R9\nEND-KEY" }, _pin: 42 };
  const secrets = [TOKEN, 'Pa"ssW0rd!Secret', "M5Q8-Z3X7-W2R9", 'Pa\\"ssW0rd'];
  it.each([
    "(def tok (:token data/_creds))\n(try (+ tok 1) (catch e (println (ex-message e) (:message e) (str e))))",
    "(def tok (:token data/_creds))\n(try (tok 1) (catch e (println (.getMessage e))))",
    "(def tok (:token data/_creds))\n(println (try (assoc tok 1 2) (catch e (ex-message e))))",
    "(+ (:q data/_s) 1)",
    "(throw [(:n data/_s)])",
    "(def tok (:token data/_creds))\n(throw (mapv #(apply str %) (partition-all 3 tok)))",
    '(def tok (:token data/_creds))\n(+ [(clojure.string/lower-case (str "sk_live_" tok "_" tok))] 1)',
    "(def tok (:token data/_creds))\n(+ (subs tok 0 3) 1)",
    "(nth [1 2] (:cvv data/_creds))",
    "(nth [] data/_pin)",
    "(nth [] (* (:rate data/_creds) 1000))",
    "(nth [] (/ data/_pin 2))",
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx, isolation: "none" });
    const text = showStandIns(r.ok ? r.prints.join("\n") : `${r.error.message}\n${r.error.hint ?? ""}`);
    for (const f of fragments(secrets)) expect(text, text).not.toContain(f);
    expect(text, text).not.toMatch(/\b123\b|\b42\b|"K7Z"|\b3750\b|\b21\b/);
    expect(text).toContain("<hidden");
  });
});

// Printed data escapes a DEL character as \u007f, which JSON leaves as it is: a message quoting a
// collection that holds such a hidden string is searched for that form too.
describe.each(["none", "worker"] as const)("errors quoting a hidden string as printed data escapes it (isolation %s)", (isolation) => {
  const D = "Ab3Xz9Qw\u007fRt5Yp2Lm";
  it.each(["(+ [data/_d] 1)", "(throw [data/_d])", "(println (try (+ {:a data/_d} 1) (catch e (ex-message e))))"])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _d: D }, isolation });
    const text = showStandIns(r.ok ? r.prints.join("\n") : r.error.message);
    for (const f of fragments(["Ab3Xz9Qw", "Rt5Yp2Lm"])) expect(text, text).not.toContain(f);
    expect(text).toContain("<hidden");
  });

  // A regex prints its source with only its quotes escaped: #"\"apikey_Qz7\":\s*\"(\w+)\"".
  it.each(["(+ [(re-pattern data/_rx)] 1)", "(throw [(re-pattern data/_rx)])", "(println (try (+ {:a (re-pattern data/_rx)} 1) (catch e (ex-message e))))"])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _rx: '"apikey_Qz7":\\s*"(\\w+)"' }, isolation });
    const text = showStandIns(r.ok ? r.prints.join("\n") : r.error.message);
    for (const f of fragments(["apikey_Qz7"])) expect(text, text).not.toContain(f);
    expect(text).toContain("<hidden");
  });
});

// A large or tiny float prints with an exponent (1.5E300, 1.0E21, 5.0E-7: not JS's text, 5e-7):
// a message quoting one shows a stand-in.
describe.each(["none", "worker"] as const)("errors quoting a hidden float written with an exponent (isolation %s)", (isolation) => {
  it.each(["(inc [data/_big])", "(throw [data/_e21])", "(println (try (inc {:a data/_big}) (catch e (ex-message e))))", "(inc [data/_tiny])", "(throw {:t data/_tiny})", "(inc [data/_small])"])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _big: 1.5e300, _e21: 1e21, _tiny: 5e-7, _small: 0.00012 }, isolation });
    const text = showStandIns(r.ok ? r.prints.join("\n") : r.error.message);
    expect(text, text).not.toMatch(/\d[eE]\+?(300|21)|\d[eE]-[47]/);
    expect(text).toContain("<hidden");
  });
});

// An index or count rounded from a hidden float is computed from it: an error quoting it shows a stand-in.
describe.each(["none", "worker"] as const)("errors quoting an index rounded from a hidden number (isolation %s)", (isolation) => {
  it.each(["(nth [] (/ data/_cvv 2))", "(subvec [1] 0 (/ data/_cvv 2))", "(subvec [1] 0 (- data/_cvv 62))", "([] (double (/ data/_cvv 2)))", "(println (try (nth \"ab\" (* data/_cvv 0.5)) (catch e (ex-message e))))"])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _cvv: 123 }, isolation });
    const text = showStandIns(r.ok ? r.prints.join("\n") : r.error.message);
    // 123 / 2 = 61.5, read as index 61.
    expect(text, text).not.toMatch(/\b61\b/);
    expect(text).toContain("<hidden");
  });
});

// A regex or format error quotes the part of its pattern it could not read (RE2's "missing
// closing ]: `[mQ8sLd2`", "unsupported directive \"%-08.3Zp\""): a part of a hidden pattern is as
// hidden as the pattern, in the worker too.
describe.each(["none", "worker"] as const)("errors quoting a part of a hidden pattern (isolation %s)", (isolation) => {
  const ctx = { _p: { re: "Hv4Y[mQ8sLd2", named: "Jn5T(?P<Ux7w-Rq>b", fmt: "Gc3R %-08.3Zp4Rm", flag: "Lp2W %(08.3dTy", pos: "Mz4Q %12$sKv" } };
  it.each([
    "(re-pattern (:re data/_p))",
    '(re-find (:re data/_p) "abc")',
    '(clojure.string/split "abc" (re-pattern (str "x" (:named data/_p))))',
    "(format (:fmt data/_p) 1)",
    '(println (try (format (str (:fmt data/_p) "%(d") 1) (catch e (ex-message e))))',
    "(format (:flag data/_p) 1)",
    "(format (:pos data/_p) 1)",
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx, isolation });
    const text = showStandIns(r.ok ? r.prints.join("\n") : `${r.error.message}\n${r.error.hint ?? ""}`);
    for (const f of fragments(Object.values(ctx._p))) expect(text, text).not.toContain(f);
    expect(text).toContain("<hidden");
  });
});

// A format directive built from a piece of a hidden string is short ("%Z", "%.48d"): a refusal
// that quotes it, or the precision it read from it, bare would show the piece in clear, and a
// loop over the string would spell it out one refusal at a time.
// So is a short regex built from a piece of a hidden string: the error quotes it (#"\Z") and
// the part RE2 could not read ("\Z", "[Z", "(?Z") with a backslash or in RE2's backticks.
describe.each(["none", "worker"] as const)("regex errors quoting a short piece of a hidden string (isolation %s)", (isolation) => {
  it.each([
    '(doseq [i (range 6)] (println (try (re-pattern (str "\\\\" (subs (:tok data/_p) i (inc i)))) (catch e (ex-message e)))))',
    '(doseq [i (range 6)] (println (try (re-pattern (str "[" (subs (:tok data/_p) i (inc i)))) (catch e (ex-message e)))))',
    '(doseq [i (range 6)] (println (try (re-find (str "(?" (subs (:tok data/_p) i (inc i)) ")") "") (catch e (ex-message e)))))',
    '(doseq [i (range 0 6 2)] (println (try (re-pattern (str "\\\\" (subs (:tok data/_p) i (+ i 2)))) (catch e (ex-message e)))))',
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _p: { tok: "KZQBMW" } }, isolation });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const text = showStandIns(r.prints.join("\n"));
    expect(text, text).not.toMatch(/(\\|\[|\(\?)[KZQBMW]/);
    expect(text).toContain("<hidden");
  });
});

// An error describes a keyword by its name (keyword :KZ): one made of a short piece of a hidden string is hidden too.
describe.each(["none", "worker"] as const)("errors describing a keyword made of a short piece of a hidden string (isolation %s)", (isolation) => {
  it.each([
    '(doseq [i (range 0 6 2)] (println (try (inc (keyword (subs (:tok data/_p) i (+ i 2)))) (catch e (ex-message e)))))',
    '(doseq [i (range 6)] (println (try (re-find #"a" (keyword (subs (:tok data/_p) i (inc i)))) (catch e (ex-message e)))))',
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _p: { tok: "KZQBMW" } }, isolation });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const text = showStandIns(r.prints.join("\n"));
    expect(text, text).not.toMatch(/:[KZQBMW]/);
    expect(text).toContain("<hidden");
  });
});

// And a replacement string's group, named or numbered, read from a hidden one.
describe.each(["none", "worker"] as const)("replacement errors quoting a group read from a hidden string (isolation %s)", (isolation) => {
  it.each([
    '(println (try (clojure.string/replace "a" #"a" (str "${" (subs (:tok data/_p) 0 3) "}")) (catch e (ex-message e))))',
    '(println (try (clojure.string/replace "a" #"(?<x>a)" (str "x${" (subs (:tok data/_p) 1 3) "}")) (catch e (ex-message e))))',
    '(println (try (clojure.string/replace-first "a" #"a" (str "$" (subs (str (:pin data/_p)) 0 1))) (catch e (ex-message e))))',
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _p: { tok: "KZQBMW", pin: 4821 } }, isolation });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const text = showStandIns(r.prints.join("\n"));
    expect(text, text).not.toMatch(/KZQ|ZQ|group 4/);
    expect(text).toContain("<hidden");
  });
});

describe.each(["none", "worker"] as const)("format refusals quoting a short piece of a hidden string (isolation %s)", (isolation) => {
  it.each([
    '(doseq [i (range 6)] (println (try (format (str "%" (subs (:tok data/_p) i (inc i))) 1) (catch e (ex-message e)))))',
    '(doseq [i (range 6)] (println (try (format (str "%-" (subs (:tok data/_p) i (inc i))) 1) (catch e (ex-message e)))))',
    '(println (try (format (str "%." (subs (str (:pin data/_p)) 0 2) "d") 1) (catch e (ex-message e))))',
    '(println (try (format (str "%." (subs (str (:pin data/_p)) 1 3) "x") 1) (catch e (ex-message e))))',
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx: { _p: { tok: "KZQBMW", pin: 4821 } }, isolation });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const text = showStandIns(r.prints.join("\n"));
    expect(text, text).not.toMatch(/%-?[KZQBMW]|\.48|\.82/);
    expect(text).toContain("<hidden");
  });
});

// Values computed from hidden ones by way of other types: text of a hidden number, a number
// through a float, characters joined back from a collection, a sum, nesting deeper than is
// searched; and the same kept to a later turn.
describe("small values computed from hidden ones", () => {
  const ctx = { _creds: { token: TOKEN, cvv: 123, pin: 42, acct: 98765432 }, _pin: 42 };
  const SMALL_VALUES = /\b(42|43|123|124|58|32|84|165|7b)\b/;
  it.each([
    "(def tok (:token data/_creds))\n(doseq [i (range 0 18 2)] (print (clojure.string/join (take 2 (drop i tok)))))",
    '(def tok (:token data/_creds))\n(doseq [p (partition-all 2 tok)] (print (clojure.string/join "" p)))',
    '(println (str data/_pin) (format "%d" data/_pin) (pr-str data/_pin))',
    '(println (format "%x" (:cvv data/_creds)))',
    "(println (str (- 100 (:pin data/_creds))) (str (mod (:acct data/_creds) 100)))",
    "(println (int (+ (double (:cvv data/_creds)) 1)) (long (* 2.0 (:pin data/_creds))))",
    "(println (sum [(:pin data/_creds) (:cvv data/_creds)]))",
    "(def tok (:token data/_creds))\n(def deep (loop [i 0 v tok] (if (< i 70) (recur (inc i) [v]) v)))\n(println deep)\n(println (flatten deep))",
    "(def tok (:token data/_creds))\n(doseq [x (map (fn [c] [[[[[[[[[[c]]]]]]]]]]) tok)] (print (first (flatten x))))",
  ])("%s", async (program) => {
    const r = await evaluate(program, { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out, out).not.toMatch(SMALL_VALUES);
    expect(out).toContain("<hidden");
  });

  it.each([
    '(doseq [d (map #(parse-long (str %)) (str (:acct data/_creds)))] (print d ""))',
    "(def ds (mapv #(parse-long (str %)) (str (:acct data/_creds))))\n(println (nth ds 0) (nth ds 1) (nth ds 2) (nth ds 3) (nth ds 4) (nth ds 5) (nth ds 6))",
    "(def tok (:token data/_creds))\n(println (try (mapv #(+ % 1) tok) (catch e (ex-message e))))",
  ])("characters a builtin hands to a function, and what it reads from them: %s", async (program) => {
    const r = await evaluate(program, { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    // Digits of the account number (98765432) or of the token (7 2 9 3 8 4 5 2), one at a time, or its first character.
    expect(out, out).not.toMatch(/\b[2-9]\b|"K"/);
    expect(out).toContain("<hidden");
  });

  // The builtin, not the program, combines what the function returned: nothing the builtin was given holds a mark.
  it.each(["none", "worker"] as const)("what a builtin computes from a function's hidden results (isolation %s)", async (isolation) => {
    const programs = [
      '(println (clojure.string/replace "ab" #"b" (fn [_] (:token data/_creds))))',
      '(println (clojure.string/replace-first "ab" #"b" (fn [_] (subs (:token data/_creds) 2))))',
      "(println (sum-by (fn [_] (:acct data/_creds)) [1 2]) (avg-by (fn [_] (:acct data/_creds)) [1 2]))",
      "(println (sum-by (fn [x] (* x (:cvv data/_creds))) [1]) (avg-by (fn [_] (:pin data/_creds)) [1 2]))",
      '(println (clojure.string/replace "abc" "b" (fn [_] (:token data/_creds))) (clojure.string/replace-first "abc" "b" (fn [_] (:token data/_creds))))',
      '(println (clojure.string/replace "abc" "" (fn [_] (:token data/_creds))))',
      '(println (clojure.string/escape "abc" (fn [c] (when (= c \\b) (:token data/_creds)))))',
      // An order computed from the keys a function read: which position sorts first spells the token.
      "(println (sort-by (fn [i] (nth (:token data/_creds) i)) (range 18)))",
      "(println (sort-by (fn [i] (nth (:token data/_creds) i)) compare (range 18)))",
    ];
    for (const program of programs) {
      const r = await evaluate(program, { ctx, isolation });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      const out = showStandIns(r.prints.join("\n"));
      for (const f of fragments([TOKEN, "98765432", "197530864"])) expect(out, out).not.toContain(f);
      expect(out, out).not.toMatch(SMALL_VALUES);
      expect(out, out).not.toMatch(/\d/);
    }
  });

  // Where public values sit in a sorted collection was computed from its hidden keys: 113 117 108 ... spells the token's order.
  it.each([
    "(println (into (sorted-map) (for [i (range 18)] [(nth (:token data/_creds) i) (+ 100 i)])))",
    "(doseq [[k v] (into (sorted-map) (map (fn [i] [(nth (:token data/_creds) i) (+ 100 i)]) (range 18)))] (print v \"\"))",
    "(println (for [[k v] (reduce (fn [m i] (assoc m (nth (:token data/_creds) i) (+ 100 i))) (sorted-map) (range 18))] v))",
    "(println (reduce (fn [s i] (conj s [(nth (:token data/_creds) i) (+ 100 i)])) (sorted-set) (range 18)))",
  ])("a sorted collection ordered by hidden keys: %s", async (program) => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate(program, { ctx, isolation });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      const out = showStandIns(r.prints.join("\n"));
      expect(out, out).not.toMatch(/\b1\d\d\b/);
      expect(out).toContain("<hidden");
    }
  });

  it("counts stay shown", async () => {
    const r = await evaluate("(def rows [1 2 3])\n(println (count rows) (count data/_creds) (count (:token data/_creds)))", { ctx, isolation: "none" });
    expect(r.ok && r.prints).toEqual(["3 4 18"]);
  });

  it.each([
    '(def req (assoc {:region "eu-west-1" :page 2} :token (:token data/_creds)))',
    '(def req (merge {:region "eu-west-1" :page 2} {:token (:token data/_creds)}))',
    '(def req (conj {:region "eu-west-1" :page 2} [:token (:token data/_creds)]))',
    '(def req (assoc-in {:region "eu-west-1" :page 2} [:auth :token] (:token data/_creds)))',
    '(def req (select-keys (assoc {:region "eu-west-1" :page 2} :token (:token data/_creds)) [:region :page :token]))',
    '(def req (dissoc (hash-map :region "eu-west-1" :page 2 :token (:token data/_creds) :x 1) :x))',
    '(def req (conj ["eu-west-1" 2] (:token data/_creds)))',
    '(def req (update {:region "eu-west-1" :page 2 :token "x"} :token (constantly (:token data/_creds))))',
    '(def req (update-in {:region "eu-west-1" :page 2 :auth {:token "x"}} [:auth :token] (constantly (:token data/_creds))))',
    '(def req (into {:region "eu-west-1" :page 2} [[:token (:token data/_creds)]]))',
    '(def req (into {:region "eu-west-1" :page 2} {:token (:token data/_creds)}))',
    '(def req (into ["eu-west-1" 2] [(:token data/_creds)]))',
    '(def req (zipmap [:region :page :token] ["eu-west-1" 2 (:token data/_creds)]))',
    '(def req (array-map :region "eu-west-1" :page 2 :token (:token data/_creds)))',
    '(def req (sorted-map :region "eu-west-1" :page 2 :token (:token data/_creds)))',
  ])("a collection built around a hidden value hides it, not its public neighbours: %s", async (program) => {
    const r = await evaluate(`${program}\n(println req)\n(println (get req :region (first req)) (get req :page (second req)) "eu-west-1")`, { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out).toContain("<hidden string from data/_creds :token>");
    expect(out.split("\n")[1]).toBe("eu-west-1 2 eu-west-1");
    expect(out).not.toContain("derived");
  });

  // A hidden collection held as one value, as in a literal {:creds data/_creds}: before, its public
  // neighbours were derived from it, and with them every equal constant of the evaluation.
  it.each([
    '(def req (assoc {:region "eu-west-1" :page 2} :creds data/_creds))',
    '(def req (assoc-in {:region "eu-west-1" :page 2} [:auth :creds] data/_creds))',
    '(def req (hash-map :region "eu-west-1" :page 2 :creds data/_creds))',
    '(def req (array-map :region "eu-west-1" :page 2 :creds data/_creds))',
    '(def req (sorted-map :region "eu-west-1" :page 2 :creds data/_creds))',
    '(def req (conj ["eu-west-1" 2] data/_creds))',
    '(def req (vector "eu-west-1" 2 data/_creds))',
    '(def req (conj #{"eu-west-1" 2} data/_creds))',
    '(def req (assoc ["eu-west-1" 2 0] 2 data/_creds))',
  ])("a collection holding a hidden collection as one value hides it, not its public neighbours: %s", async (program) => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate(`${program}\n(println req)\n(println (get req :region (first req)) (get req :page (second req)) "eu-west-1")`, { ctx, isolation });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      const out = showStandIns(r.prints.join("\n"));
      for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
      expect(out).toContain("<hidden string from data/_creds :token>");
      expect(out.split("\n")[1]).toBe("eu-west-1 2 eu-west-1");
      expect(out).not.toContain("derived");
    }
  });

  it.each([
    ['(throw (ex-info "customer not found" {:token (:token data/_creds) :page 2}))', "customer not found"],
    ['(try (throw (ex-info "customer not found" {:token (:token data/_creds)})) (catch e (println (ex-message e) (ex-data e))))', "customer not found {:token <hidden string from data/_creds :token>}"],
    ['(try (throw (ex-info "customer not found" {:token (:token data/_creds)})) (catch e (println (:message e) (.getMessage e))))', "customer not found customer not found"],
    ['(println (ex-message (ex-info "customer not found" {:token (:token data/_creds)})) (ex-info "customer not found" {:token (:token data/_creds)}))', "customer not found {:message \"customer not found\" :data {:token <hidden string from data/_creds :token>}}"],
    ['(try (throw (Exception. "customer not found" (ex-info "cause" {:t (:token data/_creds)}))) (catch e (println (ex-message e))))', "customer not found"],
  ])("an error carrying a hidden value in its data keeps its own message shown: %s", async (program, shown) => {
    const r = await evaluate(program, { ctx, isolation: "none" });
    const out = showStandIns(r.ok ? r.prints.join("\n") : r.error.message);
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out).toBe(shown);
  });

  it("an error's message computed from a hidden value, or data that is a hidden collection, stays hidden", async () => {
    const r = await evaluate('(try (throw (ex-info (str "bad " (:token data/_creds)) {})) (catch e (println (ex-message e))))\n(println (ex-message (ex-info "plain" data/_creds)))', { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.ok && r.prints.map(showStandIns)).toEqual(["<hidden string derived from data/_creds>", "<hidden string derived from data/_creds>"]);
  });

  it("a value update computes from a hidden one is hidden, its neighbours not; a hidden string taken apart by into or zipmap stays hidden", async () => {
    const program = [
      '(def req (update {:region "eu-west-1" :page 2 :token "x"} :token str (:token data/_creds)))',
      '(println req (:region req) "eu-west-1")',
      "(println (into [] (:token data/_creds)) (into #{} (:token data/_creds)) (zipmap (:token data/_creds) (range 18)) (zipmap (range 18) (:token data/_creds)))",
      "(println (apply str (into [] (map identity) (:token data/_creds))))",
      '(def d (parse-long (subs (:token data/_creds) 1 2)))',
      '(println (first (into [] (drop d) ["alpha" "beta" "gamma" "delta" "epsilon" "zeta" "eta" "theta" "iota"])) (first (into [] (comp (map inc) (drop d)) (range 1000 1050))))',
    ].join("\n");
    const r = await evaluate(program, { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out.split("\n")[0]).toBe('{:region "eu-west-1" :page 2 :token <hidden string derived from data/_creds>} eu-west-1 eu-west-1');
    expect(out.split("\n")[3]).toBe("<hidden string derived from data/_creds> <hidden integer derived from data/_creds>");
  });

  it("a collection built from a hidden collection's entries stays hidden whole (its flags and nils have no mark of their own)", async () => {
    const r = await evaluate('(println (merge {:region "eu"} data/_flags) (conj {:region "eu"} data/_flags) (into {:region "eu"} data/_flags) (merge {{:a 1} data/_flags} {:a 1} data/_flags))', { ctx: { _flags: { beta: true, z: null } }, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    expect(out, out).not.toMatch(/:beta true|:z nil/);
    expect(out.match(/:beta <hidden boolean/g)).toHaveLength(5);
  });

  it.each([
    "(count (first (clojure.string/split alpha c)))",
    "(count (first (.split alpha c)))",
    "(count (first (re-split (re-pattern c) alpha)))",
    '(count (clojure.string/replace alpha (re-pattern (str c ".*")) ""))',
    '(count (first (clojure.string/split (clojure.string/replace-first alpha c "|") #"[|]")))',
    '(count (re-find (re-pattern (str ".*" c)) alpha))',
    '(count (first (re-seq (re-pattern (str ".*" c)) alpha)))',
    '(count (second (re-matches (re-pattern (str "(.*)" c ".*")) alpha)))',
    '(count (extract (str "(.*)" c) alpha))',
    // A sorted collection of public text's characters, cut at a hidden one. Padded at both ends,
    // so no count is 0 or 1, which are never marked (an empty subseq is nil, which cannot be).
    '(count (subseq (apply sorted-set (seq (str "!#" alpha "^~"))) <= c))',
    '(count (rsubseq (apply sorted-set (seq (str "!#" alpha "^~"))) >= c))',
    '(count (subseq (apply sorted-set (seq (str "!#" alpha "^~"))) > "" <= c))',
    '(count (subseq (into (sorted-map) (map vector (seq (str "!#" alpha "^~")) (range 100))) >= c))',
    "(val (last (subseq (into (sorted-map) (map vector (seq alpha) (range 100))) <= c)))",
  ])("the length of public text a hidden piece cut is where the piece is, and is hidden: %s", async (measure) => {
    const program = `(def alpha "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-")\n(doseq [c (:token data/_creds)] (print ${measure} ""))`;
    const r = await evaluate(program, { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join(""));
    expect(out, out).not.toMatch(/\d/);
    expect(out).toContain("<hidden integer derived from data/_creds>");
  });

  it("a hidden string's own length, and that of a cut of it at public text, stay shown", async () => {
    const r = await evaluate('(println (count (:token data/_creds)) (count (first (clojure.string/split (:token data/_creds) #"-"))) (count (re-find #"[A-Z0-9]+" (:token data/_creds))) (count (subs (:token data/_creds) 7)))', { ctx, isolation: "none" });
    expect(r.ok && r.prints).toEqual(["18 6 6 11"]);
  });

  it("a sorted collection of a hidden string's characters cut at a public bound keeps its count shown", async () => {
    const r = await evaluate('(let [s (apply sorted-set (seq (:token data/_creds)))] (println (count s) (count (subseq s > "6")) (count (rsubseq s <= "C"))))', { ctx, isolation: "none" });
    expect(r.ok && r.prints).toEqual(["16 11 9"]);
  });

  it("counts, types and positions of public text stay shown at any size; a hidden needle's position does not", async () => {
    const program = [
      '(def big (str (apply str (repeat 1200 "x")) (:token data/_creds)))',
      "(println (count big) (count (vec (repeat 1500 (:token data/_creds)))) (type (:token data/_creds)) (type data/_creds))",
      '(println (clojure.string/index-of big "-") (.lastIndexOf big "-"))',
      '(println (.indexOf (str (apply str (repeat 1200 "y")) "K7") (subs (:token data/_creds) 0 2)))',
    ].join("\n");
    const r = await evaluate(program, { ctx, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.ok && r.prints.map(showStandIns)).toEqual(["1218 1500 :string :map", "1206 1213", "<hidden integer derived from data/_creds>"]);
  });

  it("kept to a later turn: small hidden numbers in a collection, keywords made from pieces, a float", async () => {
    const programs = [
      "(def v [(:pin data/_creds) (:cvv data/_creds)])\n(def w (mapv inc v))\n(def tok (:token data/_creds))\n(def ks (mapv #(keyword (subs tok % (+ % 2))) (range 0 18 2)))\n(def f (double (:cvv data/_creds)))",
      "(println (first v) (second v) (first w))\n(doseq [k ks] (print (name k)))\n(println)\n(println (int f))",
      "(return :done)",
    ];
    for (const compressHistory of [false, true]) {
      const agent = SubAgent.create({ prompt: "Find it.", maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: ctx, compressHistory });
      expect(step.ok).toBe(true);
      const text = step.messages.flat().map((m) => m.content).join("\n");
      for (const f of fragments([TOKEN])) expect(text).not.toContain(f);
      expect(text).not.toMatch(SMALL_VALUES);
    }
  });

  // A kept value computed from hidden context re-marks its small numbers and the keywords made
  // from hidden text in the next turn. It marked every keyword of fewer than three characters too,
  // field names included: keywords are shared by name, so after keeping `{:auth ... :id 7}` the
  // context's own rows (`:id` in each) held a marked value, every builtin over them marked its
  // result derived, and `(map :name data/rows)` printed `[<hidden string ...> <hidden string ...>]`
  // (in the turn that defined it, the same program printed the rows as they are).
  it("kept to a later turn: a short field name of a kept value does not hide the context's own data", async () => {
    const rows = [{ id: 101, name: "ann", city: "Oslo" }, { id: 102, name: "bob", city: "Lima" }];
    const later = ["(println (map :name data/rows))", "(println (take 1 (sort-by :city data/rows)))", "(println {:id 5 :ok true} (:id (first data/rows)))"];
    const programs = ['(def hdr {:auth (str "Bearer " (:token data/_creds)) :id 7 :ok true})', ...later, "(return :done)"];
    const agent = SubAgent.create({ prompt: "List the names.", maxTurns: programs.length });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: TOKEN }, rows } });
    expect(step.ok).toBe(true);
    expect(step.turns.slice(1, 4).map((t) => t.prints)).toEqual([['["ann" "bob"]'], ['[{:id 102 :name "bob" :city "Lima"}]'], ["{:id 5 :ok true} 101"]]);
    // The kept value itself still shows its hidden part as a stand-in.
    const shown = await SubAgent.run(SubAgent.create({ prompt: "Show it.", maxTurns: 3 }), { llm: scriptedLlm([programs[0], "(println hdr)", "(return 1)"].map(code)), context: { _creds: { token: TOKEN } } });
    expect(shown.turns[1].prints).toEqual(["{:auth <hidden string derived from data/_creds> :id <hidden integer derived from data/_creds> :ok <hidden boolean derived from data/_creds>}"]);
  });

  // The same for a kept value's small numbers and short strings: restored, every one was marked
  // again, so a page size of 7 kept beside a token hid each row of the context's own data holding
  // a 7 (and the whole result a builtin made of them). Only those hidden when kept are marked again.
  it("kept to a later turn: a small number kept beside a hidden one does not hide the context's own data", async () => {
    const rows = [{ id: 101, name: "ann", qty: 7 }, { id: 102, name: "bob", qty: 3 }];
    const programs = [
      '(def headers {:authorization (str "Bearer " (:token data/_creds)) :page-size 7})\n(def v {:c data/_card})\n(def p {:auth (str "B " (:token data/_creds)) :two (subs (:token data/_creds) 0 2)})',
      "(println (take 2 data/rows))",
      "(println (:cvv (:c v)) (:two p) (:page-size headers))",
      "(return :done)",
    ];
    const agent = SubAgent.create({ prompt: "List the rows.", maxTurns: programs.length });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: TOKEN }, _card: { cvv: 123 }, rows } });
    expect(step.ok).toBe(true);
    expect(step.turns[1].prints).toEqual(['[{:id 101 :name "ann" :qty 7} {:id 102 :name "bob" :qty 3}]']);
    // What was hidden when kept stays hidden: a hidden card's CVV, two characters of the token.
    expect(step.turns[2].prints).toEqual(["<hidden integer derived from data/_card> <hidden string derived from data/_creds> 7"]);
  });
});

describe("tools that send hidden values back", () => {
  it("a tool's error quoting a hidden argument in another case, and a tool echoing a hidden card's small numbers", async () => {
    const tools = {
      check: (args: Record<string, unknown>) => {
        throw new Error(`bad token ${String(args.token).toLowerCase()}`);
      },
      charge: (args: Record<string, unknown>) => ({ charged: args.card, rows: 3 }),
    };
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate(
        '(println (try (tool/check {:token (:token data/_creds)}) (catch e (ex-message e))))\n(def r (tool/charge {:card data/_card}))\n(println (:charged r) (:rows r) (count [1 2 3]))\n(println (ex-message (ex-info (subs (:token data/_creds) 0 3) {})))',
        { ctx: { _creds: { token: TOKEN }, _card: { cvv: 123, pin: 42 } }, tools, isolation },
      );
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      const out = showStandIns(r.prints.join("\n"));
      for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
      expect(out, out).not.toMatch(/\b123\b|\b42\b|K7Z/);
      // The tool's own count, equal to nothing hidden, still shows.
      expect(out).toContain("} 3 3");
      // What the records show (the trace's tool lines); `value` is the program's own copy.
      const shown = JSON.stringify(r.toolCalls.map((c) => [c.args, c.result, c.error]));
      for (const f of fragments([TOKEN])) expect(shown).not.toContain(f);
      expect(shown).not.toMatch(/\b123\b|\b42\b/);
    }
  });
});

// (with-out-str ...) makes a string of what the program prints: the program's own text, which a
// tool is sent as it is, and which is shown as computed from the hidden values printed into it.
describe.each(["none", "worker"] as const)("text printed into with-out-str (isolation %s)", (isolation) => {
  it.each([
    ['(with-out-str (print "Bearer" (:token data/_creds)))', `Bearer ${TOKEN}`],
    ['(with-out-str (prn {:t (:token data/_creds)}))', `{:t "${TOKEN}"}\n`],
    ['(with-out-str (pr {:t (:token data/_creds)}))', `{:t "${TOKEN}"}`],
    ["(with-out-str (doseq [c (:token data/_creds)] (print c)))", TOKEN],
    ["(with-out-str (print (:pin data/_creds)))", "42"],
  ])("%s: the tool gets the text, the model a stand-in", async (body, text) => {
    const sent: unknown[] = [];
    const r = await evaluate(`(def body ${body})\n(tool/send {:body body})\n(println body (str body "!"))\n(println (try (+ 1 body) (catch e (ex-message e))))`, {
      ctx: { _creds: { token: TOKEN, pin: 42 } },
      tools: { send: (args: unknown) => (sent.push(args), true) },
      isolation,
    });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(sent).toEqual([{ body: text }]);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out, out).not.toMatch(/\b42\b/);
    // (The token rebuilt whole is the token itself, shown as read.)
    expect(out).toMatch(/^<hidden string (derived )?from data\/_creds( :token)?> <hidden string derived from data\/_creds>\n/);
  });
});

// pr is prn without the newline: a sink like it, so a hidden value it prints is a stand-in.
describe.each(["none", "worker"] as const)("pr of a hidden value (isolation %s)", (isolation) => {
  it("shows a stand-in, not the value", async () => {
    const r = await evaluate('(pr (:token data/_creds) "x")\n(prn)', { ctx: { _creds: { token: TOKEN } }, isolation });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out).toMatch(/^<hidden string from data\/_creds :token> "x"/);
  });
});

describe("past the marking budget", () => {
  it("a program that derives more than can be followed has everything it shows hidden", async () => {
    const r = await evaluate(
      '(def tok (:token data/_creds))\n(def j1 (vec (repeat 600000 tok)))\n(def j2 (vec (repeat 600000 tok)))\n(doseq [c (vec tok)] (print c))\n(println)\n(println (first (clojure.string/split tok #"-")) (count j1))',
      { ctx: { _creds: { token: TOKEN } }, isolation: "none", limits: { timeoutMs: 120_000 } },
    );
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const out = showStandIns(r.prints.join("\n"));
    for (const f of fragments([TOKEN])) expect(out, out).not.toContain(f);
    expect(out).not.toContain("600000");
    expect(out).toContain("<hidden string derived from hidden context>");
  });
});

// Booleans and nil have no identity, so a printed hidden map showed them as they are beside its
// other parts' stand-ins. One read whole, or taken out, still shows as itself: marked by value it
// would hide every true and false the evaluation prints.
describe("booleans and nil of hidden context", () => {
  const ctx = { _flags: { beta: true, internal: false, n: 1, z: null }, _flag: true, _tok: "secret-token", _list: [] };
  const ROWS: Array<[string, string]> = [
    ["(println data/_flags)", "{:beta <hidden boolean from data/_flags> :internal <hidden boolean from data/_flags> :n <hidden integer from data/_flags> :z <hidden nil from data/_flags>}"],
    ["(println [data/_flags] (vals data/_flags))", "[{:beta <hidden boolean from data/_flags> :internal <hidden boolean from data/_flags> :n <hidden integer from data/_flags> :z <hidden nil from data/_flags>}] [<hidden boolean derived from data/_flags> <hidden boolean derived from data/_flags> <hidden integer derived from data/_flags> <hidden nil derived from data/_flags>]"],
    // Text merely equal to a hidden flag is untouched: the program's own true and false.
    ["(println (if data/_flag [true false nil] :off) (:beta {:beta true}))", "[true false nil] true"],
    ['(println (= data/_tok "x") (empty? data/_list))', "false true"],
  ];
  printsInBoth(ctx, ROWS);
});

// A public collection of the context, or one the program writes, holds public values only, whatever hidden ones they equal:
// reading a hidden email marked the hidden plan "pro" by value, and with it the public list of
// plan names holding an equal "pro", so every value computed from that list (FREE, TEAM), and
// from the orders holding a qty equal to a hidden 3, was shown as a stand-in. What builtins
// compute from it alone is public too ("PRO", the upper-cased public "pro").
describe("public context beside hidden context", () => {
  const ctx = { _user: { email: "ann.lee@acme.io", plan: "pro", retries: 3 }, plans: ["free", "pro", "team"], orders: [{ qty: 3, total: 100 }, { qty: 1, total: 45 }] };
  const ROWS: Array<[string, string]> = [
    ["(def e (:email data/_user))\n(println (mapv clojure.string/upper-case data/plans) (map :total data/orders) (reduce + (map :total data/orders)))", '["FREE" "PRO" "TEAM"] [100 45] 145'],
    ["(def e (:email data/_user))\n(println (filterv #(not= % \"team\") data/plans) (mapv :total (filter #(< (:qty %) 2) data/orders)))", '["free" <hidden string from data/_user :plan>] [45]'],
    // Public rows sorted by a key equal to a small hidden value (the qty of 3): the order is public.
    ["(def e (:email data/_user))\n(println (map :total (sort-by #(:qty %) data/orders)) (map :total (sort-by (juxt :qty :total) data/orders)))", "[45 100] [45 100]"],
    // The program's own constants likewise.
    ['(def e (:email data/_user))\n(println (mapv clojure.string/upper-case ["free" "pro" "team"]) (map :total [{:qty 3 :total 100} {:qty 1 :total 45}]) [3 "pro"])', '["FREE" "PRO" "TEAM"] [100 45] [3 "pro"]'],
    // Equal to a hidden value, and computed from one: hidden as before.
    ["(println (filterv #(= % (:plan data/_user)) data/plans) (clojure.string/upper-case (:plan data/_user)))", "[<hidden string from data/_user :plan>] <hidden string derived from data/_user>"],
  ];
  printsInBoth(ctx, ROWS);

  // A careless host whose public data shares its hidden credentials (the same object under a public
  // key): public context holding a hidden text of 8+ characters whole is no public collection, so
  // the token showed wherever the program printed the public copy, read or not.
  // Its map keyed by the token (sessions by token) showed the key: a keyword is not marked by the
  // value of the string it names, so the public copy printed `{:K7Z2Q9-B3M8X4-W5R2 ...}`. A key
  // that reads as a field name (`:enterprise`, beside a hidden tier "enterprise") stays shown, as
  // a hidden map's does.
  it("public context that holds a hidden text whole is not public", async () => {
    const creds = { token: "K7Z2Q9-B3M8X4-W5R2", plan: "pro", tier: "enterprise" };
    const shared = { _creds: creds, profile: { name: "ann", creds }, plans: ["free", "pro", "team"], sessions: { [creds.token]: { user: "ann" } }, seats: { enterprise: 5 } };
    for (const isolation of ["none", "worker"] as const) {
      for (const program of ["(println data/profile)", "(def t (:token data/_creds))\n(println data/profile)", "(println (mapv str (vals (:creds data/profile))))", "(println data/sessions)", "(println (keys data/sessions) (first data/sessions))"]) {
        const r = await evaluate(program, { ctx: shared, isolation });
        expect(showStandIns(r.prints.join("\n")), `${isolation}: ${program}`).not.toContain("K7Z2");
      }
      const seats = await evaluate("(println data/seats)", { ctx: shared, isolation });
      expect(seats.prints).toEqual(["{:enterprise 5}"]);
      const r = await evaluate("(def t (:token data/_creds))\n(println data/plans (:name data/profile))", { ctx: shared, isolation });
      expect(showStandIns(r.prints.join("\n"))).toBe('["free" "pro" "team"] ann');
    }
  });

  // A careless host whose public data holds a record of its hidden context with only short texts
  // (a card's cvv "737"): no text of 8+ characters to find, so it printed whole. A collection of 2+
  // entries equal to one of hidden context (the same object, or a copy made by a JSON round trip)
  // is that hidden record, wherever it is.
  describe("public context that holds a record of hidden context", () => {
    const card = { cvv: "737", last4: "4242", exp: "03/30" };
    const user = { name: "ann", pin: "4821" };
    const ctx = { _card: card, _user: user, profile: { name: "ann", card }, team: JSON.parse(JSON.stringify([{ name: "bob", pin: "1177" }, user])) as unknown, orders: [{ qty: 3, total: 100 }], plan: { name: "ann", pin: "4821", tier: "pro" }, _paging: { page: 1, size: 20 }, paging: { page: 1, size: 20 } };
    printsInBoth(ctx, [
      ["(println data/profile)", '{:name "ann" :card {:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}}'],
      ["(println (:cvv (:card data/profile)) (count (:card data/profile)))", "<hidden string from data/_card :cvv> 3"],
      ["(println data/team)", '[{:name "bob" :pin "1177"} {:name <hidden string from data/_user :name> :pin <hidden string from data/_user :pin>}]'],
      // Public records that merely share values with hidden ones (not the whole record) print as they are.
      ["(println (:name data/profile) data/orders data/plan)", 'ann [{:qty 3 :total 100}] {:name "ann" :pin "4821" :tier "pro"}'],
      // A record of small numbers only is in too much ordinary data to be taken for a copy.
      ["(println data/paging)", "{:page 1 :size 20}"],
    ]);

    // A hidden key that cannot be read whole (a part nested past the limit) still holds the records of its readable parts.
    let deep: unknown = "x";
    for (let i = 0; i < 300; i++) deep = { d: deep };
    printsInBoth({ _acct: { card, blob: deep }, profile: { card } }, [["(println (:card data/profile))", "{:cvv <hidden string from data/_acct :cvv> :last4 <hidden string from data/_acct :last4> :exp <hidden string from data/_acct :exp>}"]]);

    // A hidden key past the indexed parts listed first leaves the next key's records indexed.
    const log = Array.from({ length: 20_001 }, (_, i) => ({ at: i, ev: "login" }));
    printsInBoth({ _log: log, _card: card, profile: { card } }, [["(println (:card data/profile))", "{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}"]]);

    // A tool renews the hidden card mid-program (the host replaces `_card`, and `profile` holds the
    // new one) after a public read indexed the old one.
    const RENEWED: ReadonlyArray<readonly [isolation: "none" | "worker", program: string, shown: string]> = [
      ["none", '(println data/other) (tool/refresh) (println (= "999" (:cvv data/_card)))', "1\ntrue"],
      // The worker's copy of `profile` still holds the card the program began with.
      ...(["none", "worker"] as const).map((isolation) => [isolation, "(println data/other) (tool/refresh) (println (:card data/profile))", "1\n{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}"] as const),
      // The worker's copy of `_card` (no text of 8+ characters changed) is renewed too; its copy of public context is not.
      ["worker", '(println data/other) (tool/refresh) (println (= "999" (:cvv data/_card)))', "1\ntrue"],
      ...(["none", "worker"] as const).map((isolation) => [isolation, "(println data/other) (tool/refresh) (println (:card data/friend))", "1\n{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}"] as const),
    ];
    it.each(RENEWED)("a hidden record renewed by a tool (isolation %s): %s", async (isolation, program, shown) => {
      const renewed = { cvv: "999", last4: "1111", exp: "04/31" };
      const ctx: Record<string, unknown> = { _card: card, other: 1, profile: { card }, friend: { card: { ...renewed } } };
      const refresh = { run: () => void Object.assign(ctx, { _card: renewed, profile: { card: renewed } }) };
      const r = await evaluate(program, { ctx, isolation, tools: { refresh } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(showStandIns(r.prints.join("\n"))).toBe(shown);
    });

    // A tool edits the hidden card in place (`card.cvv = "999"`, the same object): no host value was
    // replaced, and the records indexed at the first public read, or the worker's copy made at the
    // start, printed the copy of the new card that `friend` holds, "999" and all.
    const EDITED: ReadonlyArray<readonly [isolation: "none" | "worker", program: string]> = (["none", "worker"] as const).flatMap((isolation) => [
      [isolation, "(println data/other) (tool/refresh) (println (:card data/friend))"],
      [isolation, "(tool/refresh) (println (:card data/friend))"],
      [isolation, "(println data/other) (tool/refresh) (println (:card data/profile))"],
    ] as const);
    it.each(EDITED)("a hidden record a tool edits in place (isolation %s): %s", async (isolation, program) => {
      const mine = { ...card };
      const ctx: Record<string, unknown> = { _card: mine, other: 1, profile: { card: mine }, friend: { card: { cvv: "999", last4: "1111", exp: "04/31" } } };
      const refresh = { run: () => void Object.assign(mine, { cvv: "999", last4: "1111", exp: "04/31" }) };
      const r = await evaluate(program, { ctx, isolation, tools: { refresh } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(showStandIns(r.prints.at(-1) ?? "")).toBe("{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}");
    });

    // A tool moves `last4` into the hidden card beside it: every leaf stays, in order, and the card
    // is a new record, equal to `friend`'s, which printed whole after a public read had indexed the
    // records (in process), in the worker, and in the next evaluation over the same context.
    const MOVED: ReadonlyArray<readonly [isolation: "none" | "worker", programs: readonly string[]]> = (["none", "worker"] as const).flatMap((isolation) => [
      [isolation, ["(println data/other) (tool/refresh) (println (:card data/friend))"]],
      [isolation, ["(tool/refresh) (println (:card data/friend))"]],
      [isolation, ["(println data/other) (tool/refresh)", "(println (:card data/friend))"]],
    ] as const);
    it.each(MOVED)("a hidden record a tool makes by moving a key (isolation %s): %s", async (isolation, programs) => {
      const mine: Record<string, unknown> = { card: { cvv: "737", exp: "01/29" }, last4: "4242" };
      const ctx: Record<string, unknown> = { _acct: mine, other: 1, friend: { card: { cvv: "737", exp: "01/29", last4: "4242" } } };
      const refresh = { run: () => { Object.assign(mine.card as object, { last4: mine.last4 }); delete mine.last4; } };
      let prints: string[] = [];
      for (const program of programs) {
        const r = await evaluate(program, { ctx, isolation, tools: { refresh } });
        expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
        prints = r.prints;
      }
      expect(showStandIns(prints.at(-1) ?? "")).toBe("{:cvv <hidden string from data/_acct :cvv> :exp <hidden string from data/_acct :exp> :last4 <hidden string from data/_acct :last4>}");
    });

    // In a nested run, a host tool the runs share renews its caller's hidden card, or edits it in
    // place: the records of the caller's hidden context, indexed at the first public read, were
    // not indexed again (only the run's own keys were compared), and the worker's copy of the
    // caller's context was never renewed, so `friend`'s copy of the new card printed whole.
    it.each((["none", "worker"] as const).flatMap((isolation) => [[isolation, "in place"], [isolation, "replaced"]] as const))("a caller's hidden record a tool renews (isolation %s, %s)", async (isolation, how) => {
      const mine: Record<string, unknown> = { ...card };
      const caller: Record<string, unknown> = { _card: mine };
      const renewed = { cvv: "999", last4: "1111", exp: "04/31" };
      const refresh = { run: () => void (how === "in place" ? Object.assign(mine, renewed) : (caller._card = { ...renewed })) };
      const r = await evaluate("(println data/other) (tool/refresh) (println (:card data/friend))", { ctx: { other: 1, friend: { card: renewed } }, callerHidden: [caller], isolation, tools: { refresh } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(showStandIns(r.prints.at(-1) ?? "")).toBe("{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}");
    });

    // Beside a hidden log of 300 event texts (past the 256 the worker's host reads again at each
    // answer), a tool renewing the card, or editing it in place, was never sent to the worker,
    // whose copy held the old card: `friend`'s copy of the new one printed whole.
    it.each(["in place", "replaced"] as const)("a hidden record a tool renews beside a large hidden context (worker, %s)", async (how) => {
      const mine: Record<string, unknown> = { ...card };
      const renewed = { cvv: "999", last4: "1111", exp: "04/31" };
      const ctx: Record<string, unknown> = { _log: Array.from({ length: 300 }, (_, i) => `event-${100_000 + i}`), _card: mine, other: 1, friend: { card: renewed } };
      const refresh = { run: () => void (how === "in place" ? Object.assign(mine, renewed) : (ctx._card = { ...renewed })) };
      const r = await evaluate("(println data/other) (tool/refresh) (println (:card data/friend))", { ctx, isolation: "worker", tools: { refresh } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(showStandIns(r.prints.at(-1) ?? "")).toBe("{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}");
    });

    // A host's client that returns the `_card` object in its answer, as public context holding it.
    // So does one of the caller's hidden context, in a nested run sharing the caller's host tools.
    it.each([
      ["none", "own"],
      ["worker", "own"],
      ["none", "caller's"],
      ["worker", "caller's"],
    ] as const)("a tool's result that holds a record of hidden context (isolation %s, %s context)", async (isolation, whose) => {
      const hidden = { ctx: { _card: card } };
      const r = await evaluate("(println (:card (tool/profile)))", { ...(whose === "own" ? hidden : { ctx: { q: 1 }, callerHidden: [hidden.ctx] }), isolation, tools: { profile: () => ({ name: "ann", card }) } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      const shown = "{:cvv <hidden string from data/_card :cvv> :last4 <hidden string from data/_card :last4> :exp <hidden string from data/_card :exp>}";
      expect(showStandIns(r.prints.join("\n"))).toBe(shown);
      expect(JSON.stringify(r.toolCalls)).not.toContain("4242");
    });

    it("the task's data section shows the record as a stand-in, in both views", async () => {
      for (const compressHistory of [true, false]) {
        const agent = SubAgent.create({ prompt: "Greet the profile's owner.", maxTurns: 2 });
        const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(println (:name data/profile))"), code("(return :done)")]), context: { ...ctx, _creds: { token: TOKEN }, account: { id: 7, creds: { token: TOKEN } } }, compressHistory });
        expect(step.ok).toBe(true);
        const text = step.messages.flat().map((m) => m.content).join("\n");
        expect(text).toContain(":card {:cvv <hidden string from data/_card :cvv>");
        for (const f of ["4242", "03/30", ...fragments([TOKEN])]) expect(text, f).not.toContain(f);
        expect(text).toContain('"1177"');
      }
    });
  });
});
