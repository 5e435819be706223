// Data exploration over a sales table: the model inspects the data, aggregates it along
// several dimensions, defines helpers, narrows the data down, and returns a summary.
import { z } from "zod";
import { pick, random, reply, type Session } from "../session.js";

const rand = random(7);
const regions = ["north", "south", "east", "west"];
const products = ["widget", "gadget", "gizmo", "doohickey", "sprocket"];
const reps = ["ana", "ben", "chen", "dara", "eli", "fay", "gus", "hana"];
const sales = Array.from({ length: 160 }, (_, i) => ({
  id: i + 1,
  region: pick(rand, regions),
  rep: pick(rand, reps),
  product: pick(rand, products),
  month: `2026-${String(1 + Math.floor(rand() * 6)).padStart(2, "0")}`,
  units: 1 + Math.floor(rand() * 40),
  "unit-price": [9.5, 14, 22.75, 5.25, 31][Math.floor(rand() * 5)],
  discount: rand() < 0.15 ? 0.2 : 0,
}));

export const salesExploration: Session = {
  name: "sales-exploration",
  kind: "exploration",
  prompt: "Analyse the sales data: which region and which product bring the most revenue, how revenue moves month by month, and which reps sell with discounts most often. Return a summary map.",
  tools: {},
  output: z.object({ "top-region": z.string(), "top-product": z.string(), monthly: z.record(z.string(), z.number()), "discount-reps": z.array(z.string()) }),
  context: { sales },
  replies: [
    reply(
      "I'll start by looking at the shape of the sales data: how many rows, which keys, and one example row.",
      `(println "rows:" (count data/sales))
(println "keys:" (keys (first data/sales)))
(println "first:" (first data/sales))`,
    ),
    reply(
      "Revenue is units times unit price, less the discount. I'll define a revenue function and check it on a couple of rows.",
      `(defn revenue "Revenue of one sale: units x unit price, less its discount" [s]
  (* (:units s) (:unit-price s) (- 1 (:discount s))))
(println (map revenue (take 3 data/sales)))`,
    ),
    reply(
      "Now the revenue per region, rounded for readability.",
      `(def by-region "Revenue per region" (update-vals (group-by :region data/sales) #(reduce + (map revenue %))))
(doseq [[r v] (sort-by val > by-region)] (println r (round v)))`,
    ),
    reply(
      "Next the same per product.",
      `(def by-product "Revenue per product" (update-vals (group-by :product data/sales) #(reduce + (map revenue %))))
(doseq [[p v] (sort-by val > by-product)] (println p (round v)))`,
    ),
    reply(
      "Let me look at units sold per product too, to see whether the price or the volume drives revenue.",
      `(def units-by-product (update-vals (group-by :product data/sales) #(reduce + (map :units %))))
(println units-by-product)`,
    ),
    reply(
      "Monthly revenue over the half year.",
      `(def monthly "Revenue per month, ascending" (into (sorted-map) (update-vals (group-by :month data/sales) #(round (reduce + (map revenue %))))))
(doseq [[m v] monthly] (println m v))`,
    ),
    reply(
      "The trend looks uneven. I want the month-over-month change to describe it.",
      `(def changes (map (fn [[a b]] [(first b) (- (second b) (second a))]) (partition 2 1 monthly)))
(doseq [[m d] changes] (println m (if (pos? d) "+" "") d))`,
    ),
    reply(
      "Now discounts: how many sales carry one, and which reps give them.",
      `(def discounted "Sales with a discount" (filterv #(pos? (:discount %)) data/sales))
(println "discounted sales:" (count discounted) "of" (count data/sales))
(println (frequencies (map :rep discounted)))`,
    ),
    reply(
      "Raw counts favour reps with more sales. I'll compute each rep's discount rate instead.",
      `(def sales-per-rep (frequencies (map :rep data/sales)))
(def discount-rate "Share of each rep's sales that carry a discount" (into {} (map (fn [[rep n]] [rep (/ (get (frequencies (map :rep discounted)) rep 0) n)]) sales-per-rep)))
(doseq [[rep r] (sort-by val > discount-rate)] (println rep (round (* 100 r)) "%"))`,
    ),
    reply(
      "I'll check the region leader per product, to make sure one product isn't skewing the region result.",
      `(def leader-per-product (into {} (for [[p rows] (group-by :product data/sales)]
  [p (key (apply max-key val (update-vals (group-by :region rows) #(reduce + (map revenue %)))))])))
(println leader-per-product)`,
    ),
    reply(
      "Large orders might dominate. Let me see the five biggest sales by revenue.",
      `(def biggest (take 5 (sort-by revenue > data/sales)))
(doseq [s biggest] (println (:id s) (:region s) (:product s) (round (revenue s))))`,
    ),
    reply(
      "The top five are spread across regions, so the region ranking is not driven by a single order. I'll fix the top region and product now.",
      `(def top-region (key (apply max-key val by-region)))
(def top-product (key (apply max-key val by-product)))
(println top-region top-product)`,
    ),
    reply(
      "Reps who discount clearly more often than the average: above 1.5 times the overall rate.",
      `(def overall-rate (/ (count discounted) (count data/sales)))
(def discount-reps "Reps discounting well above the average rate" (vec (sort (keep (fn [[rep r]] (when (> r (* 1.5 overall-rate)) rep)) discount-rate))))
(println "overall:" (round (* 100 overall-rate)) "% reps:" discount-reps)`,
    ),
    reply(
      "I have everything for the summary.",
      `(return {:top-region top-region :top-product top-product :monthly monthly :discount-reps discount-reps})`,
    ),
  ],
};
