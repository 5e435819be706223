// Tool-heavy fan-out: a paginated customer API and a per-customer orders API. The model
// walks the pages, fans out with pmap, aggregates, checks outliers, and returns the top
// customers by lifetime value.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { pick, random, reply, type Session } from "../session.js";

const rand = random(42);
const countries = ["DE", "FR", "NL", "SE", "ES", "IT"];
const customers = Array.from({ length: 36 }, (_, i) => ({ id: `c${String(i + 1).padStart(3, "0")}`, name: `Customer ${i + 1}`, country: pick(rand, countries), since: 2018 + Math.floor(rand() * 8) }));
const orders: Record<string, Array<{ id: string; total: number; status: string; date: string }>> = {};
for (const c of customers) {
  orders[c.id] = Array.from({ length: 1 + Math.floor(rand() * 7) }, (_, k) => ({
    id: `${c.id}-o${k + 1}`,
    total: Math.round(rand() * 90000) / 100,
    status: rand() < 0.12 ? "refunded" : "paid",
    date: `2026-0${1 + Math.floor(rand() * 6)}-1${Math.floor(rand() * 9)}`,
  }));
}

const PAGE = 10;
const tools = {
  "list-customers": tool({
    description: "One page of customers (10 per page, pages from 1) with a flag telling whether more pages follow.",
    input: z.object({ page: z.number().int().positive() }),
    run: ({ page }) => ({ customers: customers.slice((page - 1) * PAGE, page * PAGE), "has-more": page * PAGE < customers.length }),
  }),
  "get-orders": tool({
    description: "All orders of one customer: id, total in EUR, status (paid or refunded) and date.",
    input: z.object({ "customer-id": z.string() }),
    run: (args) => orders[args["customer-id"]] ?? [],
  }),
};

export const ordersFanout: Session = {
  name: "orders-fanout",
  kind: "tool-heavy",
  prompt: "Find the five customers with the highest lifetime value (sum of paid orders, refunds excluded) and report their country mix.",
  tools,
  output: z.object({ top: z.array(z.object({ id: z.string(), value: z.number() })), countries: z.record(z.string(), z.number()) }),
  context: {},
  replies: [
    reply(
      "The customer list is paginated, so I'll fetch the first page to see the record format and whether there are more pages.",
      `(def page-1 (tool/list-customers {:page 1}))
(println "has more:" (:has-more page-1))
(doseq [c (take 3 (:customers page-1))] (println c))`,
    ),
    reply(
      "Each page has 10 customers and a has-more flag. Rather than fetching page by page across turns, I'll loop until has-more is false and keep all customers.",
      `(def all-customers "Every customer, all pages" (loop [page 1 acc []]
  (let [r (tool/list-customers {:page page})
        acc (into acc (:customers r))]
    (if (:has-more r) (recur (inc page) acc) acc))))
(println (count all-customers) "customers")`,
    ),
    reply(
      "36 customers. Before fanning out I'll look at the orders of one customer to understand the order format, especially the status values.",
      `(def sample-orders (tool/get-orders {:customer-id "c001"}))
(doseq [o sample-orders] (println o))`,
    ),
    reply(
      "Orders have a total and a status of paid or refunded. I'll fetch the orders of every customer in parallel with pmap, keyed by customer id.",
      `(def orders-by-customer "customer id -> orders" (into {} (pmap (fn [c] [(:id c) (tool/get-orders {:customer-id (:id c)})]) all-customers)))
(println (count orders-by-customer) "customers," (reduce + (map count (vals orders-by-customer))) "orders")`,
    ),
    reply(
      "I'll check which status values occur overall before filtering, in case there is something besides paid and refunded.",
      `(println (frequencies (map :status (mapcat val orders-by-customer))))`,
    ),
    reply(
      "Only paid and refunded. Now the lifetime value per customer from paid orders only.",
      `(defn lifetime-value "Sum of paid order totals" [orders] (reduce + (map :total (filter #(= "paid" (:status %)) orders))))
(def ltv "customer id -> lifetime value (paid orders)" (update-vals orders-by-customer lifetime-value))
(doseq [[id v] (take 8 (sort-by val > ltv))] (println id (round v)))`,
    ),
    reply(
      "Let me make sure refunds do not change the ranking in a surprising way by comparing with the gross value including refunds for the top ten.",
      `(def gross (update-vals orders-by-customer #(reduce + (map :total %))))
(doseq [[id v] (take 10 (sort-by val > ltv))] (println id (round v) "gross" (round (get gross id))))`,
    ),
    reply(
      "The ranking is stable. I'll take the top five and look up their countries.",
      `(def top5 "The five customers with the highest lifetime value" (mapv (fn [[id v]] {:id id :value (/ (round (* 100 v)) 100.0)}) (take 5 (sort-by val > ltv))))
(def country-of (into {} (map (juxt :id :country) all-customers)))
(def top-countries (frequencies (map #(get country-of (:id %)) top5)))
(println top5)
(println top-countries)`,
    ),
    reply(
      "As a sanity check, the top five should account for a sizeable share of total paid revenue; I'll print that share.",
      `(def share (/ (reduce + (map :value top5)) (reduce + (vals ltv))))
(println "top-5 share:" (round (* 100 share)) "%")`,
    ),
    reply("Everything is consistent; returning the result.", "(return {:top top5 :countries top-countries})"),
  ],
};
