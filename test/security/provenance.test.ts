// The adversary for hidden context: programs that derive values from hidden (`_`) context
// (cut, upper-case, split, prefix, reverse, count), combine, print, define, fail with and pass
// them to tools over several turns. Every message of every prompt, in both history views, and
// the trace are scanned for every 4-character fragment of every hidden value and of its case
// and reversal transforms. The other way round, a run whose hidden context merely resembles
// ordinary text sends byte for byte what the same run without hidden context sends.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { resumeRun, saveRun } from "../../src/agent/resume.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { fragments, leaks, transforms } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

const seen: Array<Record<string, unknown>> = [];
const lookup = tool({
  description: "Looks a customer up.",
  input: z.object({ token: z.string(), q: z.string().optional() }),
  run: async (args) => {
    seen.push(args);
    return { echoed: args.token, q: args.q ?? null, rows: [{ id: 1, name: "acme" }] };
  },
});

const FIRST = '(def tok (get-in data/_creds [:crm :token]))\n(def auth (str "Bearer " tok))\n(println "ready")';

// Each step uses `tok` (and `auth`), defined by the first program and kept in memory.
const STEPS = [
  "(println (subs tok 0 16))",
  "(println (clojure.string/upper-case tok))",
  '(println (clojure.string/split tok #"-"))',
  "(println auth)",
  "(println (apply str (reverse tok)))",
  "(println (count tok) (count auth))",
  '(def parts (clojure.string/split tok #"-"))\n(println (first parts) (last parts))',
  '(let [[a b] (clojure.string/split tok #"-")] (println a b))',
  '(def r (tool/lookup {:token auth :q "acme"}))\n(println (:echoed r) (:rows r))',
  "(println (get-in data/_creds [:crm]))",
  '(def m {:user "ann" :tok (subs tok 2)})',
  "(def tk (subs tok 0 8))",
  "(+ 1 tok)",
  "(tok 1)",
  "(println (pr-str data/_creds))",
  '(doseq [p (clojure.string/split tok #"-")] (println (clojure.string/lower-case p)))',
  "(defn shout [] (clojure.string/upper-case tok))\n(println (shout))",
  // A function over the token whose source follows its summary, and that a later step fails in
  // (its summary is then followed by that source while the error is shown).
  '(defn bearer [x] (str "Bearer " tok "/" x))\n(defn plus-bearer [x] (+ x (bearer x)))\n(println (count (bearer 1)))',
  "(println (plus-bearer 2))",
  '(println (clojure.string/replace tok "-" "_"))',
  '(println (map clojure.string/lower-case (clojure.string/split tok #"-")))',
  '(try (throw (ex-info (str "bad token " tok) {})) (catch Exception e (println (ex-message e))))',
  '(throw (ex-info (str "bad token " (subs tok 3)) {}))',
  '(println (clojure.string/join "," (clojure.string/split tok #"-")))',
  "(def pin data/_pin)\n(println (* pin 1) (str pin))",
  '(println (tool/lookup {:token (clojure.string/lower-case tok)}))',
  "(def creds data/_creds)",
  "(println {:a [tok auth] :b #{(subs tok 1 9)}})",
  "(println (str {:t tok}))",
  '(println (with-out-str (print tok)))',
  // Pieces too short to mark by value (characters, cuts of two), put back together.
  "(doseq [c tok] (print c))\n(println)",
  "(println (str (first tok) (second tok) (nth tok 2) (nth tok 3) (last tok)))",
  '(let [[a b c d e] tok] (println (str a b c d e)))',
  "(doseq [i (range 0 (count tok) 2)] (print (subs tok i (min (count tok) (+ i 2)))))\n(println)",
  "(def cs (mapv str tok))\n(println (apply str (take 6 cs)))",
  // Comparators, grouping keys, reduce-kv, ex-info data, regex groups, format.
  '(println (sort-by (fn [p] (str p tok)) (clojure.string/split tok #"-")))',
  '(println (sort (fn [a b] (compare (str b tok) (str a tok))) (clojure.string/split tok #"-")))',
  '(println (group-by count (clojure.string/split tok #"-")) (frequencies (seq tok)))',
  "(println (reduce-kv (fn [acc k v] (str acc (name k) v)) \"\" {:a tok :b (subs tok 3)}))",
  '(println (try (throw (ex-info "bad" {:tok tok :up (clojure.string/upper-case tok)})) (catch Exception e (ex-data e))))',
  '(println (re-find #"([A-Z0-9]+)-([A-Z0-9]+)" tok) (re-seq #"[A-Z]\\d" tok))',
  '(println (format "%s/%S/%10s" tok (subs tok 0 6) (subs tok 6)))',
  // Functions a builtin made of a closure reading tok, handed to map; error messages quoting
  // values that a short piece of hidden text closes or opens.
  '(println (map (comp (fn [x] (str tok x)) str) [1 2]) (map (partial (fn [a x] (subs tok a)) 2) [1]))',
  "(let [s (clojure.string/reverse (pr-str [tok]))] (last s) (take s [1]))",
  "(let [s (subs (pr-str [tok]) 1 9)] (merge tok {}))",
];

// Letter-digit pairs: a 4-character fragment of one never occurs in ordinary prompt text.
const LETTERS = "BCDFGHJKLMNPQRSTVWXZ";
const group = fc.array(fc.tuple(fc.constantFrom(...LETTERS), fc.integer({ min: 2, max: 9 })), { minLength: 2, maxLength: 4 }).map((ps) => ps.map(([l, d]) => l + d).join(""));
const token = fc.array(group, { minLength: 3, maxLength: 4 }).map((gs) => gs.join("-"));
const pin = fc.integer({ min: 2_345_678, max: 9_876_543 });

describe("provenance: nothing derived from hidden context reaches a prompt", () => {
  it("no fragment of a hidden value or its transforms in any message of any prompt, either view, nor the trace (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        token,
        pin,
        fc.array(fc.array(fc.constantFrom(...STEPS), { minLength: 1, maxLength: 3 }), { minLength: 3, maxLength: 6 }),
        fc.boolean(),
        async (tok, pinValue, turns, compressHistory) => {
          const programs = [FIRST, ...turns.map((t) => t.join("\n")), "(return :done)"];
          const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: programs.length });
          seen.length = 0;
          const step = await SubAgent.run(agent, {
            llm: scriptedLlm(programs.map(code)),
            context: { _creds: { crm: { token: tok } }, _pin: pinValue, region: "eu" },
            compressHistory,
          });
          expect(step.turns.length).toBe(programs.length);
          // The pin is digits only: its fragments are ordinary numbers, so it is looked for whole.
          const frags = fragments([tok]);
          for (const t of transforms(String(pinValue))) frags.add(t);
          for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
          expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
          // Tools still receive the real values.
          for (const args of seen) expect(String(args.token).toLowerCase()).toContain(tok.toLowerCase());
        },
      ),
      { numRuns: 25 },
    );
  });

  it("shows a hidden value as an unquoted stand-in naming its origin and type", async () => {
    const programs = [
      "(def tok (get-in data/_creds [:crm :token]))\n(println tok)\n(println {:t tok})\n(println (clojure.string/lower-case tok))\n(println data/_creds)",
      '(tool/lookup {:token tok :q "x"})',
      "(return :done)",
    ];
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { crm: { token: "K7Z2Q9-B3M8X4-W5R2" } } } });
    const second = step.messages[1].map((m) => m.content).join("\n");
    expect(second).toContain("\n<hidden string from data/_creds :crm :token>\n");
    expect(second).toContain("{:t <hidden string from data/_creds :crm :token>}");
    expect(second).toContain("<hidden string derived from data/_creds>");
    expect(second).toContain("{:crm {:token <hidden string from data/_creds :crm :token>}}");
    expect(second).not.toContain('"data/_creds"');
    const third = step.messages[2].map((m) => m.content).join("\n");
    expect(third).toContain(':token <hidden string from data/_creds :crm :token>');
    expect(JSON.stringify(step.trace)).not.toContain("K7Z2");
  });

  it("a hidden keyword key in a summary's tool call or sample shows as its stand-in, not as a call that makes a keyword of it", async () => {
    const pad = Array.from({ length: 12 }, () => ";; a long comment line that makes the program worth summarizing, so its summary is what later prompts show").join("\n");
    const programs = [`${pad}\n(def r (tool/lookup {:token "x" (keyword (subs data/_tok 0 6)) 1}))\n(def m {(keyword (subs data/_tok 0 6)) 1})`, `${pad}\n(println "next")`, "(return :done)"];
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _tok: "K7Z2Q9-B3M8X4" }, compressHistory: true });
    const last = step.messages[2].map((m) => m.content).join("\n");
    expect(last).toContain('; Tool: lookup {:token "x" <hidden keyword derived from data/_tok> 1} -> r');
    expect(last).toContain("{<hidden keyword derived from data/_tok> 1}");
    expect(last).not.toContain("(keyword <hidden");
  });

  it("a tool's result is not hidden unless it echoes a hidden string", async () => {
    const programs = ['(def r (tool/lookup {:token data/_tok :q "acme"}))\n(println (:q r) (:echoed r) (:rows r))', "(return :done)"];
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _tok: "K7Z2Q9-B3M8X4" } });
    const fed = step.messages[1].map((m) => m.content).join("\n");
    expect(fed).toContain('acme <hidden string from data/_tok> [{:id 1 :name "acme"}]');
  });

  it("a tool that sends a hidden argument back in another case, or inside a message, shows a stand-in there", async () => {
    const shout = tool({
      description: "Checks a token.",
      input: z.object({ token: z.string() }),
      run: async ({ token }) => ({ low: token.toLowerCase(), msg: `token ${token.toUpperCase()} accepted`, env: "latest test" }),
    });
    const lower = tool({ description: "Lower-cases.", input: z.object({ s: z.string() }), run: async ({ s }) => ({ low: s.toLowerCase(), env: "latest test" }) });
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    // Inside longer text only hidden strings of 8+ characters are looked for; a shorter one
    // sent back whole, in any case, is hidden too.
    const programs = [
      '(def r (tool/shout {:token data/_tok}))\n(def s (tool/lower {:s (subs data/_tok 0 6)}))\n(def e (tool/lower {:s data/_env}))\n(println (:low r) (:msg r) (:low s))\n(println (:env e) (:low e))',
      "(return :done)",
    ];
    for (const compressHistory of [false, true]) {
      const agent = SubAgent.create({ prompt: "Check it.", tools: { shout, lower }, maxTurns: 2 });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _tok: tok, _env: "test" }, compressHistory });
      const frags = fragments([tok]);
      for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
      expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
      const fed = step.messages[1].map((m) => m.content).join("\n");
      expect(fed).toContain("<hidden string derived from data/_tok> <hidden string derived from data/_tok> <hidden string derived from data/_tok>");
      // "test" was given to the tool, but "latest test" only contains it: left as it is.
      expect(fed).toContain("latest test <hidden string from data/_env>");
    }
  });

  it("a tool that sends a hidden argument back cut short (… or ...) shows a stand-in there, as in its error", async () => {
    const check = tool({
      description: "Checks a token.",
      input: z.object({ token: z.string() }),
      run: async ({ token }) => ({ msg: `token ${token.slice(0, 11)}… rejected`, dots: `key ${token.slice(0, 9).toLowerCase()}... unknown`, short: `${token.slice(0, 4)}…`, env: "see the docs..." }),
    });
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    const programs = ["(def r (tool/check {:token data/_tok}))\n(println (:msg r))\n(println (:dots r))\n(println (:short r) (:env r))", "(return :done)"];
    for (const isolation of ["none", "worker"] as const) {
      for (const compressHistory of [false, true]) {
        const agent = SubAgent.create({ prompt: "Check it.", tools: { check }, maxTurns: 2 });
        const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _tok: tok }, compressHistory, isolation });
        const frags = fragments([tok.slice(3, 9)]);
        for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
        expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
        // A cut of fewer than 8 characters, and text merely ending in "...", stay as they are.
        expect(step.messages[1].map((m) => m.content).join("\n")).toContain("<hidden string derived from data/_tok>\n<hidden string derived from data/_tok>\nK7Z2… see the docs...");
      }
    }
  });

  it("a function kept from an earlier turn hides what it computes from a hidden value given later", async () => {
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    const programs = [
      '(defn g [x] (clojure.string/lower-case x))\n(defn h [x] (str "Bearer " x))\n(def up (comp clojure.string/reverse str))\n(def p (partial str "x"))\n(println "ok")',
      "(def tok (:token data/_creds))\n(defn f [] (subs tok 0 8))\n(println (g tok) (h tok) (up tok) (p tok))",
      "(println (f) (g (f)))\n(tool/lookup {:token (g tok)})",
      "(return :done)",
    ];
    for (const compressHistory of [false, true]) {
      const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: tok } }, compressHistory });
      expect(step.ok).toBe(true);
      const frags = fragments([tok]);
      for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
      expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
      expect(step.messages[2].map((m) => m.content).join("\n")).toContain("<hidden string derived from data/_creds> <hidden string derived from data/_creds>");
    }
  });

  it("a function a builtin made over a hidden value (partial, constantly, fnil, comp, memoize) hides what it returns in a later turn", async () => {
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    const T = "(:token data/_creds)";
    const programs = [
      `(def g (partial str ${T}))\n(def c (constantly ${T}))\n(def f (fnil identity ${T}))\n(def h (comp (partial str ${T}) str))\n(def m (memoize (fn [x] (str x (:token data/_creds)))))\n(m 1)`,
      '(println (g "x") (c) (f nil) (h 1) (m 1))',
      "(return :done)",
    ];
    for (const isolation of ["none", "worker"] as const) {
      for (const compressHistory of [false, true]) {
        const agent = SubAgent.create({ prompt: "Find the customer.", maxTurns: programs.length });
        const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: tok } }, compressHistory, isolation });
        expect(step.ok).toBe(true);
        const frags = fragments([tok]);
        for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
        expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
        expect(step.trace.turns[1].prints).toEqual([Array(5).fill("<hidden string derived from data/_creds>").join(" ")]);
      }
    }
  });

  // Small values are marked by value only once taken out of hidden context: a kept function that
  // closes over them hands them back in a later turn, where nothing took them out.
  it("a function kept from an earlier turn hides the small hidden values it closes over", async () => {
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    const programs = [
      "(let [pin (:pin data/_creds)] (defn p [] pin))\n(def q (let [t (subs (:token data/_creds) 0 2)] (fn [] [t (:pin data/_creds)])))\n(defn make [] (let [pin (:pin data/_creds)] (fn [] pin)))\n(def r (make))\n(println \"ok\")",
      "(println (p) (str (p)) (q) (first (q)) (r))",
      "(return :done)",
    ];
    for (const isolation of ["none", "worker"] as const) {
      const agent = SubAgent.create({ prompt: "Find the customer.", maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: tok, pin: 42 } }, isolation });
      expect(step.ok).toBe(true);
      const text = step.messages.flat().map((m) => m.content).join("\n");
      expect(text).not.toMatch(/\b42\b|\bK7\b/);
      expect(JSON.stringify(step.trace)).not.toMatch(/\b42\b|\\"K7\\"/);
      expect(step.trace.turns[1].prints[0]).toMatch(/^<hidden integer derived from data\/_creds> <hidden string derived from data\/_creds> \[<hidden/);
    }
  });

  // A function a builtin made keeps what it was given out of sight (partial's arguments): what it
  // returns in a later turn holds the small hidden values it was made with.
  it("a function a builtin made over small hidden values hides them in what it returns in a later turn", async () => {
    const programs = [
      "(def j (juxt (constantly (:pin data/_creds)) inc))\n(def c (constantly [(:pin data/_creds) 5]))\n(def p (partial vector (:pin data/_creds)))\n(println \"ok\")",
      "(println (first (j 1)) (first (c)) (first (p)) (get (p 1) 0))",
      "(return :done)",
    ];
    for (const isolation of ["none", "worker"] as const) {
      const agent = SubAgent.create({ prompt: "Find the customer.", maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { pin: 42 } }, isolation });
      expect(step.ok).toBe(true);
      expect(step.trace.turns[1].prints).toEqual([Array(4).fill("<hidden integer derived from data/_creds>").join(" ")]);
    }
  });

  // Each answer of its cache keeps its own mark: before, once it cached a hidden one, every answer
  // was taken to be derived, and the small numbers in them hidden all over the evaluation.
  it("a memoized function that cached a hidden answer gives a public one as it is, in a later turn too", async () => {
    const programs = [
      "(def m (memoize (fn [x] (if (= x 1) [5 6 7] (:token data/_creds)))))\n(m 2)\n(println (m 1) (conj [5 6 7] 8) (m 2))",
      "(println (m 1) (conj [5 6 7] 8) (m 2))",
      "(return :done)",
    ];
    for (const isolation of ["none", "worker"] as const) {
      const agent = SubAgent.create({ prompt: "Find the customer.", maxTurns: programs.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: "K7Z2Q9-B3M8X4-W5R2" } }, isolation });
      expect(step.ok).toBe(true);
      for (const turn of [0, 1]) expect(step.trace.turns[turn].prints).toEqual(["[5 6 7] [5 6 7 8] <hidden string from data/_creds :token>"]);
    }
  });

  // The cache changes after the definition: the turn that fills it defines nothing (or fails), so
  // no definition of that turn records what it took in.
  it("a memoized function defined before it met hidden context hides what its cache answers in a later turn", async () => {
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    const programs = [
      '(def m (memoize (fn [x] (str x "!"))))\n(def n (memoize (fn [x] (str x (:token data/_creds)))))\n(def fs {:m (memoize (fn [x] (clojure.string/reverse x)))})\n(println "ok")',
      "(m (:token data/_creds))\n(n 1)\n((:m fs) (:token data/_creds))\n(println \"filled\")",
      '(m (subs (:token data/_creds) 2))\n(throw "stop")',
      '(println (m (:token data/_creds)) (n 1) ((:m fs) (:token data/_creds)) (m (subs (:token data/_creds) 2)))',
      "(return :done)",
    ];
    for (const isolation of ["none", "worker"] as const) {
      for (const compressHistory of [false, true]) {
        const agent = SubAgent.create({ prompt: "Find the customer.", maxTurns: programs.length });
        const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: tok } }, compressHistory, isolation });
        expect(step.ok).toBe(true);
        const frags = fragments([tok]);
        for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
        expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
        expect(step.trace.turns[3].prints).toEqual([Array(4).fill("<hidden string derived from data/_creds>").join(" ")]);
      }
    }
  });

  it("hidden context that resembles ordinary text changes nothing a model sees", async () => {
    const programs = [
      '(def rows [{:year 2024 :env "test" :name "name"} {:year 2025 :env "prod" :name "tenant name"}])\n(println rows)\n(println "test name 2024")',
      '(println (tool/lookup {:token "test" :q "name"}))',
      "(println (count rows))",
      "(println [true false nil 0 1] (= 1 1) (empty? rows))",
      "(return :done)",
    ];
    for (const compressHistory of [false, true]) {
      const run = async (context: Record<string, unknown>): Promise<string[][]> => {
        const agent = SubAgent.create({ prompt: "Sum the {{what}} order totals for 2024 in test; name the tenant.", tools: { lookup }, maxTurns: programs.length });
        const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context, compressHistory });
        expect(step.ok).toBe(true);
        return step.messages.map((p) => p.map((m) => m.content));
      };
      const plain = await run({ what: "data/orders", orders: [1, 2] });
      const hidden = await run({ what: "data/orders", orders: [1, 2], _year: 2024, _env: "test", _tenant: "name", _code: "data", _flag: true, _off: false, _none: null, _one: 1, _flags: { beta: true, n: 0 } });
      expect(hidden).toEqual(plain);
    }
  });

  it("a resumed run hides what the saved run hid, and the saved state keeps the marks", async () => {
    const tok = "K7Z2Q9-B3M8X4-W5R2";
    const context = { _creds: { crm: { token: tok } } };
    const first = ['(def tok (get-in data/_creds [:crm :token]))\n(def low (clojure.string/lower-case tok))\n(println "ok")', '(def r (tool/lookup {:token tok}))\n(println (:echoed r))', '(println "still looking")'];
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns });
    const saved = await SubAgent.run(make(3), { llm: scriptedLlm(first.map(code)), context, compressHistory: true });
    expect(saved.ok).toBe(false);
    const state = runStateFromJson(runStateToJson(saveRun(saved, make(3))));
    expect(state.memory.find((d) => d.name === "tok")?.hidden).toEqual({ path: "data/_creds :crm :token", root: "data/_creds", derived: false });
    expect(state.memory.find((d) => d.name === "low")?.hidden).toMatchObject({ root: "data/_creds", derived: true });
    const live = scriptedLlm([code("(println tok low (subs low 0 9))"), code("(return :done)")]);
    const step = await resumeRun(make(5), state, { llm: live, context });
    expect(step.fail).toBeUndefined();
    const frags = fragments([tok]);
    for (const r of live.requests) for (const m of r.messages) expect(leaks(m.content, frags)).toEqual([]);
    expect(live.requests[1].messages.map((m) => m.content).join("\n")).toContain("<hidden string from data/_creds :crm :token> <hidden string derived from data/_creds> <hidden string derived from data/_creds>");
  });
});
