// inventory-reconcile with replies of realistic length (see sales.ts in this folder): the
// same mistakes on the same turns, written the way a model writes them.
import { reply, type Session } from "../../session.js";
import { inventoryReconcile } from "../inventory.js";

export const inventoryReconcileRealistic: Session = {
  ...inventoryReconcile,
  replies: [
    reply(
      "To reconcile the two systems I first need the list of SKUs to check. I'll fetch it from the catalogue, keep it in a definition, and print how many SKUs there are with a few examples to see the id format.",
      `;; Step 1: the SKUs to reconcile
(def skus
  "All SKUs carried in the catalogue"
  (tool/list-skus))

(println (count skus) "skus:" (take 5 skus))`,
    ),
    reply(
      "There are 24 SKUs named like SKU-1000. Before fetching everything I want to see what each system returns for a single SKU, because the two tools might use different formats. I'll call both for SKU-1000 and print the raw results side by side.",
      `;; Step 2: compare the two answers for one SKU
(def w-sample (tool/warehouse-stock {:sku "SKU-1000"}))
(def e-sample (tool/erp-stock {:sku "SKU-1000"}))

(println "warehouse:" w-sample "| erp:" e-sample)`,
    ),
    reply(
      "The warehouse returns a string (\"48 units\") while the ERP returns a number (52), so they already disagree for SKU-1000. I'll fetch the ERP count of every SKU in parallel and keep them in a map from SKU to count, then print the number of entries.",
      `;; Step 3: ERP counts for every SKU
(def erp-counts
  (into {}
        (pmap (fn [s] [s (tool/erp-stock {:sku s})])
              skus)))

(println (count erp-counts) "erp counts")`,
    ),
    reply(
      "The fan-out failed because the ERP does not know SKU-1007, and a single failing call stopped the whole program. The tool's description warned about unknown SKUs. I'll catch the failure per SKU and record :missing instead, then list the SKUs the ERP does not know.",
      `;; Step 3 (fixed): catch unknown SKUs per call
(def erp-counts
  "sku -> ERP count, or :missing"
  (into {}
        (pmap (fn [s] [s (try (tool/erp-stock {:sku s})
                              (catch e :missing))])
              skus)))

(def missing
  "SKUs unknown to the ERP"
  (vec (sort (keep (fn [[s c]] (when (= c :missing) s)) erp-counts))))

(println "missing:" missing)
(println "known to the ERP:" (count (remove #(= :missing (val %)) erp-counts)))`,
    ),
    reply(
      "Two SKUs, SKU-1007 and SKU-1019, are missing from the ERP; the other 22 have counts. Now I'll fetch the warehouse answer for every SKU in parallel and keep the raw text for now, printing a few entries to confirm the format is the same for all of them.",
      `;; Step 4: warehouse answers for every SKU
(def warehouse-raw
  "sku -> warehouse answer (text)"
  (into {}
        (pmap (fn [s] [s (tool/warehouse-stock {:sku s})])
              skus)))

(println (count warehouse-raw) "warehouse answers")
(println (take 3 warehouse-raw))`,
    ),
    reply(
      "All warehouse answers look like \"131 units\". I'll compare the two systems directly now, skipping the SKUs missing from the ERP, and collect the SKUs whose counts differ.",
      `;; Step 5: compare the counts
(def mismatches
  (filterv (fn [s]
             (and (not= :missing (get erp-counts s))
                  (not= (get erp-counts s) (- (get warehouse-raw s) 0))))
           skus))

(println (count mismatches) "mismatches")`,
    ),
    reply(
      "The comparison failed with a type error: the warehouse values are strings like \"48 units\", so the subtraction I used to coerce them does not work. I'll parse the number out of each answer with a regular expression first and keep the parsed counts.",
      `;; Step 5a: parse the warehouse counts
(def warehouse-counts
  "sku -> warehouse units"
  (update-vals warehouse-raw #(parse-long (re-find #"\\d+" %))))

(println (take 3 warehouse-counts))
(println "all parsed:" (every? number? (vals warehouse-counts)))`,
    ),
    reply(
      "Every warehouse answer parsed to a number. Now I'll redo the comparison with the parsed counts, skipping SKUs missing from the ERP, and collect each mismatch as a map with both counts, which is the shape the answer needs.",
      `;; Step 5b: compare parsed counts
(def mismatches
  "SKUs whose counts differ"
  (vec (for [s skus
             :let [w (get warehouse-counts s)
                   e (get erp-counts s)]
             :when (and (not= e :missing) (not= w e))]
         {:sku s :warehouse w :erp e})))

(println (count mismatches) "mismatches")
(doseq [m mismatches]
  (println m))`,
    ),
    reply(
      "There are 8 mismatches, for example SKU-1000 with 48 in the warehouse and 52 in the ERP. To be sure these are real discrepancies and not parsing artefacts, I'll look at the size of the differences; parsing errors would typically show up as huge or zero differences.",
      `;; Step 6: size of the differences
(def diffs (sort (map #(- (:warehouse %) (:erp %)) mismatches)))

(println "differences:" diffs)
(println "largest:" (apply max (map abs diffs)))`,
    ),
    reply(
      "The differences range from −14 to +5 units, which is consistent with real counting discrepancies. As a final check I'll compare the total stock in each system over the SKUs both know; the gap should equal the sum of the differences.",
      `;; Step 7: totals over the SKUs both systems know
(def both (remove (set missing) skus))

(def warehouse-total (reduce + (map warehouse-counts both)))
(def erp-total (reduce + (map erp-counts both)))

(println "warehouse total:" warehouse-total "erp total:" erp-total)
(println "gap:" (- warehouse-total erp-total) "sum of differences:" (reduce + diffs))`,
    ),
    reply(
      "The totals differ by exactly the sum of the individual differences, so the reconciliation is consistent. Returning the mismatches with both counts and the SKUs missing from the ERP.",
      `;; Final answer
(return {:mismatches mismatches
         :missing missing})`,
    ),
  ],
};
