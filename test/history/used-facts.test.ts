// Facts a later program used stay in the compressed view (issue 20, item 3): a definition read
// by a later program keeps its sample until it is redefined, also once wide println output has
// pushed its turn's output out of the prompt; and a rewritten summary drops the lines of names
// redefined later, while a summary that is not rewritten keeps its text byte for byte.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { compressedView, planTurns } from "../../src/history/compressed.js";
import { defaultViewOptions, type ViewOptions } from "../../src/history/view.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { RunTrace } from "../../src/trace/trace.js";

const reply = (prose: string, body: string): string => `${prose}\n\n\`\`\`clojure\n${body}\n\`\`\``;
const options = (cacheModel: "token-prefix" | "breakpoint" = "token-prefix"): ViewOptions => ({ ...defaultViewOptions, compressHistory: true, cacheModel });

const cities = ["Lisbon", "Oslo", "Quito", "Hanoi"];
const orders = Array.from({ length: 200 }, (_, i) => ({
  id: i + 1,
  customer: `customer-${1000 + ((i * 7919) % 9000)}`,
  city: cities[i % 4],
  status: ["open", "held", "shipped"][i % 3],
  total: ((i * 3571) % 90000) / 100,
  items: 1 + ((i * 13) % 12),
  note: ["gift wrap", "call first", "fragile", "leave at door"][i % 4],
}));

async function run(replies: string[]): Promise<RunTrace> {
  const agent = SubAgent.create({ prompt: "Work it out.", maxTurns: replies.length });
  const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { orders } });
  expect(step.ok).toBe(true);
  return step.trace;
}

/** The history part of the prompt for turn k + 1 (after the system prompt and the task). */
const prompt = (trace: RunTrace, k: number, opts: ViewOptions, maxTurns = trace.turns.length): string =>
  compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns }, opts)
    .messages.slice(2)
    .map((m) => m.content)
    .join("\n");

const page = (k: number): string => `(println (take 8 (drop ${k * 8} data/orders)))`;

// Turn 1 and 2 define the two facts the answer depends on (and print them); ten turns of wide
// rows push that output out; turn 13 reads both; five more pages; turn 19 redefines vip.
const programs = [
  `(def vip (mapv #(str "VIP-" (:customer %)) (take 6 (sort-by :total > data/orders))))\n(println "vip" vip)`,
  `(def watch {:cities ["Lisbon" "Oslo" "Quito"] :status "held" :min-total 400 :label "priority review list"})\n(println "watch" watch)`,
  ...Array.from({ length: 10 }, (_, k) => page(k)),
  `(def flagged (filter #(and (contains? (set (:cities watch)) (:city %)) (= (:status %) (:status watch))) data/orders))\n(def vip-set (set vip))\n(println "flagged" (count flagged) "vip" (count vip-set))`,
  ...Array.from({ length: 5 }, (_, k) => page(10 + k)),
  `(def vip (mapv #(str "VIP2-" (:customer %)) (take 3 (sort-by :items > data/orders))))`,
  page(15),
  page(16),
  `(return {:flagged (count flagged) :vip (count vip) :label (:label watch)})`,
];
const READ = 13;
const REDEFINED = 19;

describe("facts later turns used", () => {
  for (const cacheModel of ["token-prefix", "breakpoint"] as const) {
    it(`a definition read ten turns later keeps its sample in every prompt until it is redefined, while wide output pushes its turn's output out (${cacheModel})`, async () => {
      const trace = await run(programs.map((p, i) => reply(`Step ${i + 1}.`, p)));
    // watch's sample (its first entries: the sample's item bound).
    const watch = 'sample: {:cities ["Lisbon" "Oslo" "Quito"] :status "held"';
      const firstVip = JSON.stringify(`VIP-${[...orders].sort((a, b) => b.total - a.total)[0].customer}`);
      const opts = options(cacheModel);
      // The adversary: by the time of the read, both facts' output has left the prompt.
      const beforeRead = prompt(trace, READ - 1, opts);
      expect(beforeRead).not.toContain(firstVip);
      expect(beforeRead).not.toContain(watch);
      // The read is shown by the reader's summary: the defining turns' summaries do not change for it.
      const placeAt = (k: number, turn: number) => (compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: trace.turns.length }, opts).turns ?? []).find((p) => p.turn === turn)?.text;
      for (const turn of [1, 2]) expect(placeAt(READ, turn)).toBe(placeAt(READ - 1, turn));
      expect(placeAt(READ + 1, READ)).toContain("; Read: vip = vector[6], sample: [");
      for (let k = READ; k < REDEFINED; k++) {
        const text = prompt(trace, k, opts);
        expect(text, `prompt for turn ${k + 1}`).toContain(firstVip);
        expect(text, `prompt for turn ${k + 1}`).toContain(watch);
      }
      for (let k = REDEFINED; k < trace.turns.length; k++) {
        const text = prompt(trace, k, opts);
        // The new vip is shown as a redefinition. The old lines stay as written: dropping them
        // would rewrite the cached prompt from turn 1 on, which the few turns left cannot repay.
        expect(text, `prompt for turn ${k + 1}`).toContain('"VIP2-');
        expect(text, `prompt for turn ${k + 1}`).toMatch(/; Defined: vip \(redefined\)|\(def vip /);
        expect(text, `prompt for turn ${k + 1}`).toContain(watch);
      }
    });
  }

  it("a reader that defined a function shows what it read in its summary, before the function's source", async () => {
    const reader = `(defn vip? [c] (contains? (set vip) c))\n(println "vip?" (vip? "x"))`;
    const trace = await run([...programs.slice(0, READ - 1), reader, page(20), "(return 1)"].map((p, i) => reply(`Step ${i + 1}.`, p)));
    const opts = options();
    // A long turn budget: the cuts that drop the facts' output pay back.
    const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, READ), maxTurns: 40 }, opts);
    const place = (view.turns ?? []).find((p) => p.turn === READ);
    expect(place?.text).toMatch(/^; Function: vip\? \[c\]\n; Read: vip = vector\[6\], sample: \["VIP-[\s\S]*\n```clojure\n\(defn vip\? \[c\] \(contains\? \(set vip\) c\)\)\n```\n; Note: Step 13\.$/);
    expect(prompt(trace, READ + 1, opts, 40)).toMatch(/; Function: vip\? \[c\]\n; Read: vip = vector\[6\], sample: \["VIP-/);
  });

  // A function reads the globals its body names when it is called: a program calling one reads
  // them too. Before, a helper defined beside its data (`vip?` with `vip`) and called ten turns
  // later left vip at `vector[6] of string`, its values gone, where reading vip directly kept them.
  // So did one defined inside a let over the data, and one kept in a map and called through it.
  it("a program that calls a function reads what the function's body reads (through functions calling functions, whenever they were defined)", async () => {
    const firstVip = JSON.stringify(`VIP-${[...orders].sort((a, b) => b.total - a.total)[0].customer}`);
    const rows = [
      // the helper beside its data, in the same turn
      { define: `${programs[0]}\n(defn vip? [c] (contains? (set vip) c))`, call: `(println "vip?" (vip? "x"))` },
      // a helper defined before the data it reads, calling another helper
      { define: `(defn vip-set [] (set vip))\n(defn vip? [c] (contains? (vip-set) c))\n${programs[0]}`, call: `(println "vip?" (vip? "x"))` },
      // a helper inside a let over the data: its defn alone names only the local
      { define: `${programs[0]}\n(let [s (set vip)] (defn vip? [c] (contains? s c)))`, call: `(println "vip?" (vip? "x"))` },
      // a function kept in a map, called through it
      { define: `${programs[0]}\n(def checks {:vip? (fn [c] (contains? (set vip) c))})`, call: `(println "vip?" ((:vip? checks) "x"))` },
    ];
    for (const { define, call } of rows) {
      const trace = await run([define, ...Array.from({ length: 10 }, (_, k) => page(k)), call, page(11), "(return 1)"].map((p, i) => reply(`Step ${i + 1}.`, p)));
      // Turn 12 calls vip?: by then turn 1's output has left the prompt.
      expect(prompt(trace, 11, options(), 40), define).not.toContain(firstVip);
      expect(prompt(trace, 12, options(), 40), define).toContain(`; Read: vip = vector[6], sample: [${firstVip}`);
      expect(prompt(trace, 13, options(), 40), define).toContain(firstVip);
    }
  });

  // A small collection's own line shows its whole value once its turn's output is all dropped
  // (its shape is its sample): a reader's `; Read:` line showed the same value a second time.
  it("a small collection read after its output is dropped is shown once, by its own line", async () => {
    const trace = await run([
      reply("Look.", '(def best (mapv :id (take 2 (sort-by :total > data/orders))))\n(println "best" best)'),
      ...Array.from({ length: 10 }, (_, k) => reply("Page.", page(k))),
      reply("Count.", "(println (count best))"),
      reply("Page.", page(11)),
      reply("Done.", "(return 1)"),
    ]);
    const text = prompt(trace, 13, options(), 40);
    expect(text).toMatch(/; Defined: best = vector\[2\], sample: \[\d+ \d+\]/);
    expect(text).not.toContain("; Read: best");
  });

  it("a definition nothing read keeps only its shape once its output is dropped", async () => {
    const trace = await run([
      reply("Look.", `(def spare {:cities ["Lima" "Perth" "Dakar"] :status "open" :min-total 100 :label "spare list nobody reads"})\n(println "spare" spare)`),
      ...Array.from({ length: 10 }, (_, k) => reply("Page.", page(k))),
      reply("Done.", "(return 1)"),
    ]);
    // A long turn budget: dropping the output pays back.
    const text = prompt(trace, 11, options(), 40);
    expect(text).toMatch(/; Defined: spare = map\[4\] \{:cities vector/);
    expect(text).not.toContain("spare list nobody reads");
  });

  it("planTurns gives a reader the definitions it read, not locals, builtins or names it defines itself", async () => {
    const trace = await run([
      reply("a", `(def xs [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33])\n(def ys [5])\n(def zs [6])\n(println "ok")`),
      reply("b", `(let [ys 3] (println (count xs) ys (map inc [1])))`),
      reply("c", `(def zs [7])\n(println (count zs))`),
      reply("d", "(return 1)"),
    ]);
    const plans = planTurns({ system: trace.system, task: trace.task, turns: trace.turns, maxTurns: 4 }, options());
    // Read while its output was still shown: the definition's own line keeps its sample once the output goes.
    expect(plans.map((p) => [...(p.read ?? [])])).toEqual([["xs"], [], [], []]);
    expect(plans.every((p) => p.reads === undefined)).toBe(true);
  });
});

describe("superseded lines in rewritten summaries", () => {
  it("a name redefined later: its line leaves a summary rewritten anyway or when dropping it pays; a summary not rewritten keeps its text byte for byte", async () => {
    const trace = await run([
      // Printed nothing: its samples would go stale, so its summary is rewritten when users is redefined.
      // (Its reasoning, which the summary leaves out, repays the legend heading it in a budget of 4.)
      reply("Load the customers and the cities they order from, to compare them in the next turns. ".repeat(3), `(def users (vec (take 30 (map :customer data/orders))))\n(def cities-seen (set (map :city data/orders)))`),
      // Printed, output still shown: its summary is not rewritten for the redefinition.
      reply("Count.", `(def n (count users))\n(def top (vec (take 30 (map :id data/orders))))\n(println "n" n)`),
      reply("Narrow.", `(def users (vec (take 10 users)))\n(def top (vec (take 5 top)))\n(println "users" (count users))`),
      reply("Done.", "(return (count users))"),
    ]);
    // Dropping users' stale sample rewrites turn 1's summary and turn 2 after it: the 8 prompts a
    // rewrite may count on do not repay that, however long the budget (before, a 200-turn budget
    // counted 197 prompts left and the line went). It stays as written in both budgets.
    const place = (v: ReturnType<typeof compressedView>, turn: number) => (v.turns ?? []).find((p) => p.turn === turn);
    const at = (k: number, maxTurns: number) => compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns }, options());
    for (const maxTurns of [4, 200]) {
      expect(place(at(3, maxTurns), 1)?.text).toBe(place(at(2, maxTurns), 1)?.text);
      expect(place(at(3, maxTurns), 1)?.text).toMatch(/; Defined: users\b/);
    }
    const before = at(2, 200);
    const after = at(3, 200);
    const first = place(after, 1)?.text ?? "";
    expect(first).toMatch(/^; Defined: cities-seen = set\[4\]/m);
    // Turn 2 printed and its output is still shown: its summary is not rewritten, top's line stays
    // as written (the note after it was for one prompt).
    expect(place(after, 2)?.text).toBe(place(before, 2)?.text.replace(/\n; Note: .*$/, ""));
    expect(place(after, 2)?.text).toMatch(/; Defined: top = vector\[30\]/);
  });

  it("a rewritten summary whose every line would go says what its turn defined, never that it defined nothing", async () => {
    const trace = await run([
      reply("Load.", `(def users (vec (take 30 (map :customer data/orders))))`),
      reply("Narrow.", `(def users (vec (take 10 users)))\n(println "users" (count users))`),
      reply("Done.", "(return (count users))"),
    ]);
    const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, 2), maxTurns: 200 }, options());
    const first = (view.turns ?? [])[0].text;
    expect(first).not.toContain("no definitions");
    expect(first).not.toContain('"customer-');
    expect(first).toContain("users");
  });
});
