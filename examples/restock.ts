// Exploration mode (seed 003): after a first look, the agent defines what it fetches and
// computes without printing it, and reads the values from the samples that the compressed
// history shows in the next prompt (`; Defined: reviews = vector[6], sample: ...`).
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { defineExample } from "./types.js";

const products = [
  { sku: "E-1", name: "Laptop", category: "Electronics", price: 1200 },
  { sku: "E-2", name: "Mouse", category: "Electronics", price: 25 },
  { sku: "E-3", name: "Monitor", category: "Electronics", price: 300 },
  { sku: "E-4", name: "Headphones", category: "Electronics", price: 150 },
  { sku: "E-5", name: "Webcam", category: "Electronics", price: 90 },
  { sku: "E-6", name: "Keyboard", category: "Electronics", price: 75 },
  { sku: "F-1", name: "Desk Chair", category: "Furniture", price: 250 },
];

const ratings: Record<string, number> = { "E-1": 4.5, "E-2": 3.2, "E-3": 4.7, "E-4": 4.4, "E-5": 2.9, "E-6": 4.1, "F-1": 4.6 };
const stock: Record<string, number> = { "E-1": 23, "E-2": 0, "E-3": 8, "E-4": 0, "E-5": 12, "E-6": 41, "F-1": 5 };
const suppliers: Record<string, { supplier: string; "lead-days": number }> = {
  "E-4": { supplier: "SoundCo", "lead-days": 9 },
  "E-2": { supplier: "Periph Ltd", "lead-days": 4 },
};

const tools = {
  "search-reviews": tool({
    description: "Average rating (out of 5) of every product in a category.",
    input: z.object({ category: z.string() }),
    run: ({ category }) => products.filter((p) => p.category === category).map((p) => ({ sku: p.sku, rating: ratings[p.sku] })),
  }),
  "get-inventory": tool({
    description: "Units in stock per product.",
    run: () => products.map((p) => ({ sku: p.sku, units: stock[p.sku] })),
  }),
  "get-supplier": tool({
    description: "The supplier of a product and its lead time in days.",
    input: z.object({ sku: z.string() }),
    run: ({ sku }) => {
      const s = suppliers[sku];
      if (s === undefined) throw new Error(`no supplier on file for ${sku}`);
      return { sku, ...s };
    },
  }),
};

const wellReviewed = products.filter((p) => p.category === "Electronics" && ratings[p.sku] >= 4.0);

export const restock = defineExample({
  name: "restock",
  title: "Exploring without printing",
  summary: "The agent defines what it fetches and computes without printing it; with --compress, each next prompt shows what it defined (samples where they fit in the turn, else the keys of its records), so it never prints them.",
  prompt: "Among Electronics products rated 4.0 or more, list those in stock and, for those out of stock, their supplier and lead time.",
  tools,
  output: z.object({
    "in-stock": z.array(z.string()).describe("Names of well-rated products in stock"),
    restock: z.array(z.object({ name: z.string(), supplier: z.string(), "lead-days": z.number() })),
  }),
  maxTurns: 6,
  context: { products },
  replies: [
    `I'll select the Electronics products and print how many there are.

\`\`\`clojure
(def electronics "Electronics products" (filterv #(= (:category %) "Electronics") data/products))
(println (count electronics) "Electronics products")
\`\`\``,
    `Six products. I'll fetch their ratings and the inventory without printing: the next summary shows their shapes.

\`\`\`clojure
(def reviews (tool/search-reviews {:category "Electronics"}))
(def inventory (tool/get-inventory))
\`\`\``,
    `Both are vectors of maps keyed by :sku (:rating, :units). I'll index them and split the well-rated products by stock.

\`\`\`clojure
(def rating-by-sku (into {} (map (juxt :sku :rating) reviews)))
(def units-by-sku (into {} (map (juxt :sku :units) inventory)))
(def well-rated (filterv #(>= (get rating-by-sku (:sku %)) 4.0) electronics))
(def in-stock (filterv #(pos? (get units-by-sku (:sku %))) well-rated))
(def out-of-stock (filterv #(zero? (get units-by-sku (:sku %))) well-rated))
\`\`\``,
    `One well-rated product is out of stock. I'll look up its supplier.

\`\`\`clojure
(def supplier-info (mapv #(tool/get-supplier {:sku (:sku %)}) out-of-stock))
\`\`\``,
    `The supplier records have :supplier and :lead-days. I'll return the answer.

\`\`\`clojure
(return {:in-stock (mapv :name in-stock)
         :restock (mapv (fn [p s] {:name (:name p) :supplier (:supplier s) :lead-days (:lead-days s)}) out-of-stock supplier-info)})
\`\`\``,
  ],
  expected: {
    "in-stock": wellReviewed.filter((p) => stock[p.sku] > 0).map((p) => p.name),
    restock: wellReviewed.filter((p) => stock[p.sku] === 0).map((p) => ({ name: p.name, ...suppliers[p.sku] })),
  },
});
