// A nested agent: the budget agent hands the monthly totals to a category-analyst agent
// offered as a tool (SubAgent.asTool). The analyst runs its own turns with its own tools,
// inheriting the caller's LLM, and its answer comes back to the program as plain data.
// The scripted replies are in call order: the parent's first turn, the analyst's turns
// (which run inside that first turn's program), then the parent's last turn.
import { z } from "zod";
import { SubAgent } from "../src/agent/subagent.js";
import { tool } from "../src/agent/tools.js";
import { expenses, usdRates } from "./data/expenses.js";
import { defineExample } from "./types.js";

/** Monthly budget per expense category, USD. */
const budgets: Readonly<Record<string, number>> = { travel: 2000, meals: 500, software: 250, equipment: 1000, training: 1500, office: 200 };

const month = "2026-03";
const cents = (x: number): number => Math.round(x * 100) / 100;

const analyst = SubAgent.create({
  prompt: "Total the approved expenses of {{month}} per category, in USD rounded to cents. Return a map from category to total.",
  description: "An analyst agent: approved expense totals per category in USD for one month (\"YYYY-MM\"), as a map from category to total.",
  tools: {
    "list-expenses": tool({
      description: "The expense claims of one month (\"YYYY-MM\"), with amount, currency and approval status.",
      input: z.object({ month: z.string().regex(/^\d{4}-\d{2}$/).describe("Month as YYYY-MM") }),
      run: ({ month: m }) => expenses.filter((e) => e.date.startsWith(m)).map((e) => ({ ...e })),
    }),
    "fx-rates": tool({
      description: "Current exchange rates: how many USD one unit of each currency is worth.",
      run: () => ({ base: "USD", rates: { ...usdRates } }),
    }),
  },
  output: z.record(z.string(), z.number()),
  maxTurns: 4,
});

/** The answer, computed directly from the data. */
function answer() {
  const spent = new Map<string, number>();
  for (const e of expenses) {
    if (e.status === "approved" && e.date.startsWith(month)) spent.set(e.category, (spent.get(e.category) ?? 0) + e.amount * usdRates[e.currency]);
  }
  const over = [...spent]
    .map(([category, total]) => ({ category, spent: cents(total), budget: budgets[category] ?? 0, over: cents(cents(total) - (budgets[category] ?? 0)) }))
    .filter((o) => o.over > 0)
    .sort((a, b) => b.over - a.over);
  return { over };
}

export const budgetAlert = defineExample({
  name: "budget-alert",
  title: "A nested analyst agent",
  summary: "The budget agent calls an analyst agent offered as a tool; the analyst runs its own turns and tools, and its answer returns as data.",
  prompt:
    "Which expense categories went over their monthly budget in March 2026 (2026-03), and by how much? " +
    "Return :over, a list of {:category :spent :budget :over} with amounts in USD, largest overrun first.",
  tools: {
    budgets: tool({ description: "The monthly budget of each expense category, in USD.", run: () => ({ ...budgets }) }),
    "category-analyst": SubAgent.asTool(analyst),
  },
  output: z.object({ over: z.array(z.object({ category: z.string(), spent: z.number(), budget: z.number(), over: z.number().positive() })) }),
  maxTurns: 4,
  context: {},
  replies: [
    `I'll get the budgets, and ask the analyst for March's approved spend per category.

\`\`\`clojure
(def budgets (tool/budgets))
(def spend "March 2026 approved spend per category in USD, from the analyst" (tool/category-analyst {:month "2026-03"}))
(println "Budgets:" budgets)
(println "Spend:" spend)
\`\`\``,
    `First I'll fetch the month's claims and the exchange rates, and look at what I have.

\`\`\`clojure
(def rows (tool/list-expenses {:month data/month}))
(def fx (:rates (tool/fx-rates)))
(println (count rows) "claims in" data/month)
(println "Statuses:" (frequencies (map :status rows)) "Currencies:" (frequencies (map :currency rows)))
(println "Rates:" fx)
\`\`\``,
    `Only approved claims count. I'll convert them to USD and total them per category.

\`\`\`clojure
(defn usd "Amount of a claim in USD" [e] (* (:amount e) (get fx (keyword (:currency e)))))
(return (->> rows
             (filter #(= "approved" (:status %)))
             (group-by :category)
             (map (fn [[category claims]] [category (/ (round (* 100 (reduce + (map usd claims)))) 100.0)]))
             (into {})))
\`\`\``,
    `Two categories are over budget. I'll compute the overruns, largest first.

\`\`\`clojure
(return {:over (->> spend
                    (map (fn [[category total]]
                           (let [budget (get budgets category 0)]
                             {:category (name category) :spent total :budget budget
                              :over (/ (round (* 100 (- total budget))) 100.0)})))
                    (filter #(pos? (:over %)))
                    (sort-by :over >)
                    vec)})
\`\`\``,
  ],
  expected: answer(),
});
