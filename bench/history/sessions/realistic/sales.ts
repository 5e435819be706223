// sales-exploration with replies of realistic length: the reasoning a GPT-4-class model
// writes before each program (what the last output showed, the plan, a caveat) and
// programs in its usual style (comments, threading macros, labelled output, a helper
// restated now and then).
import { reply, type Session } from "../../session.js";
import { salesExploration } from "../sales.js";

export const salesExplorationRealistic: Session = {
  ...salesExploration,
  replies: [
    reply(
      "To answer these questions I first need to understand the structure of the sales data. I'll check how many rows there are, which keys each row has, and print one full row so I can see the value types (for example whether the month is a string and how the discount is encoded). I'll also look at the distinct regions and products, since the analysis groups by them.",
      `;; Step 1: inspect the dataset
(println "rows:" (count data/sales))
(println "keys:" (keys (first data/sales)))
(println "first:" (first data/sales))

;; Distinct values of the grouping columns
(println "regions:" (sort (distinct (map :region data/sales))))
(println "products:" (sort (distinct (map :product data/sales))))`,
    ),
    reply(
      "There are 160 sales with the keys :id, :region, :rep, :product, :month, :units, :unit-price and :discount. The discount appears to be a fraction (0 in the first row), so revenue should be units × unit price × (1 − discount). I'll define a revenue function with a docstring and verify it on the first three rows by printing the inputs next to the result, to be sure the discount is applied the right way.",
      `;; Revenue of a single sale, net of discount
(defn revenue
  "Revenue of one sale: units x unit price, less its discount"
  [s]
  (* (:units s) (:unit-price s) (- 1 (:discount s))))

;; Check the formula on a few rows
(doseq [s (take 3 data/sales)]
  (println (:id s) "units" (:units s) "price" (:unit-price s) "discount" (:discount s) "->" (revenue s)))`,
    ),
    reply(
      "The revenue function works: for example 2 units at 31 with no discount gives 62. Now I'll compute the total revenue per region. I'll group the sales by :region, sum the revenue of each group, and store the result as by-region so I can reuse it for the final answer. Printing the regions sorted by revenue (rounded) will show the leader directly, and I'll add the grand total as a check.",
      `;; Step 2: revenue per region
(def by-region
  "Revenue per region"
  (->> data/sales
       (group-by :region)
       (map (fn [[region rows]] [region (reduce + (map revenue rows))]))
       (into {})))

;; Highest first
(doseq [[region total] (sort-by val > by-region)]
  (println region (round total)))
(println "total:" (round (reduce + (vals by-region))))`,
    ),
    reply(
      "North leads with about 14,484, followed closely by east (14,088) and south (13,495), while west is clearly behind at 9,797. Next I'll do the same aggregation per product. I'll restate the revenue helper here so this step is self-contained, then group by :product and print the products ranked by revenue.",
      `;; Restated so this program stands on its own
(defn revenue
  "Revenue of one sale: units x unit price, less its discount"
  [s]
  (* (:units s) (:unit-price s) (- 1 (:discount s))))

;; Step 3: revenue per product
(def by-product
  "Revenue per product"
  (->> data/sales
       (group-by :product)
       (map (fn [[product rows]] [product (reduce + (map revenue rows))]))
       (into {})))

(doseq [[product total] (sort-by val > by-product)]
  (println product (round total)))`,
    ),
    reply(
      "Gadget is the top product by revenue (12,704), ahead of doohickey (10,817); the others are between 8,900 and 9,900. I want to understand whether this is driven by volume or by price, so I'll compute the units sold per product as well. If gadget also sells the most units, volume explains the ranking; otherwise its price point does.",
      `;; Step 4: units sold per product (volume vs price)
(def units-by-product
  "Units sold per product"
  (->> data/sales
       (group-by :product)
       (map (fn [[product rows]] [product (reduce + (map :units rows))]))
       (into {})))

(println units-by-product)
(println "total units:" (reduce + (vals units-by-product)))`,
    ),
    reply(
      "Gadget also sells the most units (828), so its lead comes from volume rather than price. Now the monthly trend. The months are strings like \"2026-01\", which sort correctly as text, so I'll build a sorted map from month to rounded revenue and print it in order. I'll keep this as monthly because the final answer needs it.",
      `;; Step 5: revenue per month, in calendar order
(def monthly
  "Revenue per month, ascending"
  (into (sorted-map)
        (map (fn [[month rows]] [month (round (reduce + (map revenue rows)))])
             (group-by :month data/sales))))

(doseq [[month total] monthly]
  (println month total))
(println "months:" (count monthly))`,
    ),
    reply(
      "Revenue moves quite a bit from month to month: 11,086 in January, down to 7,911 in February, a low of 5,956 in April and a rebound to 10,227 in May. To describe the trend precisely I'll compute the month-over-month change for each month after the first, using partition over consecutive pairs of the sorted map, and print each change with its sign.",
      `;; Step 6: month-over-month change
(def changes
  "Change in revenue from the previous month"
  (map (fn [[[_ prev] [month cur]]] [month (- cur prev)])
       (partition 2 1 monthly)))

(doseq [[month delta] changes]
  (println month (if (pos? delta) "+" "") delta))`,
    ),
    reply(
      "The series alternates between drops and recoveries (−3,175 in February, +4,271 in May), so there is no steady trend. Next, the discount question. I'll collect the sales that carry a discount, count them against all sales, and look at how they are distributed across reps. I'll keep the discounted sales as a definition because the rate calculation in the next step needs them.",
      `;; Step 7: sales with a discount
(def discounted
  "Sales with a discount"
  (filterv #(pos? (:discount %)) data/sales))

(println "discounted sales:" (count discounted) "of" (count data/sales))
(println "per rep:" (frequencies (map :rep discounted)))
(println "discount values:" (frequencies (map :discount discounted)))`,
    ),
    reply(
      "25 of 160 sales are discounted, all at 20%. Dara has the most discounted sales (8), but raw counts favour reps who simply sell more. A fairer measure is each rep's discount rate: discounted sales divided by that rep's total sales. I'll compute the rate per rep and print it as a percentage, sorted from highest to lowest.",
      `;; Step 8: discount rate per rep
(def sales-per-rep
  "Number of sales per rep"
  (frequencies (map :rep data/sales)))

(def discounted-per-rep (frequencies (map :rep discounted)))

(def discount-rate
  "Share of each rep's sales that carry a discount"
  (into {}
        (map (fn [[rep n]] [rep (/ (get discounted-per-rep rep 0) n)])
             sales-per-rep)))

(doseq [[rep rate] (sort-by val > discount-rate)]
  (println rep (round (* 100 rate)) "%"))`,
    ),
    reply(
      "Dara discounts 33% of her sales and Hana 25%, well above the others; Eli never discounts. Before fixing the top region I want to make sure a single product isn't skewing the region ranking. I'll find, for each product, the region with the most revenue; if one region leads for every product the result is robust, if leadership is spread it's worth noting.",
      `;; Step 9: leading region per product
(def leader-per-product
  "Product -> region with the highest revenue for it"
  (into {}
        (for [[product rows] (group-by :product data/sales)]
          (let [per-region (update-vals (group-by :region rows)
                                        #(reduce + (map revenue %)))]
            [product (key (apply max-key val per-region))]))))

(println leader-per-product)
(println "leads per region:" (frequencies (vals leader-per-product)))`,
    ),
    reply(
      "Leadership is spread: east leads for three products, north and south for one each, and north still has the highest total. Large individual orders could also distort the totals, so I'll list the five biggest sales by revenue with their region and product. If they are concentrated in one region, the region ranking would be fragile.",
      `;; Step 10: the largest individual sales
(def biggest
  "The five sales with the highest revenue"
  (take 5 (sort-by revenue > data/sales)))

(doseq [s biggest]
  (println (:id s) (:region s) (:product s) (round (revenue s))))
(println "regions among the top 5:" (frequencies (map :region biggest)))`,
    ),
    reply(
      "The five largest sales are spread across north, south, west and east, each around 1,100, so no single order drives the region result. I can now fix the answers for the top region and the top product from the maps I already have, by taking the key with the maximum value in by-region and by-product.",
      `;; Step 11: top region and product
(def top-region
  "Region with the highest revenue"
  (key (apply max-key val by-region)))

(def top-product
  "Product with the highest revenue"
  (key (apply max-key val by-product)))

(println "top region:" top-region "with" (round (get by-region top-region)))
(println "top product:" top-product "with" (round (get by-product top-product)))`,
    ),
    reply(
      "North is the top region and gadget the top product. For the reps who discount most often I need a threshold rather than an arbitrary top-N. I'll compute the overall discount rate and select the reps whose rate is above 1.5 times that average, sorted by name so the result is deterministic.",
      `;; Step 12: reps discounting well above average
(def overall-rate
  "Share of all sales with a discount"
  (/ (count discounted) (count data/sales)))

(def discount-reps
  "Reps discounting well above the average rate"
  (->> discount-rate
       (keep (fn [[rep rate]] (when (> rate (* 1.5 overall-rate)) rep)))
       sort
       vec))

(println "overall:" (round (* 100 overall-rate)) "% reps:" discount-reps)`,
    ),
    reply(
      "The overall discount rate is 16%, and Dara and Hana are above 1.5 times that. I now have every part of the answer: the top region (north), the top product (gadget), the monthly revenue map and the reps who discount most often. I'll return them in the expected shape.",
      `;; Final answer
(return {:top-region top-region
         :top-product top-product
         :monthly monthly
         :discount-reps discount-reps})`,
    ),
  ],
};
