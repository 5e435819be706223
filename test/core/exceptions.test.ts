// throw, ex-info, ex-message, ex-data, and how they meet try/catch: what catch sees, and
// that limit errors can neither be caught nor forged.
import { describe, expect, it } from "vitest";
import { edn as ok, errorOf as fails } from "../support/run.js";
import { evaluate } from "../../src/lisp/evaluate.js";

describe("throw", () => {
  it("an uncaught ex-info fails the program with kind exception and its message", async () => {
    const e = await fails('(throw (ex-info "order 7 not found" {:id 7}))');
    expect(e.kind).toBe("exception");
    expect(e.message).toBe("order 7 not found");
    expect(e.line).toBe(1);
  });

  it("catch sees {:kind :exception :message msg :data data} for an ex-info", async () => {
    expect(await ok('(try (throw (ex-info "bad" {:id 1})) (catch e [(:kind e) (:message e) (:data e)]))')).toBe('[:exception "bad" {:id 1}]');
    expect(await ok('(try (throw (ex-info "bad" {:id 1})) (catch e [(ex-message e) (ex-data e)]))')).toBe('["bad" {:id 1}]');
  });

  it("throws other values as they are: a string is the message, the value is the data", async () => {
    expect(await ok('(try (throw "boom") (catch e [(:message e) (:data e)]))')).toBe('["boom" "boom"]');
    expect(await ok("(try (throw {:code 404}) (catch e [(:message e) (:data e)]))")).toBe('["{:code 404}" {:code 404}]');
    const e = await fails("(throw 42)");
    expect(e.kind).toBe("exception");
    expect(e.message).toBe("42");
  });

  it("shortens the message of a large thrown value", async () => {
    const e = await fails("(throw data/xs)", { ctx: { xs: Array.from({ length: 1000 }, (_, i) => i) } });
    expect(e.message.length).toBeLessThan(250);
  });

  it("re-throwing a caught error keeps its message", async () => {
    expect(await ok("(try (try (/ 1 0) (catch e (throw e))) (catch e2 [(:kind e2) (ex-message e2)]))")).toBe('[:exception "division by zero"]');
  });

  it("rejects nil", async () => {
    const e = await fails("(throw nil)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("throw");
  });

  it("runs finally blocks on the way out", async () => {
    const r = await evaluate('(try (throw (ex-info "x" {})) (finally (println "cleanup")))');
    expect(r.ok).toBe(false);
    expect(r.prints).toEqual(["cleanup"]);
  });
});

describe("ex-info", () => {
  it("is a map of message and data", async () => {
    expect(await ok('(ex-info "m" {:a 1})')).toBe('{:message "m" :data {:a 1}}');
    expect(await ok('(:message (ex-info "m" {}))')).toBe('"m"');
  });

  it("defaults data to an empty map and keeps a cause", async () => {
    expect(await ok('(ex-data (ex-info "m"))')).toBe("{}");
    expect(await ok('(ex-data (ex-info "m" nil))')).toBe("{}");
    expect(await ok('(:cause (ex-info "m" {} "root"))')).toBe('"root"');
  });

  it("requires a string message and map data", async () => {
    const e = await fails("(ex-info :oops {})");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("ex-info");
    const e2 = await fails('(ex-info "m" [1 2])');
    expect(e2.kind).toBe("type_error");
    expect(e2.hint).toContain("map");
  });
});

describe("ex-message and ex-data", () => {
  it("read errors caught from builtins: message, and no data", async () => {
    expect(await ok("(try (/ 1 0) (catch e [(ex-message e) (ex-data e)]))")).toBe('["division by zero" nil]');
  });

  it("read an ex-info directly", async () => {
    expect(await ok('(let [x (ex-info "m" {:k 1})] [(ex-message x) (ex-data x)])')).toBe('["m" {:k 1}]');
  });

  it("are nil for values that are not exceptions", async () => {
    expect(await ok('[(ex-message "s") (ex-data "s") (ex-message nil) (ex-data {:data 1}) (ex-message {:message "m"})]')).toBe("[nil nil nil nil nil]");
  });

  it("an ex-info look-alike map is not tagged: its data is the whole map", async () => {
    expect(await ok('(try (throw {:message "m" :data {:a 1}}) (catch e [(ex-message e) (ex-data e)]))')).toBe('["m" {:message "m" :data {:a 1}}]');
  });
});

describe("limit errors", () => {
  it("cannot be caught", async () => {
    const e = await fails("(try (loop [] (recur)) (catch e :caught))", { limits: { maxLoopIterations: 1_000 } });
    expect(e.kind).toBe("loop_limit_exceeded");
    const f = await fails("(try (loop [i 0] (recur (inc i))) (catch e :caught))", { limits: { maxFuel: 5_000 } });
    expect(f.kind).toBe("fuel_exhausted");
  });

  // (where :t includes x) read a field it cannot search as false by catching whatever went wrong:
  // the budget running out inside its comparisons too, so the program went on with a wrong answer.
  it("are not taken by where's includes for a field it cannot search", async () => {
    const ctx = { rows: [{ t: Array.from({ length: 3_000 }, (_, i) => ({ a: i })) }] };
    const src = "(count (filter (where :t includes {:a 2999}) data/rows))";
    const full = await evaluate(src, { ctx });
    expect(full.ok && full.value).toBe(1);
    const used = full.stats.fuelUsed;
    for (const maxFuel of [Math.floor(used / 2), used - 1]) {
      const r = await evaluate(src, { ctx, limits: { maxFuel } });
      expect(!r.ok && r.error.kind, `maxFuel ${maxFuel} of ${used}`).toBe("fuel_exhausted");
    }
    // A field that is no collection is still no match.
    expect(await ok("(count (filter (where :t includes 1) [{:t 5} {:t :k} {:t inc} {:t #\"a\"} {:t [1]}]))")).toBe("1");
  });

  it("skip finally blocks", async () => {
    const r = await evaluate('(try (loop [] (recur)) (finally (println "cleanup")))', { limits: { maxLoopIterations: 1_000 } });
    expect(r.ok).toBe(false);
    expect(r.prints).toEqual([]);
  });

  it("cannot be forged by throwing a map that looks like one", async () => {
    const src = '(throw {:kind :loop_limit_exceeded :message "more than 1000 loop iterations"})';
    const e = await fails(src);
    expect(e.kind).toBe("exception");
    expect(await ok(`(try ${src} (catch e (:kind e)))`)).toBe(":exception");
    const g = await fails('(throw (ex-info "fuel" {:kind :fuel_exhausted}))');
    expect(g.kind).toBe("exception");
  });
});
