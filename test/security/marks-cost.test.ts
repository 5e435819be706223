// Hidden context must not make a program's work grow faster than its size: every builtin call
// asks whether its arguments hold a marked value, and a result built step by step (a reduce over
// conj) was walked whole at every step, so 20,000 steps took 16 s instead of 17 ms, uncharged.
// The walks are counted (not timed): doubling the input must about double them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { eachHostPart, Marks, QuoteIndex, showStandIns } from "../../src/lisp/marks.js";

const ctx = { _creds: { token: "sk-live-7Hq2ZpX9wLm4" }, region: "eu" };

async function walks(program: (n: number) => string, n: number): Promise<number> {
  const find = vi.spyOn(Marks.prototype, "find");
  const r = await evaluate(`(def t (:token data/_creds)) ${program(n)}`, { ctx, isolation: "none", limits: { timeoutMs: 600_000 } });
  expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
  const calls = find.mock.calls.length;
  find.mockRestore();
  return calls;
}

afterEach(() => vi.restoreAllMocks());

describe("marks cost in proportion to the work (adversary)", () => {
  it.each([
    ["a builtin folded over a growing vector", (n: number) => `(count (reduce conj [] (range ${n})))`],
    ["a closure folded over a growing vector", (n: number) => `(count (reduce (fn [acc x] (conj acc x)) [] (range ${n})))`],
    ["a map built key by key", (n: number) => `(count (reduce (fn [m x] (assoc m x (str x))) {} (range ${n})))`],
  ])("%s", async (_name, program) => {
    const small = await walks(program, 1_000);
    const large = await walks(program, 2_000);
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(2.5);
  });

  it("still marks what is built from a hidden value, step by step", async () => {
    const r = await evaluate("(def t (:token data/_creds)) (def v (reduce conj [] (range 50))) (println (conj v t))", { ctx, isolation: "none" });
    expect(r.ok).toBe(true);
    expect(r.prints.join("\n")).not.toContain("sk-live");
    expect(r.prints.join("\n")).toContain("hidden string");
  });
});

describe("error messages searched in proportion to the work (adversary)", () => {
  // A program that catches an error per row, in a run whose program derived many hidden strings:
  // every caught message is searched for hidden values. Indexing them again for each message
  // took 15 s for 10,000 errors over 3,000 strings; the index must grow with what is marked, not
  // with the errors caught.
  const names = { _names: Array.from({ length: 300 }, (_, i) => `customer-name-${i}`) };
  const program = (n: number): string => `(def up-names (mapv clojure.string/upper-case data/_names))\n(count (filter nil? (mapv (fn [i] (try (+ i "x") (catch e nil))) (range ${n}))))`;
  async function indexed(n: number): Promise<number> {
    const add = vi.spyOn(QuoteIndex.prototype, "add");
    const r = await evaluate(program(n), { ctx: names, isolation: "none", limits: { timeoutMs: 600_000 } });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const calls = add.mock.calls.length;
    add.mockRestore();
    return calls;
  }

  it("indexes each hidden value once however many errors are caught", async () => {
    const few = await indexed(100);
    const many = await indexed(1_000);
    expect(few).toBeGreaterThanOrEqual(300);
    expect(many).toBe(few);
  });

  // Each caught error brought the index up to date by walking every marked value from the first,
  // skipping those already indexed: a program marking a new string before each error it catches
  // visited n²/2 of them (502,500 for 1,000 errors). Counted as the Map entries iterated while
  // messages are hidden: the new ones are looked up, not walked to.
  it("brings the index up to date without walking what it already holds", async () => {
    let hiding = 0;
    let visited = 0;
    const iterate = Map.prototype[Symbol.iterator];
    vi.spyOn(Map.prototype, Symbol.iterator).mockImplementation(function (this: Map<unknown, unknown>) {
      const it = iterate.call(this);
      if (hiding === 0) return it;
      const counted = { next: () => (visited++, it.next()), [Symbol.iterator]: () => counted };
      return counted as unknown as MapIterator<[unknown, unknown]>;
    });
    const hideText = Marks.prototype.hideText;
    vi.spyOn(Marks.prototype, "hideText").mockImplementation(function (this: Marks, text: string, anyCase?: boolean) {
      hiding++;
      try {
        return hideText.call(this, text, anyCase);
      } finally {
        hiding--;
      }
    });
    const n = 1_000;
    const r = await evaluate(`(println (count (for [i (range ${n})] (let [s (str (:token data/_creds) "-" i)] (try (throw (ex-info (str "bad " i) {})) (catch e (ex-message e)))))))`, { ctx, isolation: "none", limits: { timeoutMs: 600_000 } });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.prints).toEqual([String(n)]);
    expect(visited).toBeLessThanOrEqual(2 * n);
  });
});

describe("hiding shared structure costs its distinct parts (adversary)", () => {
  // A vector holding the same vector twice, n levels deep, over a hidden token: 2^n leaves from n
  // vectors. Showing it (println, a definition's sample) replaces the token by its stand-in; that
  // walk went leaf by leaf, so at 40 levels println ran past any time limit in process and an
  // agent's turn never ended (the host records the definition after the run, with no limit).
  async function hides(n: number): Promise<number> {
    const hide = vi.spyOn(Marks.prototype, "hide");
    const r = await evaluate(`(println (reduce (fn [v _] [v v]) (:token data/_creds) (range ${n})))`, { ctx, isolation: "none", limits: { timeoutMs: 600_000 } });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.prints.join("\n")).not.toContain("sk-live");
    expect(r.prints.join("\n")).toContain("hidden string");
    const calls = hide.mock.calls.length;
    hide.mockRestore();
    return calls;
  }

  it("hides each shared part once, however many times it is reached", async () => {
    const shallow = await hides(6);
    const deep = await hides(12);
    expect(shallow).toBeGreaterThan(0);
    // Twice the levels: about twice the parts, 64 times the leaves.
    expect(deep / shallow).toBeLessThan(3);
  });
});

describe("a hidden value that shares its parts (adversary)", () => {
  // 2^40 leaves in 41 vectors: a walk that does not remember what it walked ran out of its budget,
  // and past it everything counted as marked, so every value of the run and the next showed as a stand-in.
  const dag = "(def d (reduce (fn [v _] [v v]) (:token data/_creds) (range 40)))";
  const leaf = "(loop [x d] (if (vector? x) (recur (first x)) x))";
  it.each(["none", "worker"] as const)("marks what it holds, not everything else (isolation %s)", async (isolation) => {
    const first = await evaluate(`${dag}\n(println :ok (subs ${leaf} 0 7) (count (str (count d))))`, { ctx, isolation });
    expect(first.ok, first.ok ? "" : first.error.message).toBe(true);
    expect(first.prints.map(showStandIns)).toEqual([":ok <hidden string derived from data/_creds> 1"]);
    const next = await evaluate(`(println (+ 1 2) "abc" ${leaf} (subs ${leaf} 0 2))`, { ctx, isolation, memory: first.memory });
    expect(next.ok, next.ok ? "" : next.error.message).toBe(true);
    expect(showStandIns(next.prints[0])).toMatch(/^3 abc <hidden string [^>]*> <hidden string [^>]*>$/);
    expect(next.prints.join("\n")).not.toMatch(/sk-live|sk-/);
  });
});

describe("marking hidden context is the run's work (adversary)", () => {
  // A hidden context value has each of its parts marked with its place as it is read, and a
  // definition holding one is marked again before every later run. Those walks spent no fuel and
  // never looked at the clock: in process, a hidden list of 1M strings was read in 8.8 s under a
  // 1 s limit (the same list not hidden: 0.6 s), and once defined, every later run paid it again
  // before starting (`1` took 9.4 s, and timed out in a worker). Fuel counts the walk here.
  const rows = Array.from({ length: 20_000 }, (_, i) => `customer-${100_000 + i}`);

  it("reading a hidden value spends fuel for its parts, and a fuel limit stops the walk", async () => {
    const plain = await evaluate("(count data/rows)", { ctx: { rows }, isolation: "none" });
    const hidden = await evaluate("(count data/_rows)", { ctx: { _rows: rows }, isolation: "none" });
    expect(plain.ok && hidden.ok).toBe(true);
    expect(hidden.stats.fuelUsed).toBeGreaterThanOrEqual(plain.stats.fuelUsed + rows.length);
    const limits = { maxFuel: plain.stats.fuelUsed + rows.length / 2 };
    expect((await evaluate("(count data/rows)", { ctx: { rows }, isolation: "none", limits })).ok).toBe(true);
    const stopped = await evaluate("(count data/_rows)", { ctx: { _rows: rows }, isolation: "none", limits });
    expect(!stopped.ok && stopped.error.kind).toBe("fuel_exhausted");
  });

  it.each(["none", "worker"] as const)("a definition holding one is marked again within the next run's limits (isolation %s)", async (isolation) => {
    const ctx = { _rows: rows };
    const first = await evaluate("(def d data/_rows) (count d)", { ctx, isolation });
    expect(first.ok, first.ok ? "" : first.error.message).toBe(true);
    const next = await evaluate("(println (first d)) 1", { ctx, isolation, memory: first.memory });
    expect(next.ok, next.ok ? "" : next.error.message).toBe(true);
    expect(next.stats.fuelUsed).toBeGreaterThanOrEqual(rows.length);
    expect(next.prints.map(showStandIns)).toEqual(["<hidden string from data/_rows 0>"]);
    const stopped = await evaluate("1", { ctx, isolation, memory: first.memory, limits: { maxFuel: rows.length / 2 } });
    expect(!stopped.ok && stopped.error.kind).toBe("fuel_exhausted");
  });
});

describe("a tool's result searched for echoes in proportion to its size (adversary)", () => {
  // A tool given a hidden value has its result searched for echoes of it. Each string of the
  // result was compared with every marked string of 8+ characters (and, for the hidden values it
  // was given, every compact form) one by one: a hidden list of 16,000 emails and a result of
  // 16,000 rows took 10 s of host time under a 1 s limit, uncharged and unchecked. The scans
  // are counted (not timed): doubling both must about double them.
  const emails = (n: number): string[] => Array.from({ length: n }, (_, i) => `user${i}.someone@example${i % 97}.com`);
  const rowsOf = (n: number, echo: string): unknown[] => [...Array.from({ length: n }, (_, i) => `row ${i} of the answer, nothing secret in it ${i}`), `sent to ${echo} today`, echo.replace(/[.@]/g, " ").toUpperCase()];

  async function scans(given: string, n: number): Promise<{ count: number; prints: string[] }> {
    const list = emails(n);
    const tools = { look: { run: () => rowsOf(n, list[7]) } };
    const includes = vi.spyOn(String.prototype, "includes");
    const r = await evaluate(`(def r (tool/look {:q ${given}}))\n(println (nth r 3) (nth r ${n}) (nth r ${n + 1}))`, { ctx: { _emails: list }, tools, isolation: "none", limits: { timeoutMs: 600_000 } });
    const count = includes.mock.calls.length;
    includes.mockRestore();
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    return { count, prints: r.ok ? r.prints.map(showStandIns) : [] };
  }

  it.each([
    ["one hidden string given, many marked", "(nth data/_emails 7)"],
    ["every hidden string given", "data/_emails"],
  ])("%s", async (_name, given) => {
    const small = await scans(given, 1_000);
    const large = await scans(given, 2_000);
    // The echoes are still found: quoted inside a longer string, and rewritten (case, separators).
    for (const { prints } of [small, large]) expect(prints[0]).toMatch(/ <hidden string derived from data\/_emails> <hidden string derived from data\/_emails>$/);
    expect(large.count / Math.max(small.count, 1)).toBeLessThan(2.5);
  }, 120_000);
});

describe("hidden strings that share their first characters are searched in proportion to the text (adversary)", () => {
  // Ids like customer-100000 ... customer-115999 share their first characters, the key of the
  // index the searches for quotes of hidden values use. Each place in a text that begins the same
  // way was compared with every id sharing it: a tool given one of 16,000 hidden ids answering
  // 16,000 rows `customer-3xxxxx ok` took 8.5 s of host time, and so would an error message per
  // row. The comparisons are counted (every id passed over asked whether "..." follows): doubling
  // the ids and the rows must about double them.
  const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `customer-${100_000 + i}`);

  async function counted(program: string, n: number, tools?: Record<string, { run: () => unknown }>): Promise<{ count: number; prints: string[] }> {
    const startsWith = vi.spyOn(String.prototype, "startsWith");
    const r = await evaluate(program, { ctx: { _ids: ids(n) }, ...(tools === undefined ? {} : { tools }), isolation: "none", limits: { timeoutMs: 600_000 } });
    const count = startsWith.mock.calls.length;
    startsWith.mockRestore();
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    return { count, prints: r.ok ? r.prints.map(showStandIns) : [] };
  }

  it("a tool's result", async () => {
    const run = (n: number) => {
      const rows = [...Array.from({ length: n }, (_, i) => `customer-${300_000 + i} ok`), `customer-${100_007} ok`, `CUSTOMER-${100_00}… unknown`];
      return counted(`(def r (tool/look {:q (nth data/_ids 7)}))\n(println (nth r 3) (nth r ${n}) (nth r ${n + 1}))`, n, { look: { run: () => rows } });
    };
    const small = await run(1_000);
    const large = await run(2_000);
    for (const { prints } of [small, large]) expect(prints[0]).toMatch(/^customer-300003 ok <hidden string derived from data\/_ids> <hidden string derived from data\/_ids>$/);
    expect(large.count / Math.max(small.count, 1)).toBeLessThan(2.5);
  }, 120_000);

  it("error messages", async () => {
    const run = (n: number) =>
      counted(`(def up (mapv clojure.string/upper-case data/_ids))\n(def msgs (mapv (fn [i] (try (+ 1 (str "CUSTOMER-" (+ 300000 i))) (catch e (ex-message e)))) (range ${n})))\n(println (nth msgs 3))\n(println (try (+ 1 (nth up 7)) (catch e (ex-message e))))`, n);
    const small = await run(1_000);
    const large = await run(2_000);
    for (const { prints } of [small, large]) {
      expect(prints[0]).toContain("CUSTOMER-300003");
      expect(prints[1]).toContain("<hidden string derived from data/_ids>");
    }
    expect(large.count / Math.max(small.count, 1)).toBeLessThan(2.5);
  }, 120_000);
});

describe("a fan-out of tool calls given hidden values indexes what is marked once (adversary)", () => {
  // Each call given a hidden value had its result searched against every marked string, listed
  // (and lower-cased) again for each call: 2,000 calls over 16,000 hidden emails took 249 s.
  // The index is the evaluation's now, brought up to date with what was marked since. Counted
  // (not timed): twice the calls over twice the strings must be about twice the work.
  async function lowered(n: number): Promise<number> {
    const emails = Array.from({ length: n * 10 }, (_, i) => `user${i}.someone@example${i % 97}.com`);
    const tools = { look: { run: () => ({ status: "delivered fine", id: "order-12345678" }) } };
    const lower = vi.spyOn(String.prototype, "toLowerCase");
    const r = await evaluate(`(def r (mapv (fn [i] (tool/look {:q (nth data/_emails i)})) (range ${n})))\n(println (:status (first r)))`, { ctx: { _emails: emails }, tools, isolation: "none", limits: { timeoutMs: 600_000, maxToolCalls: 10_000 } });
    const count = lower.mock.calls.length;
    lower.mockRestore();
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.ok && r.prints).toEqual(["delivered fine"]);
    return count;
  }

  it("twice the calls over twice the hidden strings, about twice the work", async () => {
    const small = await lowered(100);
    const large = await lowered(200);
    expect(large / Math.max(small, 1)).toBeLessThan(2.5);
  }, 120_000);
});

describe("public context read beside a big hidden key (adversary)", () => {
  // Each evaluation that read public context converted and hashed every hidden key for the records
  // public context might copy (170-400 ms for 100,000 hidden rows, charged as fuel): an agent's
  // turns read the same context, so a key is indexed once while it holds the same.
  it("indexes the hidden key's records once across evaluations, again once it changes", async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ id: `user-${i}`, n: i }));
    const ctx = { _db: rows, x: 1 };
    const fuel = async (): Promise<number> => {
      const r = await evaluate("(println data/x)", { ctx, isolation: "none" });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      return r.stats.fuelUsed;
    };
    const first = await fuel();
    expect(first).toBeGreaterThan(5_000);
    expect(await fuel()).toBeLessThan(100);
    rows[7] = { id: "user-renewed", n: 7 };
    expect(await fuel()).toBeGreaterThan(5_000);
  });
});

describe("hidden records of one hash beside public rows of their values (adversary)", () => {
  // Strings of "Aa" and "BB" blocks share their hash: each public row of the hidden records' texts
  // was compared with every record of its hash, 2,000 x 5,000, and ran out of fuel.
  it("compares a public row with a few records of its hash at most", async () => {
    const text = (i: number): string => Array.from({ length: 12 }, (_, b) => ((i >> b) & 1 ? "BB" : "Aa")).join("");
    const hidden = Array.from({ length: 2_000 }, (_, i) => ({ a: text(i), b: text(i) }));
    const pub = Array.from({ length: 5_000 }, (_, i) => ({ a: text(i % 2_000), b: text((i + 1) % 2_000) }));
    const r = await evaluate("(println (count data/pub))", { ctx: { _h: hidden, pub }, isolation: "none", limits: { timeoutMs: 600_000 } });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(r.stats.fuelUsed).toBeLessThan(1_000_000);
  });

  // The walk of host data for hidden texts and leaves (after every tool call, where hidden context
  // is small in texts) went on through a 100,000-number array after its parts were spent: 0.5 ms
  // for 2,048 parts. It stops at its parts now, in arrays and in objects' keys alike.
  it("a walk of host data stops where its parts end", () => {
    let reads = 0;
    const rows = new Proxy(Array.from({ length: 100_000 }, (_, i) => i), { get: (t, k, r) => (typeof k === "string" && /^\d+$/.test(k) && reads++, Reflect.get(t, k, r)) });
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    let visits = 0;
    eachHostPart({ rows, wide }, 100, () => visits++);
    expect(reads).toBeLessThan(200);
    expect(visits).toBeLessThan(200);
    expect(visits).toBeGreaterThan(50);
  });
});
