// Expense analytics with a typed result: the agent inspects the rows, converts currencies
// with a rates tool, groups approved claims by category, and returns a breakdown that the
// zod output schema checks field by field.
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { expenses, usdRates, type Expense } from "./data/expenses.js";
import { defineExample } from "./types.js";

const fxRates = tool({
  description: "Current exchange rates: how many USD one unit of each currency is worth.",
  output: z.object({ base: z.literal("USD"), rates: z.record(z.string(), z.number()) }),
  run: () => ({ base: "USD" as const, rates: { ...usdRates } }),
});

const cents = (x: number): number => Math.round(x * 100) / 100;

/** The answer, computed directly from the data. */
function breakdown(rows: readonly Expense[]) {
  const groups = new Map<string, number[]>();
  for (const e of rows) {
    if (e.status !== "approved") continue;
    const usd = e.amount * usdRates[e.currency];
    groups.set(e.category, [...(groups.get(e.category) ?? []), usd]);
  }
  const out = [...groups].map(([category, xs]) => {
    const total = xs.reduce((a, b) => a + b, 0);
    return { category, total: cents(total), count: xs.length, avg: cents(total / xs.length) };
  });
  return out.sort((a, b) => b.total - a.total);
}

const expected = breakdown(expenses);

export const expenseAnalytics = defineExample({
  name: "expenses",
  title: "Expense analytics with a typed breakdown",
  summary: "Inspect the data's shape, convert currencies with a tool, group and aggregate, and return a breakdown checked by a zod schema.",
  prompt:
    "Which expense category has the highest total of approved expenses, in USD? Return :highest (the category) and a :breakdown of every category " +
    "(approved expenses only) sorted by total, largest first, each with :category, :total and :avg in USD rounded to cents, and :count.",
  tools: { "fx-rates": fxRates },
  output: z.object({
    highest: z.string(),
    breakdown: z
      .array(z.object({ category: z.string(), total: z.number(), count: z.number().int().positive(), avg: z.number() }))
      .min(1),
  }),
  maxTurns: 4,
  context: { expenses },
  replies: [
    `First I'll look at the shape of the data: the fields, and which statuses, currencies and categories occur.

\`\`\`clojure
(println "Rows:" (count data/expenses))
(println "First:" (first data/expenses))
(println "Statuses:" (frequencies (map :status data/expenses)))
(println "Currencies:" (frequencies (map :currency data/expenses)))
(println "Categories:" (sort (distinct (map :category data/expenses))))
\`\`\``,
    `Amounts are in three currencies, so I need the rates before summing. I'll convert each approved claim to USD and aggregate per category.

\`\`\`clojure
(def fx (tool/fx-rates))
(println "Rates:" fx)

(defn to-usd "Amount of an expense in USD" [e]
  (* (:amount e) (get-in fx [:rates (keyword (:currency e))])))

(defn cents "Rounds to 2 decimals" [x] (/ (round (* x 100)) 100.0))

(def approved (filter #(= (:status %) "approved") data/expenses))

(def breakdown
  "Approved expenses per category in USD, largest total first"
  (->> (group-by :category approved)
       (map (fn [[category rows]]
              (let [total (reduce + (map to-usd rows))]
                {:category category
                 :total (cents total)
                 :count (count rows)
                 :avg (cents (/ total (count rows)))})))
       (sort-by :total >)
       vec))
(println "Approved claims:" (count approved))
(doseq [b breakdown] (println b))
\`\`\``,
    `The breakdown is complete and sorted; the first entry is the highest.

\`\`\`clojure
(return {:highest (:category (first breakdown)) :breakdown breakdown})
\`\`\``,
  ],
  expected: { highest: expected[0].category, breakdown: expected },
});
