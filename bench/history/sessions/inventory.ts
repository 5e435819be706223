// Tools and errors together: reconciling stock between a warehouse system and the ERP.
// One tool fails for unknown SKUs, the model trips over that and over a data format, and
// recovers with try/catch and parsing.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { random, reply, type Session } from "../session.js";

const rand = random(19);
const skus = Array.from({ length: 24 }, (_, i) => `SKU-${1000 + i}`);
const warehouse: Record<string, number> = Object.fromEntries(skus.map((s) => [s, Math.floor(rand() * 200)]));
const erp: Record<string, number> = Object.fromEntries(skus.filter((_, i) => i !== 7 && i !== 19).map((s) => [s, warehouse[s] + (rand() < 0.25 ? Math.floor(rand() * 30) - 15 : 0)]));

const tools = {
  "list-skus": tool({ description: "All SKUs carried in the catalogue.", run: () => skus }),
  "warehouse-stock": tool({
    description: 'Units on hand in the warehouse for a SKU, as a string like "42 units".',
    input: z.object({ sku: z.string() }),
    run: ({ sku }) => `${warehouse[sku] ?? 0} units`,
  }),
  "erp-stock": tool({
    description: "Units the ERP believes are in stock for a SKU. Fails for SKUs the ERP does not know.",
    input: z.object({ sku: z.string() }),
    run: ({ sku }) => {
      if (!(sku in erp)) throw new Error(`SKU ${sku} not found in ERP`);
      return erp[sku];
    },
  }),
};

export const inventoryReconcile: Session = {
  name: "inventory-reconcile",
  kind: "error-recovery",
  prompt: "Reconcile warehouse stock with the ERP for every SKU: return the SKUs whose counts differ (with both counts) and the SKUs missing from the ERP.",
  tools,
  output: z.object({ mismatches: z.array(z.object({ sku: z.string(), warehouse: z.number(), erp: z.number() })), missing: z.array(z.string()) }),
  context: {},
  failingTurns: [3, 6],
  replies: [
    reply("First the list of SKUs.", `(def skus (tool/list-skus))\n(println (count skus) "skus:" (take 5 skus))`),
    reply(
      "I'll look at what both systems return for one SKU before fetching all of them.",
      `(println (tool/warehouse-stock {:sku "SKU-1000"}) "|" (tool/erp-stock {:sku "SKU-1000"}))`,
    ),
    reply(
      "The warehouse returns a string like \"N units\" and the ERP a number. I'll fetch both for every SKU in parallel.",
      `(def erp-counts (into {} (pmap (fn [s] [s (tool/erp-stock {:sku s})]) skus)))
(println (count erp-counts))`,
    ),
    reply(
      "The ERP does not know some SKUs, and one failure stopped the whole fan-out. I'll catch the failure per SKU and mark it as missing instead.",
      `(def erp-counts "sku -> ERP count, or :missing" (into {} (pmap (fn [s] [s (try (tool/erp-stock {:sku s}) (catch e :missing))]) skus)))
(def missing "SKUs unknown to the ERP" (vec (sort (keep (fn [[s c]] (when (= c :missing) s)) erp-counts))))
(println "missing:" missing)`,
    ),
    reply(
      "Two SKUs are missing from the ERP. Now the warehouse counts for all SKUs.",
      `(def warehouse-raw "sku -> warehouse answer (text)" (into {} (pmap (fn [s] [s (tool/warehouse-stock {:sku s})]) skus)))
(println (take 3 warehouse-raw))`,
    ),
    reply(
      "I'll compare the counts directly.",
      `(def mismatches (filterv (fn [s] (and (not= :missing (get erp-counts s)) (not= (get erp-counts s) (- (get warehouse-raw s) 0)))) skus))
(println (count mismatches))`,
    ),
    reply(
      "The warehouse values are strings, so the arithmetic failed. I'll parse the number out of \"N units\" first.",
      `(def warehouse-counts "sku -> warehouse units" (update-vals warehouse-raw #(parse-long (re-find #"\\d+" %))))
(println (take 3 warehouse-counts))`,
    ),
    reply(
      "Now the comparison with parsed numbers, skipping SKUs missing from the ERP.",
      `(def mismatches "SKUs whose counts differ" (vec (for [s skus :let [w (get warehouse-counts s) e (get erp-counts s)] :when (and (not= e :missing) (not= w e))] {:sku s :warehouse w :erp e})))
(println (count mismatches) "mismatches")
(doseq [m mismatches] (println m))`,
    ),
    reply(
      "Let me check the size of the differences, to be sure these are real discrepancies and not parsing artefacts.",
      `(println (sort (map #(- (:warehouse %) (:erp %)) mismatches)))`,
    ),
    reply(
      "The differences are between -15 and +15 units, consistent with real counting discrepancies. I'll also confirm the totals per system for the SKUs both know.",
      `(def both (remove (set missing) skus))
(println "warehouse total:" (reduce + (map warehouse-counts both)) "erp total:" (reduce + (map erp-counts both)))`,
    ),
    reply("The reconciliation is done.", `(return {:mismatches mismatches :missing missing})`),
  ],
};
