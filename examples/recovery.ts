// Error and recovery: the second turn sums formatted strings ("$1,234.50") and fails with
// a type error. Its definitions are rolled back, so the third turn parses the amounts,
// redefines what it needs, and the run still reaches the answer.
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { orders } from "./data/orders.js";
import { defineExample } from "./types.js";

const listOrders = tool({
  description: "Orders with the given status, as the order service returns them (totals are formatted USD strings).",
  input: z.object({ status: z.enum(["shipped", "pending", "cancelled"]).describe("Order status") }),
  output: z.array(z.object({ id: z.number(), customer: z.string(), status: z.string(), total: z.string(), placed: z.string() })),
  run: ({ status }) => orders.filter((o) => o.status === status).map((o) => ({ ...o })),
});

/** The answer, computed directly from the data. */
function answer() {
  const feb = orders.filter((o) => o.status === "shipped" && o.placed.startsWith("2026-02"));
  const amount = (s: string) => Number.parseFloat(s.replace(/[$,]/g, ""));
  const byCustomer = new Map<string, number>();
  for (const o of feb) byCustomer.set(o.customer, (byCustomer.get(o.customer) ?? 0) + amount(o.total));
  const [customer] = [...byCustomer].sort((a, b) => b[1] - a[1])[0];
  const total = feb.reduce((s, o) => s + amount(o.total), 0);
  return { orders: feb.length, total: Math.round(total * 100) / 100, customer };
}

export const recovery = defineExample({
  name: "recovery",
  title: "An error in turn 2, and the recovery",
  summary: "Turn 2 sums formatted strings and fails; its definitions roll back, and turn 3 parses the amounts, redefines what it needs and recovers.",
  prompt:
    "How many shipped orders were placed in February 2026, what is their total value in USD (rounded to cents), and which customer accounts for the largest share of that value? " +
    "Return :orders, :total and :customer.",
  tools: { "list-orders": listOrders },
  output: z.object({ orders: z.number().int(), total: z.number(), customer: z.string() }),
  maxTurns: 5,
  context: {},
  replies: [
    `Let me fetch the shipped orders and look at a few of them.

\`\`\`clojure
(def shipped (tool/list-orders {:status "shipped"}))
(println "Shipped orders:" (count shipped))
(println (take 3 shipped))
\`\`\``,
    `Now I'll keep the February orders and add up their totals per customer.

\`\`\`clojure
(def feb "Shipped orders placed in February 2026" (filter #(str/starts-with? (:placed %) "2026-02") shipped))
(def feb-total (reduce + (map :total feb)))
(def by-customer (update-vals (group-by :customer feb) #(reduce + (map :total %))))
(println "February:" (count feb) "orders, total" feb-total)
(println by-customer)
\`\`\``,
    `The totals are formatted strings like "$2,368.65", so \`+\` cannot add them. That turn was rolled back, so I'll redefine \`feb\` too, this time parsing the amounts first.

\`\`\`clojure
(defn amount "Parses a formatted total such as \\"$1,234.50\\" into a number" [s]
  (parse-double (str/replace s #"[$,]" "")))
(def feb "Shipped orders placed in February 2026" (filter #(str/starts-with? (:placed %) "2026-02") shipped))
(def feb-total (reduce + (map (comp amount :total) feb)))
(def by-customer "USD value of February shipped orders per customer"
  (update-vals (group-by :customer feb) (fn [os] (reduce + (map (comp amount :total) os)))))
(println "February:" (count feb) "orders, total" feb-total)
(doseq [[c v] (sort-by val > by-customer)] (println c v))
\`\`\``,
    `The numbers add up now; the first customer in the sorted list has the largest share.

\`\`\`clojure
(return {:orders (count feb)
         :total (/ (round (* feb-total 100)) 100.0)
         :customer (key (apply max-key val by-customer))})
\`\`\``,
  ],
  expected: answer(),
});
