// Data exploration over several turns: learn the table's shape, aggregate by region and
// quarter against the targets, drill into the worst region by product, pull the field
// notes for an explanation, and return. Each turn builds on the previous turn's definitions.
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { q1Targets, sales } from "./data/sales.js";
import { defineExample } from "./types.js";

const notes: ReadonlyArray<{ region: string; month: string; product: string; note: string }> = [
  { region: "West", month: "2026-01", product: "Laptop", note: "Strong laptop demand from two school districts." },
  { region: "West", month: "2026-01", product: "Tablet", note: "Supplier delay: tablet shipments paused from mid-January to late February." },
  { region: "West", month: "2026-02", product: "Monitor", note: "Competitor ran a monitor promotion all month." },
  { region: "South", month: "2026-02", product: "Phone", note: "Carrier subsidy ended; phone upgrades slowed." },
  { region: "North", month: "2026-03", product: "Headset", note: "Headset bundle with laptops sold well." },
  { region: "East", month: "2026-01", product: "Laptop", note: "New enterprise account onboarded." },
];

const fieldNotes = tool({
  description: "Notes from the sales team of a region: month, product and a one-line observation.",
  input: z.object({ region: z.string().describe("Region name, e.g. \"North\"") }),
  output: z.array(z.object({ month: z.string(), product: z.string(), note: z.string() })),
  run: ({ region }) => notes.filter((n) => n.region === region).map(({ month, product, note }) => ({ month, product, note })),
});

/** The answer, computed directly from the data. */
function answer() {
  const q1 = (m: string) => m.startsWith("2026-");
  const actual = (region: string) => sales.filter((r) => r.region === region && q1(r.month)).reduce((s, r) => s + r.revenue, 0);
  const [region, target] = Object.entries(q1Targets).sort((a, b) => actual(a[0]) - a[1] - (actual(b[0]) - b[1]))[0];
  const change = new Map<string, number>();
  for (const r of sales) if (r.region === region) change.set(r.product, (change.get(r.product) ?? 0) + (q1(r.month) ? r.revenue : -r.revenue));
  const [product] = [...change].sort((a, b) => a[1] - b[1])[0];
  const note = notes.find((n) => n.region === region && n.product === product)?.note;
  return { region, shortfall: target - actual(region), product, note };
}

export const exploration = defineExample({
  name: "exploration",
  title: "Exploring sales data over several turns",
  summary: "Five turns: the table's shape, revenue against targets, a drill-down by product in the worst region, the field notes, then the answer.",
  prompt:
    "Which region fell furthest short of its Q1 2026 revenue target, and by how much? Which product's decline against Q4 2025 contributed most to it, " +
    "and what do the region's field notes say about that product? Return :region, :shortfall (USD), :product and :note.",
  tools: { "field-notes": fieldNotes },
  output: z.object({ region: z.string(), shortfall: z.number().positive(), product: z.string(), note: z.string() }),
  maxTurns: 7,
  context: { sales, targets: q1Targets },
  replies: [
    `I'll start by learning the shape of the sales table and the targets.

\`\`\`clojure
(println "Rows:" (count data/sales))
(println "First:" (first data/sales))
(println "Months:" (sort (distinct (map :month data/sales))))
(println "Regions:" (sort (distinct (map :region data/sales))))
(println "Products:" (sort (distinct (map :product data/sales))))
(println "Targets:" data/targets)
\`\`\``,
    `Monthly rows for Oct 2025 to Mar 2026, and targets keyed by region. I'll total revenue per region and quarter and compare Q1 2026 with the targets.

\`\`\`clojure
(defn quarter "Quarter label of a \\"YYYY-MM\\" month, e.g. \\"2026-Q1\\"" [month]
  (let [[y m] (str/split month #"-")]
    (str y "-Q" (inc (quot (dec (parse-long m)) 3)))))

(def revenue-by "Revenue per [region quarter]"
  (reduce (fn [acc r] (update acc [(:region r) (quarter (:month r))] (fnil + 0) (:revenue r))) {} data/sales))

(def gaps "Q1 2026 revenue against target per region, worst first"
  (->> data/targets
       (map (fn [[region target]]
              (let [actual (get revenue-by [(name region) "2026-Q1"])]
                {:region (name region) :target target :actual actual :gap (- actual target)})))
       (sort-by :gap)))
(doseq [g gaps] (println g))
\`\`\``,
    `Every region missed its target, but one by far the most. I'll compare its products quarter over quarter.

\`\`\`clojure
(def worst "The region furthest below target" (first gaps))
(def product-change "Per product in the worst region: Q4 2025 and Q1 2026 revenue, largest decline first"
  (->> data/sales
       (filter #(= (:region %) (:region worst)))
       (group-by :product)
       (map (fn [[p rows]]
              (let [by-q (group-by #(quarter (:month %)) rows)
                    q4 (reduce + (map :revenue (get by-q "2025-Q4")))
                    q1 (reduce + (map :revenue (get by-q "2026-Q1")))]
                {:product p :q4 q4 :q1 q1 :change (- q1 q4)})))
       (sort-by :change)))
(println "Region:" (:region worst) "short by" (- (:gap worst)))
(doseq [p product-change] (println p))
\`\`\``,
    `One product accounts for most of the decline. Let me quantify its share and read the field notes for the region.

\`\`\`clojure
(def product (:product (first product-change)))
(def total-change (reduce + (map :change product-change)))
(println product "explains" (/ (round (* 1000 (/ (:change (first product-change)) total-change))) 10.0) "% of the change")
(def region-notes (tool/field-notes {:region (:region worst)}))
(doseq [n region-notes] (println (:month n) (:product n) "-" (:note n)))
\`\`\``,
    `The notes explain the decline: a supplier delay. I have everything for the answer.

\`\`\`clojure
(return {:region (:region worst)
         :shortfall (- (:gap worst))
         :product product
         :note (:note (first (filter #(= (:product %) product) region-notes)))})
\`\`\``,
  ],
  expected: answer(),
});
