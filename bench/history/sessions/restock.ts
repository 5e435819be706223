// Exploration mode (seed 003): most turns define without printing and read what they got
// from the summary's samples in the next prompt; the agent finds well-reviewed products in
// stock and what to restock, printing only now and then. The supplier tool takes the hidden
// context value data/_token (the benchmark gives every session one): no prompt may show it.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { pick, random, reply, type Session } from "../session.js";

const rand = random(31);
const CATEGORIES = ["Electronics", "Furniture", "Kitchen"];
const NAMES = ["Laptop", "Mouse", "Monitor", "Keyboard", "Headphones", "Webcam", "Speaker", "Tablet", "Router", "Charger", "Desk", "Chair", "Lamp", "Kettle", "Toaster", "Blender"];

const products = NAMES.map((name, i) => ({ sku: `P-${100 + i}`, name, category: i < 10 ? "Electronics" : pick(rand, CATEGORIES.slice(1)), price: Math.round(20 + rand() * 1200) }));
const RATINGS = [4.5, 3.2, 4.7, 4.1, 4.4, 2.9, 4.0, 3.6, 4.8, 4.2, 3.9, 4.6, 3.1, 4.3, 3.7, 4.9];
const reviews = products.map((p, i) => ({ sku: p.sku, rating: RATINGS[i], count: Math.floor(5 + rand() * 300) }));
/** Headphones, Router and Tablet are out of stock everywhere. */
const EMPTY = new Set(["P-104", "P-107", "P-108"]);
const inventory = products.flatMap((p) => ["north", "south"].map((warehouse) => ({ sku: p.sku, warehouse, units: EMPTY.has(p.sku) ? 0 : 1 + Math.floor(rand() * 40) })));

const tools = {
  "search-reviews": tool({
    description: "Average rating (out of 5) and review count of every product in a category.",
    input: z.object({ category: z.string() }),
    run: ({ category }) => reviews.filter((r) => products.find((p) => p.sku === r.sku)?.category === category),
  }),
  "get-inventory": tool({
    description: "Units in stock per product and warehouse.",
    run: () => inventory,
  }),
  "get-supplier": tool({
    description: "The supplier of a product and its lead time in days.",
    input: z.object({ sku: z.string(), token: z.string().describe("API token: data/_token") }),
    run: ({ sku }) => ({ sku, supplier: `Supplier ${sku.charCodeAt(sku.length - 1) % 3 === 0 ? "A" : "B"}`, "lead-days": 3 + (sku.charCodeAt(sku.length - 1) % 9) }),
  }),
};

export const restockExploration: Session = {
  name: "restock-exploration",
  kind: "exploration",
  prompt: "Find the well-reviewed Electronics products (rating 4.0 or more): which are in stock, which need restocking and from which supplier, and the cheapest one in stock. Return a summary map.",
  tools,
  context: { products },
  replies: [
    reply("I'll select the Electronics products first.", `(def electronics (filterv #(= (:category %) "Electronics") data/products))`),
    reply("Ten products. Now their reviews.", `(def reviews (tool/search-reviews {:category "Electronics"}))`),
    reply("Reviews have :sku, :rating and :count. Now the inventory.", `(def inventory (tool/get-inventory))`),
    reply(
      "Inventory rows are per warehouse. I'll index ratings and total units by sku.",
      `(def rating-by-sku (into {} (map (juxt :sku :rating) reviews)))
(def stock-by-sku (reduce (fn [m r] (update m (:sku r) (fnil + 0) (:units r))) {} inventory))`,
    ),
    reply("Which products are well reviewed?", `(def well-reviewed (filterv #(>= (get rating-by-sku (:sku %) 0) 4.0) electronics))
(println (count well-reviewed) (mapv :name well-reviewed))`),
    reply("Split them by stock.", `(def in-stock (filterv #(pos? (get stock-by-sku (:sku %) 0)) well-reviewed))
(def out-of-stock (filterv #(zero? (get stock-by-sku (:sku %) 0)) well-reviewed))`),
    reply("Look up the suppliers of those out of stock.", `(def suppliers (mapv #(tool/get-supplier {:sku (:sku %) :token data/_token}) out-of-stock))`),
    reply("Join products and suppliers into a restock list.", `(def restock (mapv (fn [p s] {:name (:name p) :supplier (:supplier s) :lead-days (:lead-days s)}) out-of-stock suppliers))
(println restock)`),
    reply("The cheapest product in stock.", `(def cheapest (first (sort-by :price in-stock)))`),
    reply("Assemble the answer and check its size.", `(def answer {:in-stock (mapv :name in-stock) :restock restock :cheapest (:name cheapest)})
(println (count (:in-stock answer)) (:cheapest answer))`),
    reply("Done.", "(return answer)"),
  ],
};
