// What a model needs from earlier turns stays in the compressed view (issue 20, item 3): its
// own prose for one prompt, small collections as values, every record key in a sample; and
// under a breakpoint cache errors stay in full rather than rewrite every later message.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { compressedView } from "../../src/history/compressed.js";
import { summaryLegend } from "../../src/history/legend.js";
import { renderSummary } from "../../src/history/summary.js";
import { defaultViewOptions, type ViewOptions } from "../../src/history/view.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { RunTrace } from "../../src/trace/trace.js";

const reply = (prose: string, body: string): string => `${prose}\n\n\`\`\`clojure\n${body}\n\`\`\``;
const options = (cacheModel: "token-prefix" | "breakpoint" = "token-prefix"): ViewOptions => ({ ...defaultViewOptions, compressHistory: true, cacheModel });

async function run(replies: string[], context: Record<string, unknown> = {}): Promise<RunTrace> {
  const agent = SubAgent.create({ prompt: "Work it out.", maxTurns: replies.length });
  const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), context });
  return step.trace;
}

// The turn budget: by default the turns the run used; a larger one leaves more prompts for a rewrite to pay back in.
const view = (trace: RunTrace, k: number, opts: ViewOptions, maxTurns = trace.turns.length) => compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns }, opts);
const text = (v: ReturnType<typeof view>): string => v.messages.map((m) => m.content).join("\n");

describe("keeping what a model needs", () => {
  it("keeps the model's prose as a ; Note: line for one prompt, at the end of the turn's summary", async () => {
    const trace = await run([
      reply("MAX_JOB_RETRIES = 3 is job-level, not part of the answer.", `(def retries 3)\n(println "retries" retries)`),
      reply("Next, the totals.", `(println "total" 10)`),
      reply("Done.", "(return 10)"),
    ]);
    // A budget of 20 turns: in a run of 3 these terse turns save too little to repay the legend.
    const second = view(trace, 1, options(), 20);
    const place = (second.turns ?? [])[0];
    expect(place.text.split("\n").at(-1)).toBe("; Note: MAX_JOB_RETRIES = 3 is job-level, not part of the answer.");
    // One prompt later the note is gone, and the earlier text is extended, not rewritten.
    const third = view(trace, 2, options(), 20);
    expect(text(third)).not.toContain("MAX_JOB_RETRIES");
    expect(text(third)).toContain("; Note: Next, the totals.");
    const before = String(second.messages[2].content);
    const summary = before.slice(0, before.lastIndexOf("\n; Note:"));
    expect(String(third.messages[2].content).startsWith(summary)).toBe(true);
  });

  // The extractor runs a program fenced with ~~~ as well as with ```: the note stripped only ```
  // blocks, so it read "; Note: Now the sum ... ~~~clojure (def total (->> rows ... (def biggest..."
  // (the program, cut mid-form, as "your words").
  it("keeps the program out of the note however it was fenced", async () => {
    const rows = "(def rows (->> (range 40) (map (fn [i] {:a i :b (* i i)})) (filter #(even? (:a %))) (vec)))\n(println \"rows\" (count rows))";
    const sum = "(def total (->> rows (map (fn [r] (+ (:a r) (:b r)))) (filter #(> % 10)) (reduce +)))\n(def biggest (->> rows (map (fn [r] (+ (:a r) (:b r)))) (filter #(> % 10)) (apply max)))\n(println \"total\" total biggest)";
    const trace = await run([reply("Rows first.", rows), `Now the sum of a and b over the rows above ten.\n\n~~~clojure\n${sum}\n~~~\n\nThen I return it.`, reply("Done.", "(return total)")]);
    expect(trace.turns[1].program).toContain("(def total");
    const note = text(view(trace, 2, options(), 20)).split("\n").find((l) => l.startsWith("; Note: Now"));
    expect(note).toBe("; Note: Now the sum of a and b over the rows above ten. Then I return it.");
  });

  it("with the breakpoint layout the note follows the latest feedback, and the breakpoint before it is where the next prompt hits", async () => {
    const trace = await run([reply("Counting first.", `(println "n" 3)`), reply("Then summing.", `(println "s" 6)`), reply("Done.", "(return 6)")]);
    // A budget of 20 turns: in a run of 3 these summaries save too little to repay the legend.
    const v = view(trace, 2, options("breakpoint"), 20);
    const last = v.messages.length - 1;
    expect(v.messages[last].content.endsWith("; Note: Then summing.")).toBe(true);
    expect(v.breakpoints).toEqual(last - 2 > 1 ? [1, last - 2, last - 1, last] : [1, last - 1, last]);
    // The messages before the note are the next prompt's, unchanged.
    const next = view(trace, 3, options("breakpoint"), 20);
    expect(next.messages.slice(0, last)).toEqual(v.messages.slice(0, last));
    expect(text(next)).not.toContain("Then summing.");
  });

  it("shows a small collection (EDN of 80 characters or less) as its value once its output is dropped, not its shape", async () => {
    const trace = await run([reply("Settings.", `(def cfg {:attempts 3 :delay 10 :mode "fast"})\n(println "ok")`), reply("Done.", "(return 1)")]);
    const summary = renderSummary(trace.turns[0], { superseded: undefined, printsShown: 0 }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 });
    expect(summary.text).toContain('; Defined: cfg = map[3], sample: {:attempts 3 :delay 10 :mode "fast"}');
    expect(summary.text).not.toContain("integer");
  });

  // A small collection the program wrote out was in no line while its turn's output was shown,
  // once the program was summarized: bench:history's code-search defines `(def policy "..."
  // {:attempts 5 :base-ms 200 :max-ms 20000})` beside printed search hits, and prompts 7-9 read
  // `policy = map[3]` before its final program took `(:attempts policy)`.
  it("shows a small collection the program wrote out beside output that does not print it", async () => {
    const trace = await run([
      reply("The retry policy as the code has it; next, who calls the retry helper.", `(def policy {:attempts 5, :base-ms 200\n             :max-ms 20000})\n(println "callers" 3)`),
      reply("Next.", `(println "more" 1)`),
      reply("Done.", "(return (:attempts policy))"),
    ]);
    for (const cacheModel of ["token-prefix", "breakpoint"] as const) {
      for (const k of [1, 2]) expect(text(view(trace, k, options(cacheModel), 20)), `${cacheModel} ${k}`).toMatch(/; Defined: policy = map\[3\], sample: \{:attempts 5 :base-ms 200 :max-ms 20000\}|\(def policy \{/);
      expect(text(view(trace, 2, options(cacheModel), 20))).toContain("; Defined: policy = map[3], sample: {:attempts 5 :base-ms 200 :max-ms 20000}");
    }
  });

  // Written out, but not as the printer writes it back: a comment inside the literal, a float with
  // a trailing zero or an exponent, a set or a map past eight entries (printed in hash order), a
  // character. Each read `name = map[2]` (or `vector[2]`, `set[9]`) beside its turn's output: a
  // config `{:min-free 20 :order-qty 500 :max-price 4.50}` left `(:order-qty cfg)` in no line.
  it.each([
    ["a comment inside it", "{:min-free 20 ; units of stock\n :order-qty 500}", "{:min-free 20 :order-qty 500}"],
    ["a float with a trailing zero", "{:order-qty 500 :max-price 4.50}", "{:order-qty 500 :max-price 4.5}"],
    ["an exponent", "[1e3 0.25]", "[1000.0 0.25]"],
    ["a set of nine", '#{"zeta" "alpha" "mid" "beta" "omega" "kappa" "delta" "gamma" "eps"}', '#{"omega" "gamma" "eps" "mid" "kappa" "beta" "zeta" "delta" "alpha"}'],
    ["a map of ten", "{:k1 1 :k2 2 :k3 3 :k4 4 :k5 5 :k6 6 :k7 7 :k8 8 :k9 9 :k10 10}", "{:k4 4 :k6 6 :k3 3 :k8 8 :k5 5 :k2 2 :k10 10 :k7 7 :k9 9 :k1 1}"],
    ["a character", "{:sep \\, :quote \\'}", `{:sep "," :quote "'"}`],
    // A string past 40 characters showed its size only, beside its output and once that was dropped.
    ["a string of 41 to 80 characters", '"Use eu-west-1 for all writes; us-east-1 is read-only"', '"Use eu-west-1 for all writes; us-east-1 is read-only"'],
  ])("shows a small value written out with %s beside output that does not print it, and once that is dropped", async (_, literal, edn) => {
    const trace = await run([reply("Settings.", `(def cfg ${literal})\n(println "ok")`), reply("Done.", "(return 1)")]);
    for (const printsShown of [1, 0]) expect(renderSummary(trace.turns[0], { printsShown }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 }).text).toContain(`, sample: ${edn}\n`);
  });

  // A regex is a scalar, but its line said `billing-re = regex` beside its turn's output: refining it
  // (`charge|refund|invoice` plus `card|vat`) after an accuracy the output printed needs its text.
  it("shows a regex as its pattern, as a scalar, beside output", async () => {
    const trace = await run([reply("Patterns.", `(def billing-re #"charge|refund|invoice")\n(def long-re (re-pattern (apply str (interpose "|" (map #(str "word" %) (range 20))))))\n(println "accuracy" 0.7)`), reply("Done.", "(return 1)")]);
    const opts = { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 };
    for (const printsShown of [1, 0]) {
      const shown = renderSummary(trace.turns[0], { printsShown }, opts).text;
      expect(shown).toContain('; Defined: billing-re = #"charge|refund|invoice"\n');
      // One longer than a sample is shown as a long string is.
      expect(shown).toMatch(/; Defined: long-re = regex(, sample: #"word0\|word1.*\.\.\.)?\n/);
    }
  });

  // A table of functions prints as `{:double #fn[x] ...}`, never as the program wrote it: beside
  // output that called one (`((:taxed handlers) 10)`) it read `handlers = map[2]`, the keys the next
  // program calls it by in no line of the prompt.
  it("shows a collection of functions beside output, as one written out", async () => {
    const trace = await run([reply("Handlers.", `(def handlers {:double (fn [x] (* 2 x)) :taxed (fn [x] (* x 1.2))})\n(println ((:taxed handlers) 10))`), reply("Done.", "(return 1)")]);
    const shown = renderSummary(trace.turns[0], { printsShown: 1 }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 }).text;
    expect(shown).toContain("; Defined: handlers = map[2], sample: {:double #fn[x] :taxed #fn[x]}");
    // A larger table too, its sample naming every key.
    const ops = ["double", "taxed", "halve", "negate", "square", "cube"];
    const table = await run([reply("Handlers.", `(def handlers {${ops.map((k) => `:${k} (fn [x] x)`).join(" ")}})\n(println ((:taxed handlers) 10))`), reply("Done.", "(return 1)")]);
    expect(renderSummary(table.turns[0], { printsShown: 1 }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 }).text).toContain(`, keys: ${ops.map((k) => `:${k}`).join(" ")}`);
    // A string that only reads like one is data the output chose to show or not.
    const text = await run([reply("Text.", `(def doc (apply str (repeat 5 "the printer writes #fn[x] for a function. ")))\n(println (count doc))`), reply("Done.", "(return 1)")]);
    expect(renderSummary(text.turns[0], { printsShown: 1 }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 }).text).toContain("; Defined: doc = string[210]\n");
  });

  // A function made by partial, comp or memoize has no parameter list of its own: once the program was
  // summarized the prompt said `; Function: by-total`, neither what it takes nor what it wraps.
  it("shows what a function without parameters of its own was made from, when it is short and written at the top", async () => {
    const trace = await run([reply("Helpers to rank the orders.", `(def by-total "largest first" (partial sort-by :total >))\n(def top (comp first by-total))\n(let [n 3] (def take-n (partial take n)))\n(println "ok")`), reply("Done.", "(return 1)")]);
    const shown = renderSummary(trace.turns[0], { printsShown: 1 }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 }).text;
    expect(shown).toContain('; Function: by-total - "largest first" = (partial sort-by :total >)');
    expect(shown).toContain("; Function: top = (comp first by-total)");
    // Inside a let its locals would read as globals: named only.
    expect(shown).toMatch(/; Function: take-n$/m);
  });

  // A small value nested past the sample's depth (an API response's `{:data {:user {:geo {...}}}}`)
  // printed as `{:data {:user {:address {:geo ...}}}}`: 46 characters of EDN, and the keys the next
  // program must reach for were in no line of the prompt (its program, in full history, had them).
  it("shows a small collection whole however deep it nests", async () => {
    const trace = await run([reply("Settings.", `(def resp {:data {:user {:address {:geo {:lat 1.5 :lng 2}}}}})\n(println "ok")`), reply("Done.", "(return 1)")]);
    const opts = { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 };
    const whole = "{:data {:user {:address {:geo {:lat 1.5 :lng 2}}}}}";
    // Its output dropped: as a shape would go, and as a sample of a value read later.
    for (const ctx of [{ printsShown: 0 }, { printsShown: 0, read: new Set(["resp"]) }]) {
      expect(renderSummary(trace.turns[0], ctx, opts).text).toContain(`; Defined: resp = map[1], sample: ${whole}`);
    }
  });

  it("lists every record key in a sample its budget cut short", async () => {
    const sales = Array.from({ length: 5 }, (_, i) => ({ region: `region-number-${i}`, customer: `customer-with-a-long-name-${i}`, address: `${i} Long Street, Some Town, Some County`, comment: "a comment that takes a good many characters", revenue: i * 100 }));
    const why = "The sales rows are what the mission is about: I will keep them under a short name and look at them in the next turn. ";
    const trace = await run([reply(why.repeat(2), "(def rows data/sales)"), reply("Done.", "(return 1)")], { sales });
    // A budget of 20 turns: on the last prompt of a run of 2, a summary must repay the whole legend.
    const v = view(trace, 1, options(), 20);
    expect(text(v), JSON.stringify(v.messages.slice(2))).toMatch(/; Defined: rows = vector\[5\], sample: .*, keys: :region :customer :address :comment :revenue/);
  });

  // A record's own records (an order's line items) were in no line once the output that showed them
  // was dropped: the shape said `:items vector`, the sample `{:sku "SKU-0" :qty 1 :un...}`.
  it("lists the keys of records nested in records, in shapes and samples", async () => {
    const orders = Array.from({ length: 5 }, (_, i) => ({ id: i, customer: `customer-with-a-long-name-${i}`, items: [{ sku: `SKU-${i}`, qty: i + 1, unit_price: 9.5 }] }));
    const trace = await run([reply("Big orders.", `(def big (filter #(> (:id %) 1) data/orders))\n(println (first big))`), reply("Done.", "(return 1)")], { orders });
    const opts = { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 };
    for (const ctx of [{ printsShown: 0 }, { printsShown: 0, read: new Set(["big"]) }]) expect(renderSummary(trace.turns[0], ctx, opts).text).toMatch(/; Defined: big = vector\[3\].*, keys of \[\* :items\]: :sku :qty :unit_price$/m);
  });

  // One record (a settings or watch-list map) whose sample its budget cut: its later keys were
  // gone from the prompt (`{:cities [...] :status "held" :min-total 400 ...}` hid `:label`, which the
  // mission names) while a vector of such maps listed them.
  it("lists every key of one record map in a sample its budget cut short", async () => {
    const trace = await run([reply("The watch list.", `(def watch {:cities ["Lisbon" "Oslo" "Quito"] :status "held" :min-total 400 :label "priority review list"})`), reply("Done.", "(return 1)")]);
    const summary = renderSummary(trace.turns[0], { superseded: undefined, printsShown: 0 }, { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 });
    expect(summary.text).toMatch(/; Defined: watch = map\[4\], sample: \{.*\.\.\.\}, keys: :cities :status :min-total :label/);
  });

  // A dictionary (keys that are data, not field names) listed none after a sample, as its shape names
  // them; but a sample is shown in place of the shape (a value a later program read, a turn that
  // printed nothing): read later, plan stats grouped by a string field lost "Pro" past the cut, which
  // the same line unread, as a shape, named.
  it("names after a sample the keys a dictionary's shape names", async () => {
    const opts = { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 };
    const stats = await run([reply("Stats per plan.", `(def plan-stats {"Starter" {:n 5 :mrr 1100.97} "Enterprise" {:n 11 :mrr 1779.16} "Growth" {:n 13 :mrr 3551.08} "Pro" {:n 1 :mrr 237.25}})\n(println "ok")`), reply("Done.", "(return 1)")]);
    expect(renderSummary(stats.turns[0], { printsShown: 0 }, opts).text).toContain('plan-stats = map[4] {"Starter" "Enterprise" "Growth" "Pro"} -> {:n integer, :mrr float}');
    expect(renderSummary(stats.turns[0], { printsShown: 0, read: new Set(["plan-stats"]) }, opts).text).toMatch(/plan-stats = map\[4\], sample: \{"Starter" .*\.\.\.\}+, keys: "Starter" "Enterprise" "Growth" "Pro"$/m);
    // Past eight keys, the eight the shape names, by name.
    const dict = await run([reply("Totals.", `(def totals (into {} (map (fn [i] [(str "region-" i) (* i 1000.5)]) (range 12))))`), reply("Done.", "(return 1)")]);
    expect(renderSummary(dict.turns[0], { superseded: undefined, printsShown: 0 }, opts).text).toContain(', keys: "region-0" "region-1" "region-10" "region-11" "region-2" "region-3" "region-4" "region-5" ... 4 more');
    // One whose sample shows every key lists none.
    const whole = await run([reply("Totals.", `(def totals (into {} (map (fn [i] [(str "r" i) (* i 1000.5)]) (range 3))))\n(def long-text (str "x" (apply str (repeat 90 "y"))))`), reply("Done.", "(return 1)")]);
    expect(renderSummary(whole.turns[0], { superseded: undefined, printsShown: 0 }, opts).text).not.toContain("keys:");
    // Nor one whose sample shows a key past 40 characters whole, which a list would show cut.
    const long = await run([reply("Accounts.", `(def accounts {"Northwind Traders accounts in region EMEA-west" (vec (range 30))})`), reply("Done.", "(return 1)")]);
    expect(renderSummary(long.turns[0], { superseded: undefined, printsShown: 0 }, opts).text).toMatch(/accounts = map\[1\], sample: \{"Northwind Traders accounts in region EMEA-west" \[0 1 2 \.\.\.\]\}$/);
  });

  // Samples cost tokens full history never sends: a run of short programs that print nothing
  // was up to 7% dearer than full history (random agent runs, never-dearer.test.ts) while every
  // one was sampled. What a turn taught now fits in the turn it summarizes.
  // JSON keys become keywords whatever they hold: `:Order ID` read as the key :Order and a symbol.
  it("writes a record key the reader cannot read as the call that makes it, in samples and shapes", async () => {
    const orders = Array.from({ length: 30 }, (_, i) => ({ "Order ID": `A${i}`, "Unit Price": i * 1.5, notes: "a note that is long enough to cut the sample short" }));
    const trace = await run([reply("Orders.", `(def rows data/orders)\n(println (count rows))`), reply("Done.", "(return 1)")], { orders });
    const opts = { sampleItems: 3, sampleChars: 80, toolCallsPerTurn: 10 };
    const shape = renderSummary(trace.turns[0], { superseded: undefined, printsShown: 0 }, opts).text;
    expect(shape).toContain('; Defined: rows = vector[30] of {(keyword "Order ID") string, (keyword "Unit Price") integer|float, :notes string}');
    const sample = renderSummary(trace.turns[0], { superseded: undefined, printsShown: 0, read: new Set(["rows"]) }, opts).text;
    expect(sample).toContain('sample: [{(keyword "Order ID") "A0" (keyword "Unit Price") 0 :notes');
    expect(`${shape}\n${sample}`).not.toContain(":Order ID");
  });

  it("teaches what fits in the turn: samples for a long reply, the keys of records for a short one, the program itself when neither fits", async () => {
    const sales = Array.from({ length: 5 }, (_, i) => ({ region: `region-number-${i}`, customer: `customer-with-a-long-name-${i}`, address: `${i} Long Street, Some Town, Some County`, comment: "a comment that takes a good many characters", revenue: i * 100 }));
    const why = "The sales rows are what the mission is about: I will keep them under a short name and look at them in the next turn. ";
    const shown = async (prose: string, code: string): Promise<string> => text(view(await run([reply(prose, code), reply("Done.", "(return 1)")], { sales }), 1, options(), 20));
    expect(await shown(why.repeat(2), "(def rows data/sales)")).toMatch(/; Defined: rows = vector\[5\], sample: /);
    expect(await shown("Load.", "(def rows data/sales)")).toMatch(/; Defined: rows = vector\[5\] of \{:region string, :customer string, :address string, :comment string, :revenue integer\}/);
    const terse = await shown("", "(def a (take 2 data/sales))\n(def b (take 3 data/sales))\n(def c (take 4 data/sales))");
    expect(terse).toContain("(def a (take 2 data/sales))");
    expect(terse).not.toMatch(/; Defined: /);
  });

  it("keeps a fixed error in full under the breakpoint layout (summarizing it would rewrite every later message)", async () => {
    const reasoning = "The rows are keyed by region, so I will add the totals up first and look at the outliers after that. ".repeat(6);
    const trace = await run([reply(reasoning, "(println (+ 1 nil))"), reply("Fix.", `(println "ok" 1)`), reply("More.", `(println "ok" 2)`), reply("More.", `(println "ok" 3)`), reply("Done.", "(return 1)")]);
    expect(trace.turns[0].status).toBe("error");
    expect(view(trace, 4, options("breakpoint"), 30).stats.turnsFull.map((t) => t.reason)).toEqual(["error"]);
    // Under a token-prefix cache it is summarized once that pays: with prompts left to repay the rewrite (its reasoning
    // saved in each of them), not in the run's last ones.
    expect(view(trace, 4, options("token-prefix"), 30).stats.turnsFull).toEqual([]);
    expect(view(trace, 4, options("token-prefix")).stats.turnsFull.find((t) => t.turn === 1)).toEqual({ turn: 1, reason: "cost" });
  });

  // Before, such a turn was shown as written again beside the error, rewriting the prompt from it
  // (generated traces: up to 1.054x full history once the turn just done showed its source).
  it("follows the summary of a turn whose function failed with the function's source while the error is in its window", async () => {
    const why = "A helper first: the rows need sizing before they are counted, and the next programs will call it. ".repeat(12);
    const body = `(cond ${Array.from({ length: 30 }, (_, i) => `(< (:n x) ${10 * (i + 1)}) :size-${i}`).join(" ")} :else :giant)`;
    const trace = await run([
      reply(why, `(defn size-of "Size class of a row" [x] ${body})\n(println "ok")`),
      reply("Use it.", `(println (size-of "a"))`),
      reply("Fix.", `(println (size-of {:n 1}))`),
      reply("More.", `(println "more")`),
      reply("Done.", "(return 1)"),
    ]);
    expect(trace.turns[1].status).toBe("error");
    const source = (k: number, budget?: number): string | undefined => (view(trace, k, options(), budget).turns ?? [])[0].text;
    // The turn just done shows its function's source after its summary; the error keeps it there.
    expect(source(1)).toMatch(/^; Function: size-of \[x\][\s\S]*\n```clojure\n\(defn size-of /);
    expect(view(trace, 2, options()).stats.turnsFull.map((t) => `${t.turn}:${t.reason}`)).toEqual(["2:error"]);
    expect(source(2)).toMatch(/\n```clojure\n\(defn size-of [\s\S]*```$/);
    expect(source(1)?.startsWith(source(2) ?? "-")).toBe(true);
    // Once the error leaves its window the source goes only when that pays: not with one prompt left,
    for (const k of [3, 4]) expect(source(k)).toContain("(defn size-of");
    // but with a budget leaving prompts enough.
    expect(source(4, 40)).not.toContain("(defn size-of");
    expect(source(4, 40)).toContain("; Function: size-of [x]");
  });

  // The next program builds on the functions the turn just done defined: when their source did not
  // fit after the summary (a sentence and a defn; a turn of several short helpers), the next prompt
  // showed `; Function: score [o] - "Weighted score"` and the note, and the body was in no line.
  it("keeps the turn just done as written when its functions' source does not fit after its summary, summarized in later prompts when that pays", async () => {
    const score = '(defn score "Weighted score" [o] (+ (* 0.7 (:total o)) (* 0.3 (:items o)) (if (= (:status o) "held") -50 0)))';
    const helpers = "(def f (fn [a b] (+ a b)))\n(def h (fn named [x y z] x))\n(def m (let [base 10] (fn [x] (+ base x))))\n(defn p \"doc\" [q] q)";
    // Summarizing the four helpers later saves too little to repay the rewrite: they stay as written.
    // So does a short helper now that the run's first summary owes its share of the legend
    // (summaryPays): summarized, it cost this run 1.0039x full history under breakpoints.
    const long = '(defn score "Weighted score" [o] (cond (= (:status o) "held") (- (* 0.7 (:total o)) 50) (> (:items o) 10) (+ (* 0.7 (:total o)) (* 0.4 (:items o))) (> (:total o) 1000) (* 0.9 (:total o)) (< (:total o) 10) 0 :else (+ (* 0.7 (:total o)) (* 0.3 (:items o)))))';
    for (const [first, later] of [[reply("A scoring helper.", long), []], [reply("A scoring helper.", score), [{ turn: 1, reason: "cost" }]], [reply("Helpers for the orders, which I will use in every later turn to score and filter.", helpers), [{ turn: 1, reason: "cost" }]]] as const) {
      const trace = await run([first, reply("Use.", '(println "used" 1)'), reply("Again.", '(println "again" 2)'), reply("Done.", "(return 1)")]);
      for (const cacheModel of ["token-prefix", "breakpoint"] as const) {
        const next = view(trace, 1, options(cacheModel), 30);
        expect(text(next), first).toContain(first.slice(first.indexOf("(def")));
        expect(next.stats.turnsFull).toEqual([{ turn: 1, reason: "short" }]);
        for (const k of [2, 3]) {
          const v = view(trace, k, options(cacheModel), 30);
          expect(v.stats.turnsFull, first).toEqual(later);
          expect(v.messages.slice(2).some((m) => String(m.content).includes("(def")), first).toBe(later.length > 0);
        }
      }
    }
  });

  // Kept as written for its functions' source (or, in strict-prefix mode, because its summary did
  // not pay), a turn that printed nothing still showed the samples its summary would have taught:
  // '; Defined: weights = map[2], sample: {...}' after the program, in a prompt with no summary and
  // so no legend, and bytes full history never sends.
  it("a turn kept as written for its functions' source teaches nothing beyond its program", async () => {
    const score = '(defn score "Weighted score" [o] (+ (* 0.7 (:total o)) (* 0.3 (:items o)) (if (= (:status o) "held") -50 0)))';
    const trace = await run([reply("A scoring helper and the weights.", `${score}\n(def weights {:total 0.7 :items 0.3})`), reply("Use.", '(println "used" (score {:total 1 :items 2}))'), reply("Again.", '(println "again" 2)'), reply("Done.", "(return 1)")]);
    for (const opts of [options(), options("breakpoint")]) {
      for (const k of [1, 2]) {
        const v = view(trace, k, opts, 30);
        const kept = v.stats.turnsFull.some((t) => t.turn === 1);
        expect(kept || k > 1).toBe(true);
        if (!kept) continue;
        // Turn 1 as full history shows it: its reply, and its feedback without `Stored:`.
        const at = (v.turns ?? []).find((p) => p.turn === 1)?.message ?? -1;
        expect(v.messages[at + 1].content, JSON.stringify(opts)).toBe("Turn 2 of 30.");
        if (text(v).includes("; Defined:")) expect(text(v)).toContain(summaryLegend());
      }
    }
  });

  // A function's recorded source is its defn form: one defined inside a let showed
  // '(defn tax [x] (min cap (* x rate)))' after the summary, and the rate and cap it closes over
  // were in no line of the prompt that builds on it.
  it("shows a function defined inside a let with the let it closes over", async () => {
    const why = "Helpers over a rate I keep private, which the next programs will call on every order total. ";
    const trace = await run([reply(why, "(let [rate 0.0825 cap 500] (defn tax [x] (min cap (* x rate))))\n(def tax2 (let [r 0.1] (fn [x] (* x r))))"), reply("Use.", "(println (tax 100) (tax2 10))"), reply("Again.", '(println "again" 2)'), reply("Done.", "(return 1)")]);
    for (const cacheModel of ["token-prefix", "breakpoint"] as const) {
      const next = text(view(trace, 1, options(cacheModel), 20));
      expect(next).toContain("(let [rate 0.0825 cap 500] (defn tax [x] (min cap (* x rate))))");
      expect(next).toContain("(def tax2 (let [r 0.1] (fn [x] (* x r))))");
    }
  });

  it("shows the source of the functions the turn just done defined after its summary, for one prompt", async () => {
    const define = reply("A helper first: the rows need doubling before they are summed, and the next programs will call it. ".repeat(4), `(defn double-all "Doubles each" [xs] (mapv #(* 2 %) xs))\n(def rows [1 2])\n(println "ok")`);
    const trace = await run([define, reply("Use it.", `(println (double-all [1 2]))`), reply("Again.", `(println "n" 2)`), reply("Done.", "(return 1)")]);
    // With a budget of 10 turns the legend that heads the first summary is repaid over more prompts
    // than in a run of 4, where the tail must owe more of it (see the end).
    const next = view(trace, 1, options(), 10);
    expect(next.stats.turnsFull).toEqual([]);
    const shown = (next.turns ?? [])[0].text;
    expect(shown).toContain('; Function: double-all [xs] - "Doubles each"');
    // The functions' source, not the rest of the program; then the note.
    expect(shown).toContain('```clojure\n(defn double-all "Doubles each" [xs] (mapv #(* 2 %) xs))\n```\n; Note: A helper first');
    expect(shown).not.toContain("(def rows");
    // The next prompt drops it and extends the text before it: nothing is rewritten.
    const later = view(trace, 2, options(), 10);
    expect(text(later)).not.toContain("(defn double-all");
    const summary = `${summaryLegend()}\n${shown.slice(0, shown.indexOf("\n```clojure"))}`;
    expect(String(later.messages[2].content).startsWith(summary)).toBe(true);
    expect(String(next.messages[2].content).startsWith(summary)).toBe(true);
    // Under the breakpoint layout it follows the latest feedback, the message the next prompt rewrites.
    const marked = view(trace, 1, options("breakpoint"), 10);
    expect(String(marked.messages.at(-1)?.content)).toContain("(defn double-all");
    expect(String(marked.messages.at(-2)?.content)).not.toContain("(defn double-all");
    // In the run's own budget of 4 the legend is repaid over fewer prompts: the source still fits, the note does not.
    const short = view(trace, 1, options());
    expect(text(short)).toContain('```clojure\n(defn double-all "Doubles each" [xs] (mapv #(* 2 %) xs))\n```');
    expect(text(short)).not.toContain("; Note: A helper first");
  });

  // A table of functions is functions the next program builds on too: it read `{:fast #fn[o] :slow
  // #fn[o]}`, and what each does (the bodies full history shows) was in no line.
  it("shows the source of a table of functions the turn just done defined, as a function's", async () => {
    const why = "Handlers first: the orders are scored fast or slow, and the next programs will call them. ".repeat(4);
    const trace = await run([reply(why, `(def handlers {:fast (fn [o] (* 2 (:total o))) :slow (fn [o] (:total o))})\n(def rows [1 2])\n(println "ok")`), reply("Use it.", `(println ((:fast handlers) {:total 2}))`), reply("Done.", "(return 1)")]);
    const shown = (view(trace, 1, options(), 10).turns ?? [])[0].text;
    expect(shown).toContain("```clojure\n(def handlers {:fast (fn [o] (* 2 (:total o))) :slow (fn [o] (:total o))})\n```");
    expect(shown).not.toContain("(def rows");
  });
});

// A turn kept as written (here a failed one, inside its error window) whose println output the
// stream cut dropped: its feedback showed no output at all, or only its last lines under a bare
// `Output:`, so its program's println calls read as printing nothing, or those lines as all it printed.
describe("the output a turn kept as written no longer shows", () => {
  const wide = (label: string, n: number): string => `(doseq [i (range ${n})] (println "${label}" i "has some fairly long descriptive text to make tokens add up quickly here"))`;

  it("says how many lines were dropped when all of them were", async () => {
    const trace = await run([wide("row number", 12) + "\n(+ 1 nil)", wide("second", 12), wide("third", 12), "(return 1)"].map((b) => reply("Next.", b)));
    const v = view(trace, 3, options(), 30);
    expect(v.stats.turnsFull.map((t) => t.turn)).toContain(1);
    const feedback = String(v.messages[3].content);
    expect(feedback).not.toContain("row number 0");
    expect(feedback.startsWith("Output (12 dropped)\n\nError at line 2")).toBe(true);
  });

  it("says how many lines were dropped when only the last ones show", async () => {
    const trace = await run([`(doseq [i (range 60)] (println "r" i))\n(+ 1 nil)`, `(println "ok")`, `(println "ok2")`, "(return 1)"].map((b) => "```clojure\n" + b + "\n```"));
    // A line limit of 15 and no drop threshold: the cut goes into the failed turn's 60 lines.
    const v = view(trace, 2, { ...options(), dropAfterTokens: 0 }, 30);
    expect(v.stats.turnsFull.map((t) => t.turn)).toContain(1);
    const feedback = String(v.messages[3].content);
    const kept = feedback.split("\n").filter((l) => /^r \d+$/.test(l));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(60);
    expect(feedback.startsWith(`Output (${60 - kept.length} dropped):\nr ${60 - kept.length}\n`)).toBe(true);
  });
});
