import { describe, expect, it } from "vitest";
import { renderFeedback } from "../../src/trace/feedback.js";
import { Recorder } from "../../src/trace/record.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import type { DefinitionTrace, ToolCallTrace, Turn } from "../../src/trace/trace.js";
import { definitionLine, definitionSample, ednValue, noteLine, renderSummary, resultShape, toolLine, type SummaryOptions } from "../../src/history/summary.js";
import { summaryKey, type TurnPlan } from "../../src/history/compressed.js";
import { toLisp } from "../../src/lisp/interop.js";
import { prStr } from "../../src/lisp/printer.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { LMap, type Value } from "../../src/lisp/values.js";

/** A map with string keys, as a program builds with (into {} ...) from strings. */
function toLispDict(m: Map<string, unknown>): Value {
  return LMap([...m].map(([k, v]): [Value, Value] => [k, toLisp(v)]));
}

const opts: SummaryOptions = { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 };
const recorder = new Recorder();

function data(name: string, value: unknown, doc?: string): DefinitionTrace {
  return recorder.definition(name, { value: toLisp(value), doc });
}

function fn(name: string, params: string, doc?: string): DefinitionTrace {
  const d: DefinitionTrace = { name, kind: "function", type: "function", sample: `#fn[${name}]`, params, source: `(defn ${name} ${params} nil)` };
  if (doc !== undefined) d.doc = doc;
  return d;
}

function turn(partial: Partial<Turn>): Turn {
  return {
    number: 1,
    messages: [],
    reply: "",
    program: null,
    status: "ok",
    prints: [],
    toolCalls: [],
    definitions: [],
    memory: [],
    usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmMs: 0, execMs: 0 },
    ...partial,
  };
}

const users = [
  { name: "Alice", email: "alice@example.com", role: "admin" },
  { name: "Bob", email: "bob@example.com", role: "user" },
  { name: "Carol", email: "carol@example.com", role: "user" },
  { name: "Dan", email: "dan@example.com", role: "user" },
  { name: "Eve", email: "eve@example.com", role: "admin" },
];

describe("definition lines", () => {
  it("lists a function with its parameters and docstring", () => {
    expect(definitionLine(fn("fetch-users", "[category]", "Fetches users by category"), false, "sample", opts)).toBe('; Function: fetch-users [category] - "Fetches users by category"');
    expect(definitionLine(fn("helper", "[x y]"), false, "sample", opts)).toBe("; Function: helper [x y]");
  });

  it("lists data with docstring, type, size and a bounded sample", () => {
    const line = definitionLine(data("users", users, "Active users from API"), false, "sample", opts);
    expect(line.startsWith('; Defined: users - "Active users from API" = vector[5], sample: [{:name "Alice"')).toBe(true);
    // The size is in the type label; the sample carries no "(N items ...)" note.
    expect(line).toMatch(/ = vector\[5\], sample: \[\{:name "Alice" .*\.\.\./);
    expect(line).not.toContain("showing first");
    expect(line.length).toBeLessThan(200);
  });

  it("leaves the sample out when the turn printed", () => {
    expect(definitionLine(data("users", users, "Active users from API"), false, "none", opts)).toBe('; Defined: users - "Active users from API" = vector[5]');
  });

  // No blind values: scalars and short strings show themselves in every mode; once the
  // output is dropped ("shape"), collections show what their elements hold.
  it.each([
    ["an integer", 42, "none", "= 42"],
    ["a float", 0.1625, "shape", "= 0.1625"],
    ["a short string", "north", "sample", '= "north"'],
    ["a boolean", true, "none", "= true"],
    ["nil", null, "none", "= nil"],
    ["a long string once its output is dropped", "x".repeat(300), "shape", "= string[300]"],
    ["records, keys from all elements", [{ id: 1, score: 0.5 }, { id: 2, score: 1 }, { id: 3, score: 0.25, note: "late" }, { id: 4, score: 0.75 }], "shape", "= vector[4] of {:id integer, :score float|integer, :note nil|string}"],
    ["a dictionary", { north: 1.5, south: 2.5, east: 3, "north-east": 4.5, "south-west": 5.5, "far-west": 6 }, "shape", '= map[6] {"north" "south" "east" "north-east" "south-west" "far-west"} -> float|integer'],
    ["a record map", { "max-attempts": 5, "base-ms": 100, "max-ms": 60000, "jitter-ms": 250, "retry-on": "timeout", "give-up-message": "too many retries" }, "shape", "= map[6] {:max-attempts integer, :base-ms integer, :max-ms integer, :jitter-ms integer, :retry-on string, :give-up-message string}"],
    ["a vector of strings", Array.from({ length: 12 }, (_, i) => `item-${i}`), "shape", "= vector[12] of string"],
    ["a map of records", { s1: { min: 1.5, max: 9.5 }, s2: { min: 2, max: 8 }, s3: { min: 3, max: 7 }, s4: { min: 4, max: 6 } }, "shape", '= map[4] {"s1" "s2" "s3" "s4"} -> {:min integer|float, :max integer|float}'],
    // A collection whose EDN fits in 80 characters is its own best description.
    ["a small record map", { "max-attempts": 5, "base-ms": 100 }, "shape", "= map[2], sample: {:max-attempts 5 :base-ms 100}"],
    ["a small vector of strings", ["a", "b"], "shape", '= vector[2], sample: ["a" "b"]'],
    ["a small vector, whole", Array.from({ length: 8 }, (_, i) => i), "sample", "= vector[8], sample: [0 1 2 3 4 5 6 7]"],
  ] as const)("shows %s as a value or a shape", (_, value, detail, expected) => {
    // Plain objects are records (keyword keys) unless written as a dictionary below.
    const v = _ === "a dictionary" || _ === "a map of records" ? new Map(Object.entries(value as object)) : value;
    const d = recorder.definition("x", { value: v instanceof Map ? toLispDict(v) : toLisp(v) });
    expect(definitionLine(d, false, detail, opts)).toBe(`; Defined: x ${expected}`);
  });

  it("names a superseded definition without its value", () => {
    expect(definitionLine(data("users", users), true, "sample", opts)).toBe("; Defined: users (redefined later)");
    expect(definitionLine(fn("f", "[x]", "doc"), true, "sample", opts)).toBe("; Function: f (redefined later)");
  });

  it("samples with the view's item and character bounds, read back from the EDN", () => {
    const d = data("xs", Array.from({ length: 40 }, (_, i) => i));
    expect(definitionSample(d, opts)).toBe("[0 1 2 ...]");
    expect(definitionSample(d, { ...opts, sampleItems: 5 })).toBe("[0 1 2 3 4 ...]");
    const s = data("s", "x".repeat(500));
    expect(definitionSample(s, { ...opts, sampleChars: 20 }).length).toBeLessThan(30);
    expect(definitionSample(s, { ...opts, sampleChars: 200 }).length).toBeGreaterThan(190);
  });

  it("prints floats in samples without binary rounding noise", () => {
    const d = data("by-region", { north: 14484.200000000003, east: 0.1 + 0.2, west: 2.0000000000000004, tiny: 1.234567890123456e-7 });
    expect(d.edn).toContain("14484.200000000003");
    expect(definitionSample(d, { ...opts, sampleItems: 4 })).toBe("{:north 14484.2 :east 0.3 :west 2.0 :tiny 1.23456789012E-7}");
  });

  it("falls back to the recorded sample when the value had no EDN", () => {
    const d: DefinitionTrace = { name: "big", kind: "value", type: "vector", size: 100000, sample: "[1 2 3 ...]" };
    expect(definitionSample(d, opts)).toBe("[1 2 3 ...]");
  });

  // A value whose EDN passes the trace's budget (4,096 characters: 80 rows of a tool's result)
  // has no EDN to read back, and its line used the sample as recorded: with the "(80 items,
  // showing first 3)" note and no record keys past the cut, so :qty, :price and :note were in no
  // line of the prompt, whether the line showed a sample or (its output dropped) a shape.
  it("records every record key with the sample of a value too big for its EDN", () => {
    const rows = Array.from({ length: 80 }, (_, i) => ({ id: i, sku: `SKU-${1000 + i}`, city: ["Oslo", "Lima"][i % 2], qty: i % 13, price: (i * 37) % 500, note: `note ${i}` }));
    const d = data("rows", rows);
    expect(d.edn).toBeUndefined();
    for (const detail of ["sample", "shape"] as const) {
      const line = definitionLine(d, false, detail, opts);
      expect(line, detail).toMatch(/^; Defined: rows = vector\[80\], sample: \[\{:id 0 :sku "SKU-1000" .*\], keys: :id :sku :city :qty :price :note$/);
      expect(line, detail).not.toContain("showing first");
    }
  });

  // A shape lists eight keys with their types and counts the rest (`... 4 more`): once the output
  // of a turn that printed records of twelve keys was dropped, four of them were in no line of
  // the prompt, though the model had seen them and writes its code against them.
  it("names every record key on a shape line that lists only some of them", () => {
    const keys = Array.from({ length: 12 }, (_, i) => `attr-${i}`);
    const rows = Array.from({ length: 10 }, (_, r) => Object.fromEntries(keys.map((k, i) => [k, r * i])));
    const line = definitionLine(data("w", rows), false, "shape", opts);
    expect(line).toMatch(/^; Defined: w = vector\[10\] of \{:attr-0 integer, .*, \.\.\. 4 more\}, keys: /);
    expect(line.split(", keys: ")[1].split(" ").sort()).toEqual(keys.map((k) => `:${k}`).sort());
    const byRegion = data("by-region", Object.fromEntries(["north", "south"].map((r) => [r, Object.fromEntries(keys.map((k, i) => [k, i]))])));
    expect(definitionLine(byRegion, false, "shape", opts).split(", values' keys: ")[1].split(" ").sort()).toEqual(keys.map((k) => `:${k}`).sort());
    // Every key shown already: nothing added.
    expect(definitionLine(data("few", rows.map((r) => ({ a: r["attr-1"], b: 1 }))), false, "shape", opts)).toBe("; Defined: few = vector[10] of {:a integer, :b integer}");
  });

  // A value computed from hidden context is recorded with stand-ins in its EDN
  // (`<hidden string from data/_tok>`), which did not read back as data: its line fell back to
  // the recorded sample, with the "(8 items, showing first 3)" note, a stand-in cut inside a
  // quoted string, no record keys past the cut, and no shape once its output was dropped.
  it("reads a value holding hidden parts back with its stand-ins: record keys, shapes, no note", async () => {
    const program = '(def recs (vec (for [i (range 8)] {:id i :tok data/_tok :name (str "item-number-" i) :region "north" :score 1.5})))';
    const result = await evaluate(program, { ctx: { _tok: "K7Z2Q9-B3M8X4-W5R2" } });
    expect(result.ok).toBe(true);
    const [d] = new Recorder().evaluation(result).definitions;
    const sample = showStandIns(definitionLine(d, false, "sample", opts));
    expect(sample).toMatch(/^; Defined: recs = vector\[8\], sample: \[\{:id <hidden integer derived from data\/_tok> .*, keys: :id :tok :name :region :score$/);
    expect(sample).not.toContain("showing first");
    expect(showStandIns(definitionLine(d, false, "shape", opts))).toBe("; Defined: recs = vector[8] of {:id integer, :tok string, :name string, :region string, :score float}");
    // Text in the data that merely reads like a stand-in is a string.
    expect(prStr(ednValue('["<hidden string from data/_x>" <hidden integer from data/_y>]') as never)).toBe('["<hidden string from data/_x>" "\uE000hidden integer from data/_y\uE001"]');
  });

  // A sample cut inside a stand-in showed `:tok "<hidden string from da..."`, which reads as an
  // ordinary string of the data's: a stand-in is written whole or cut off before it.
  it("cuts a sample before a stand-in that does not fit, never inside it", async () => {
    const result = await evaluate('(def cfg {:name "alpha-service-endpoint" :region "north" :tok data/_tok :x 1})', { ctx: { _tok: "K7Z2Q9-B3M8X4-W5R2" } });
    expect(result.ok).toBe(true);
    const [d] = new Recorder().evaluation(result).definitions;
    expect(showStandIns(definitionLine(d, false, "sample", opts))).toBe('; Defined: cfg = map[4], sample: {:name "alpha-service-endpoint" :region "north" :tok ...}, keys: :name :region :tok :x');
    expect(showStandIns(definitionLine(d, false, "sample", { ...opts, sampleChars: 200 }))).toContain(":tok <hidden string from data/_tok> ...}");
  });

  // A turn's summary is memoized under a key naming the plan's sets. A superseded name was written
  // untagged, so a turn defining both `r:y` and `y` had one key for "r:y redefined later" and for
  // "y read by a later program": two different summaries, one served for the other.
  it("memoizes a summary under a key no other plan of the turn shares", () => {
    const t = turn({ prints: ["1"], definitions: [data("r:y", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), data("y", [11, 12, 13, 14, 15, 16, 17, 18, 19, 20])] });
    const plan = (p: Partial<TurnPlan>): TurnPlan => ({ full: null, printsShown: 0, superseded: undefined, redefines: undefined, read: undefined, reads: undefined, ...p });
    const superseded = plan({ superseded: new Set(["r:y"]) });
    const read = plan({ read: new Set(["y"]) });
    expect(renderSummary(t, superseded, opts).text).not.toBe(renderSummary(t, read, opts).text);
    expect(summaryKey(superseded, opts)).not.toBe(summaryKey(read, opts));
  });

  it("reads EDN data back, and refuses anything that is not data", () => {
    const v = { a: [1, 2.5, "x", null, true], b: { c: "d" } };
    expect(prStr(ednValue(prStr(toLisp(v))) as never)).toBe(prStr(toLisp(v)));
    expect(prStr(ednValue("#{:a 1.0}") as never)).toMatch(/#\{(:a 1\.0|1\.0 :a)\}/);
    expect(ednValue("(+ 1 2)")).toBeUndefined();
    expect(ednValue("[1 x]")).toBeUndefined();
    expect(ednValue("[1 2")).toBeUndefined();
    expect(ednValue("1 2")).toBeUndefined();
    // Functions read back as functions, printed as they were; one whose label does not end, as nothing.
    const fns = '{:a #fn[[a b] c] :b #fn[inc] :c #fn[#(+ % 1)] :d "#fn[x] \\" #fn[y]"}';
    expect(prStr(ednValue(fns) as never)).toBe(fns);
    expect(ednValue("[#fn[x")).toBeUndefined();
  });

  // A value holding functions read back as nothing: its line showed the recorded sample, with its
  // `(6 items, showing first 3)` note and no keys past the cut, and a table of six handlers kept
  // three of its keys in the prompt once its output was dropped.
  it("shows a value holding functions as it shows data: a shape, or a sample with every key", () => {
    const fns = ["double", "taxed", "halve", "negate", "square", "cube"];
    const edn = `{${fns.map((k) => `:${k} #fn[x]`).join(" ")}}`;
    const d = { name: "handlers", kind: "value" as const, type: "map", size: 6, sample: "{:double #fn[x] :taxed #fn[x] :halve #fn[x] ...} (6 items, showing first 3)", edn };
    const t = turn({ definitions: [d], prints: ["12.0"] });
    expect(renderSummary(t, { printsShown: 0 }, opts).text).toContain(`; Defined: handlers = map[6] {${fns.map((k) => `:${k} function`).join(", ")}}`);
    expect(renderSummary(t, { printsShown: 0, read: new Set(["handlers"]) }, opts).text).toContain("; Defined: handlers = map[6], sample: {:double #fn[x] :taxed #fn[x] :halve #fn[x] ...}, keys: :double :taxed :halve :negate :square :cube");
  });
});

describe("tool lines", () => {
  const call = (args: unknown, result: unknown, error?: string): ToolCallTrace => ({ name: "search", args, result, error, durationMs: 1 });

  it("shows the arguments and the shape of the result", () => {
    const hits = [
      { id: 1, title: "Laptop review", score: 0.9, tags: ["a"] },
      { id: 2, title: "Mouse review", score: 0.4, tags: [] },
    ];
    expect(toolLine(call({ query: "laptops", limit: 10 }, hits), opts)).toBe('; Tool: search {:query "laptops" :limit 10} -> vector[2] of {:id integer, :title string, :score float, :tags vector}');
    expect(toolLine(call({}, []), opts)).toBe("; Tool: search -> vector[0]");
    expect(toolLine(call({ q: "x" }, 42), opts)).toBe('; Tool: search {:q "x"} -> 42');
    expect(toolLine(call({ q: "x" }, "short"), opts)).toBe('; Tool: search {:q "x"} -> "short"');
    expect(toolLine(call({ q: "x" }, "long ".repeat(100)), opts)).toBe('; Tool: search {:q "x"} -> string[500]');
    expect(toolLine(call({ q: "x" }, null), opts)).toBe('; Tool: search {:q "x"} -> nil');
  });

  // A shape lists eight keys and counts the rest, within 160 characters: tickets of twenty fields,
  // searched and only their ids printed, read `-> vector[12] of {(keyword "csat score") integer,
  // :assignee string, ... :first-response-minutes...` once that output was dropped, and `:team`, which
  // the next program filtered on, was in no line. A definition's shape names every key after it.
  it("names every record key of a result after its shape, as after a definition's", () => {
    const fields = ["id", "subject", "status", "priority", "assignee", "created", "updated", "channel", "customer", "sla_hours", "first-response-minutes", "region", "product", "severity", "escalated", "csat score", "team"];
    const tickets = [0, 1].map((i) => Object.fromEntries(fields.map((f) => [f, `${f}-${i}`])));
    const line = toolLine(call({ q: "refund" }, tickets), opts);
    expect(line).toMatch(/^; Tool: search \{:q "refund"\} -> vector\[2\] of \{\(keyword "csat score"\) string, .*\.\.\., keys: /);
    const keys = line.slice(line.indexOf(", keys: ") + 8);
    expect(keys.split(/ (?=[:(])/).sort()).toEqual(fields.map((f) => (f.includes(" ") ? `(keyword "${f}")` : `:${f}`)).sort());
    // One whose shape names every key lists none.
    expect(toolLine(call({ q: "x" }, [{ id: 1, title: "a long enough title to make the result EDN longer than eighty characters" }]), opts)).toBe('; Tool: search {:q "x"} -> vector[1] of {:id integer, :title string}');
  });

  // A small result (EDN of 80 characters or less) is shown whole, as a small definition is: a
  // ticket whose id the program only printed read `{:id string, :status string}` once that output
  // was dropped, the id it must pass on in no line of the prompt. Calls of one tool whose small
  // results differ get a line each while every other group keeps its line (merged into one shape,
  // three health checks read `-> {:status string, :p95-ms integer}` once their printed statuses were
  // dropped, which service was degraded in no line); alike, they share one; past the line budget
  // (a fan-out), one shape.
  const health = (service: string, status: string): ToolCallTrace => ({ name: "health", args: { service }, result: { status }, durationMs: 1 });
  it.each([
    [[call({ title: "x" }, { id: "TCK-77", status: "open" })], '; Tool: search {:title "x"} -> {:id "TCK-77" :status "open"}'],
    [[call({ q: "a" }, [5, 8])], '; Tool: search {:q "a"} -> [5 8]'],
    [[call({ q: "a" }, [5]), call({ q: "b" }, [7, 9])], '; Tool: search {:q "a"} -> [5]\n; Tool: search {:q "b"} -> [7 9]'],
    [[health("api", "ok"), health("db", "degraded"), health("cache", "ok"), call({ q: "a" }, 1)], '; Tool: health {:service "api"} -> {:status "ok"}\n; Tool: health {:service "db"} -> {:status "degraded"}\n; Tool: health {:service "cache"} -> {:status "ok"}\n; Tool: search {:q "a"} -> 1'],
    [[health("api", "ok"), health("cache", "ok")], '; Tool: health x2 {:service "api"|"cache"} -> {:status "ok"}'],
    [Array.from({ length: 12 }, (_, i) => health(`s${i}`, i === 3 ? "degraded" : "ok")), '; Tool: health x12 {:service "s0"|"s1"|"s2"|"s3"|"s4"|"s5"|"s6"|"s7"|"s8"|"s9"|"s10"|"s11"} -> {:status string}'],
    [[call({ q: "a" }, { id: "TCK-88231-ab", status: "open", title: "x", url: "https://t.example.com/TCK-88231-ab/details" })], '; Tool: search {:q "a"} -> {:id string, :status string, :title string, :url string}'],
  ])("shows a small result whole on a line of its own: %#", (calls, lines) => {
    expect(renderSummary(turn({ toolCalls: calls }), { printsShown: 0 }, opts).text).toBe(lines);
    if (calls.length === 1) expect(toolLine(calls[0], opts)).toBe(lines);
  });

  it("shows a failed call with its error", () => {
    expect(toolLine(call({ q: "x" }, undefined, "timeout\nafter 5s"), opts)).toBe('; Tool: search {:q "x"} -> error: timeout after 5s');
  });

  // Arguments were a sample of three items per collection whatever their size: a batch of five ids
  // read `{:ids ["o1" "o2" "o3" ...]}` (33 characters of EDN), and once the program was summarized the
  // ids the next batch must skip were in no line. Arguments that fit in the sample's budget are whole.
  it.each([
    [{ ids: ["o1", "o2", "o3", "o4", "o5"] }, '{:ids ["o1" "o2" "o3" "o4" "o5"]}'],
    [{ weights: { a: 1, b: 2, c: 3, d: 4, e: 5 } }, "{:weights {:a 1 :b 2 :c 3 :d 4 :e 5}}"],
    [{ to: ["ops@example.com", "cfo@example.com", "ceo@example.com", "legal@example.com"], subject: "Outage" }, '{:to ["ops@example.com" "cfo@example.com" "ceo@example.com" ...] :subject "Outag...}'],
  ])("shows arguments that fit in the sample's budget whole: %j", (args, text) => {
    expect(toolLine(call(args, 1), opts)).toBe(`; Tool: search ${text} -> 1`);
  });

  it("bounds a shape with many keys and deep nesting", () => {
    const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, { deep: { deeper: [1] } }]));
    const s = resultShape(wide, 1000);
    expect(s).toContain("... 12 more");
    // More keys than are shown: the first by name (a large map's own order is its hashes').
    expect(s).toContain("{:k0 {:deep map}, :k1 {:deep map}, :k10 {:deep map}");
    expect(resultShape(wide, 30).length).toBe(33);
  });
});

describe("turn summaries", () => {
  it("renders the reference design's example", () => {
    const t = turn({
      number: 2,
      definitions: [data("users", users, "Active users from API"), fn("fetch-users", "[category]", "Fetches users by category")],
      prints: ["Found 5 users"],
    });
    expect(renderSummary(t, { printsShown: 1 }, opts).text).toBe(
      [
        '; Function: fetch-users [category] - "Fetches users by category"',
        '; Defined: users - "Active users from API" = vector[5]',
        "; Output:",
        "Found 5 users",
      ].join("\n"),
    );
  });

  it("shows samples when the turn did not print", () => {
    const t = turn({ definitions: [data("reviews", "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Monitor 4.8/5, lots more text here")] });
    const s = renderSummary(t, { printsShown: 0 }, opts).text;
    expect(s).toContain('; Defined: reviews = string[102], sample: "Customer Review Summary');
    expect(s).not.toContain("; Output");
  });

  it("groups calls of one tool with the same outcome, listing each distinct argument", () => {
    const calls: ToolCallTrace[] = [14, 15, 16].map((hour) => ({ name: "fetch-logs", args: { service: "payments", hour }, result: ["a", "b"], durationMs: 1 }));
    calls.push({ name: "fetch-logs", args: { service: "payments", hour: 17 }, error: "timeout", durationMs: 1 });
    const r = renderSummary(turn({ toolCalls: calls }), { printsShown: 0 }, opts);
    expect(r.text.split("\n")).toEqual(['; Tool: fetch-logs x3 {:service "payments" :hour 14|15|16} -> ["a" "b"]', '; Tool: fetch-logs {:service "payments" :hour 17} -> error: timeout']);
    expect(r.toolCallsListed).toBe(4);
  });

  // A JSON key the reader cannot read as a keyword: one call's line wrote it as the call that
  // makes it, the merged line of several calls wrote `:${key}` raw, `{:Order ID 1|2 :a b "x"}`,
  // which reads as the keys :Order and :a beside the symbols ID and b.
  it("writes an argument key the reader cannot read as a keyword the same way on a merged line", () => {
    const calls: ToolCallTrace[] = [1, 2].map((id) => ({ name: "lookup", args: { "Order ID": id, "a b": "x" }, result: 5, durationMs: 1 }));
    expect(renderSummary(turn({ toolCalls: calls.slice(0, 1) }), { printsShown: 0 }, opts).text).toBe('; Tool: lookup {(keyword "Order ID") 1 (keyword "a b") "x"} -> 5');
    expect(renderSummary(turn({ toolCalls: calls }), { printsShown: 0 }, opts).text).toBe('; Tool: lookup x2 {(keyword "Order ID") 1|2 (keyword "a b") "x"} -> 5');
  });

  it("lists tool call groups up to the limit and counts the rest by tool", () => {
    const calls: ToolCallTrace[] = Array.from({ length: 14 }, (_, i) => ({ name: i % 2 === 0 ? "fetch" : "lookup", args: { id: i }, result: i % 3 === 0 ? i : "x".repeat(i), durationMs: 1 }));
    const r = renderSummary(turn({ toolCalls: calls }), { printsShown: 0 }, { ...opts, toolCallsPerTurn: 4 });
    expect(r.text.split("\n").filter((l) => l.startsWith("; Tool: "))).toHaveLength(4);
    expect(r.text).toContain("; Tool calls not listed: 10 (fetch x5, lookup x5)");
    expect(r.toolCallsListed).toBe(4);
  });

  it("bounds the distinct values listed for one argument", () => {
    const calls: ToolCallTrace[] = Array.from({ length: 20 }, (_, i) => ({ name: "get", args: { id: i }, result: 1, durationMs: 1 }));
    expect(renderSummary(turn({ toolCalls: calls }), { printsShown: 0 }, opts).text).toContain("; Tool: get x20 {:id 0|1|2|3|4|5|6|7|8|9|10|11|...(8 more)} -> 1");
  });

  it("keeps the most recent println lines and says how many were dropped", () => {
    const t = turn({ prints: ["one", "two", "three", "four"] });
    expect(renderSummary(t, { printsShown: 2 }, opts).text).toBe("; Output (2 dropped):\nthree\nfour");
    expect(renderSummary(t, { printsShown: 0 }, opts).text).toBe("; Output (4 dropped)");
  });

  it("shows the head of a cut output the model saw, with the cut note, also when older lines are dropped", () => {
    const prints = Array.from({ length: 8 }, (_, k) => `line ${k} ${"x".repeat(20)}`);
    const feedback = renderFeedback(turn({ prints }), { maxTurns: 5 }, { prints: true, maxPrintChars: 100 });
    const seen = feedback.split("\n").filter((l) => l.startsWith("line "));
    expect(seen.length).toBeLessThan(prints.length);
    const whole = renderSummary(turn({ prints }), { printsShown: seen.length }, { ...opts, maxPrintChars: 100 }).text;
    expect(whole).toBe(`; Output:\n${seen.join("\n")}\n${feedback.split("\n").find((l) => l.startsWith("[output cut:"))}`);
    const part = renderSummary(turn({ prints }), { printsShown: 2 }, { ...opts, maxPrintChars: 100 }).text.split("\n");
    expect(part).toEqual([`; Output (${seen.length - 2} dropped):`, ...seen.slice(-2), expect.stringMatching(/^\[output cut: showing \d+ of \d+ characters/)]);
  });

  it("once all of a turn's output is dropped, shows the keys of its records but no samples", () => {
    const t = turn({ definitions: [data("users", users, "Active users from API"), data("n", 5), fn("by-role", "[role]")], prints: ["Found 5 users", "2 admins"] });
    expect(renderSummary(t, { printsShown: 1 }, opts).text).toBe('; Function: by-role [role]\n; Defined: users - "Active users from API" = vector[5]\n; Defined: n = 5\n; Output (1 dropped):\n2 admins');
    expect(renderSummary(t, { printsShown: 0 }, opts).text.split("\n")).toEqual([
      "; Function: by-role [role]",
      '; Defined: users - "Active users from API" = vector[5] of {:name string, :email string, :role string}',
      "; Defined: n = 5",
      "; Output (2 dropped)",
    ]);
  });

  it("names the definition that holds a tool's whole result instead of describing it twice", () => {
    const result = [{ id: 1, title: "a" }, { id: 2, title: "b" }];
    const calls: ToolCallTrace[] = [
      { name: "search", args: { q: "a" }, result, durationMs: 1 },
      { name: "search", args: { q: "b" }, result: [{ id: 3, title: "c" }], durationMs: 1 },
      { name: "count", args: {}, result: 2, durationMs: 1 },
    ];
    const t = turn({ definitions: [data("hits", result), data("n", 2)], toolCalls: calls });
    expect(renderSummary(t, { printsShown: 0 }, opts).text.split("\n")).toEqual([
      "; Defined: hits = vector[2], sample: [{:id 1 :title \"a\"} {:id 2 :title \"b\"}]",
      "; Defined: n = 2",
      '; Tool: search {:q "a"} -> hits',
      '; Tool: search {:q "b"} -> [{:id 3 :title "c"}]',
      "; Tool: count -> 2",
    ]);
    // A superseded holder is not named: its name now means a later value (here the results are small, so each is shown).
    expect(renderSummary(t, { printsShown: 0, superseded: new Set(["hits"]) }, opts).text).toContain('; Tool: search {:q "a"} -> [{:id 1 :title "a"} {:id 2 :title "b"}]\n; Tool: search {:q "b"} -> [{:id 3 :title "c"}]');
  });

  it("merges calls whose results differ only in sizes, giving the sizes as ranges", () => {
    const calls: ToolCallTrace[] = [3, 1, 7].map((k, i) => ({ name: "get-orders", args: { id: `c${i}` }, result: Array.from({ length: k }, () => ({ total: 1.5 })), durationMs: 1 }));
    calls.push({ name: "get-orders", args: { id: "c9" }, result: "vector[2]", durationMs: 1 });
    expect(renderSummary(turn({ toolCalls: calls }), { printsShown: 0 }, opts).text.split("\n")).toEqual([
      '; Tool: get-orders x3 {:id "c0"|"c1"|"c2"} -> vector[1..7] of {:total float}',
      '; Tool: get-orders {:id "c9"} -> "vector[2]"',
    ]);
  });

  it("marks a summarized turn that failed", () => {
    expect(renderSummary(turn({ status: "error" }), { printsShown: 0 }, opts).text).toBe("; (failed program omitted)");
    expect(renderSummary(turn({ status: "no_code" }), { printsShown: 0 }, opts).text).toBe("; (reply without a program omitted)");
  });

  it("says when a turn did nothing visible", () => {
    expect(renderSummary(turn({}), { printsShown: 0 }, opts).text).toBe("; (no definitions, tool calls or output)");
  });

  it("leaves superseded definitions out and keeps the others", () => {
    const t = turn({ definitions: [data("a", 1), data("b", [1, 2])] });
    const s = renderSummary(t, { printsShown: 0, superseded: new Set(["a"]) }, opts).text;
    expect(s).toBe("; Defined: b = vector[2], sample: [1 2]");
  });

  it("names what a turn defined when every definition is superseded and nothing else is left, never saying it defined nothing", () => {
    const t = turn({ definitions: [data("a", 1), fn("f", "[x]", "doc")] });
    const s = renderSummary(t, { printsShown: 0, superseded: new Set(["a", "f"]) }, opts).text;
    expect(s).toBe("; Defined: a (redefined later)\n; Function: f (redefined later)");
  });

  it("shows the sample of a definition a later program read once its output is dropped, and earlier definitions it read itself as ; Read: lines", () => {
    const t = turn({ definitions: [data("a", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]), data("b", Array.from({ length: 28 }, (_, i) => 100 + i))], prints: ["x", "y"] });
    const read = new Set(["a"]);
    // Output shown whole: no samples (the output is the data).
    expect(renderSummary(t, { printsShown: 2, read }, opts).text.split("\n").slice(0, 2)).toEqual(["; Defined: a = vector[30]", "; Defined: b = vector[28]"]);
    // Output dropped: the read one keeps its sample, the other shows its shape.
    const dropped = renderSummary(t, { printsShown: 0, read }, opts).text.split("\n");
    expect(dropped[0]).toMatch(/^; Defined: a = vector\[30\], sample: \[1 2 3/);
    expect(dropped[1]).toBe("; Defined: b = vector[28] of integer");
    const reader = renderSummary(turn({ prints: ["z"] }), { printsShown: 1, reads: [data("c", [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30])] }, opts);
    expect(reader.text.split("\n")[0]).toMatch(/^; Read: c = vector\[24\], sample: \[7 8 9/);
    // What the program read is what it taught: the size rule does not count it.
    expect(reader.code).not.toContain("; Read:");
  });

  it("is the same text for the same turn, whatever object holds it", () => {
    const t = turn({ definitions: [data("users", users)], toolCalls: [{ name: "q", args: { a: 1 }, result: [1], durationMs: 3 }], prints: ["x"] });
    const clone = JSON.parse(JSON.stringify(t)) as Turn;
    expect(renderSummary(clone, { printsShown: 1 }, opts).text).toBe(renderSummary(t, { printsShown: 1 }, opts).text);
  });
});

describe("tool results held by a definition", () => {
  it("are linked by identity when the turn runs, however large the result", async () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, title: `row number ${i}` }));
    const result = await evaluate("(def big (tool/rows {})) (def ids (mapv :id (tool/rows {:again true}))) (def head (take 2 big))", { tools: { rows: () => rows } });
    const rec = new Recorder().evaluation(result);
    // Too big for the trace's EDN: equality of EDN could not link it.
    expect(rec.definitions.find((d) => d.name === "big")?.edn).toBeUndefined();
    expect(rec.toolCalls.map((c) => c.holder)).toEqual(["big", undefined]);
    const text = renderSummary(turn({ ...rec, toolCalls: rec.toolCalls }), { printsShown: 0 }, opts).text;
    expect(text).toContain("; Tool: rows -> big");
    expect(text).toContain("; Tool: rows {:again true} -> vector[400] of {:id integer, :title string}");
    // A holder redefined later is not named: its name means a later value now.
    expect(renderSummary(turn(rec), { printsShown: 0, superseded: new Set(["big"]) }, opts).text).not.toContain("-> big");
  });
});

describe("noteLine", () => {
  const fence = "`".repeat(3);
  it("keeps the prose around the program, whitespace folded, and nothing when there is none", () => {
    expect(noteLine(`First the totals.\n${fence}clojure\n(println 1)\n${fence}\n  Then   the rest.`)).toBe("; Note: First the totals. Then the rest.");
    expect(noteLine(`${fence}clojure\n(return 1)\n${fence}`)).toBe("");
    // An unclosed fence runs to the end of the reply.
    expect(noteLine(`Plan.\n${fence}clojure\n(def x 1)`)).toBe("; Note: Plan.");
  });

  it("leaves the program out however it came: fenced with ~~~, or a bare form", () => {
    expect(noteLine("Sum.\n~~~clojure\n(def t (+ 1 2))\n~~~\nDone.", "(def t (+ 1 2))")).toBe("; Note: Sum. Done.");
    expect(noteLine("(def t (+ 1 2))\n(println t)", "(def t (+ 1 2))\n(println t)")).toBe("");
  });

  // A bare program is the whole answer, repaired before it ran (smart quotes, odd spaces): not found
  // as written, it was kept as the note, '; Note: (def total (->> ... “even” ...' as "your words".
  it("leaves out a bare program the extractor repaired", () => {
    const reply = "(def kind “even”)\n(println\u00a0“kind” kind)";
    expect(noteLine(reply, '(def kind "even")\n(println "kind" kind)')).toBe("");
    expect(noteLine(`Kind first.\n${fence}clojure\n(def kind “even”)\n${fence}`, '(def kind "even")')).toBe("; Note: Kind first.");
  });

  it("keeps the answer's prose, not a reasoning model's <think> block", () => {
    const reply = `<think>\nHmm, maybe count first? ${fence}clojure\n(count rows)\n${fence}\n</think>\nSumming the rows.\n${fence}clojure\n(println 1)\n${fence}`;
    expect(noteLine(reply, "(println 1)")).toBe("; Note: Summing the rows.");
    expect(noteLine(`Let me think.\n</think>\n${fence}clojure\n(println 1)\n${fence}`, "(println 1)")).toBe("");
  });

  it("cuts a long prose at a word boundary within 160 characters, and a single wider word at 160", () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
    const note = noteLine(words).slice("; Note: ".length);
    expect(note.endsWith("...")).toBe(true);
    const kept = note.slice(0, -3);
    expect(kept.length).toBeLessThanOrEqual(160);
    expect(words.startsWith(kept + " ")).toBe(true);
    const wide = "x".repeat(500);
    expect(noteLine(wide)).toBe(`; Note: ${"x".repeat(160)}...`);
    expect(noteLine("y".repeat(160))).toBe(`; Note: ${"y".repeat(160)}`);
  });

  // Prose without spaces between words (Japanese, Chinese) was cut at its last space, which could
  // be the one after a leading label: '; Note: 結果:...', all of what the model concluded gone.
  it("cuts prose whose last space within 160 characters is near its start at 160, not at that space", () => {
    const ja = "東京の注文は四百二十件で、保留中は三十七件です。割引率は十二パーセント、上限は五千円です。".repeat(6);
    for (const label of ["結果: ", "Step 2: "]) {
      const note = noteLine(label + ja).slice("; Note: ".length);
      expect(note).toBe(`${(label + ja).slice(0, 160)}...`);
      expect(note).toContain("割引率は十二パーセント");
    }
  });
});
