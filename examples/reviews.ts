// The reviews/inventory task of the reference design: two tools return free-text reports
// (as many real APIs do), so the agent fetches and prints them, parses them into maps with
// regular expressions, and joins them with the product list from the context.
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { defineExample } from "./types.js";

interface Product {
  name: string;
  price: number;
  category: string;
}

const products: Product[] = [
  { name: "Laptop", price: 1200, category: "Electronics" },
  { name: "Mouse", price: 25, category: "Electronics" },
  { name: "Monitor", price: 300, category: "Electronics" },
  { name: "Keyboard", price: 75, category: "Electronics" },
  { name: "Headphones", price: 150, category: "Electronics" },
  { name: "Webcam", price: 90, category: "Electronics" },
  { name: "Desk Chair", price: 250, category: "Furniture" },
  { name: "Standing Desk", price: 600, category: "Furniture" },
  { name: "Notebook", price: 5, category: "Stationery" },
];

/** Average rating and review count per product (the review service's data). */
const ratings: Record<string, { rating: number; reviews: number; note: string }> = {
  Laptop: { rating: 4.5, reviews: 212, note: "Praised for battery life and build quality." },
  Mouse: { rating: 3.2, reviews: 88, note: "Frequent complaints about the scroll wheel." },
  Monitor: { rating: 4.7, reviews: 140, note: "Sharp panel, easy stand adjustment." },
  Keyboard: { rating: 4.1, reviews: 64, note: "Good keys, loud switches." },
  Headphones: { rating: 4.4, reviews: 301, note: "Excellent noise cancelling." },
  Webcam: { rating: 2.9, reviews: 45, note: "Grainy picture in low light." },
  "Desk Chair": { rating: 4.6, reviews: 97, note: "Comfortable for long days." },
  "Standing Desk": { rating: 3.8, reviews: 52, note: "Motor is noisy." },
  Notebook: { rating: 4.0, reviews: 12, note: "Nice paper." },
};

/** Units in the warehouse; 0 is reported as OUT OF STOCK. */
const stock: Record<string, number> = { Laptop: 23, Mouse: 0, Monitor: 8, Keyboard: 41, Headphones: 0, Webcam: 12, "Desk Chair": 5, "Standing Desk": 2, Notebook: 500 };

const searchReviews = tool({
  description: "Review summary for a product category, as a text report: one line per product with its average rating out of 5 and review count.",
  input: z.object({ category: z.string().describe("Product category, e.g. \"Electronics\"") }),
  output: z.string(),
  run: ({ category }) => {
    const lines = products
      .filter((p) => p.category.toLowerCase() === category.toLowerCase())
      .map((p) => `- ${p.name}: Average rating ${ratings[p.name].rating}/5 (${ratings[p.name].reviews} reviews). ${ratings[p.name].note}`);
    return lines.length === 0 ? `No reviews found for category ${category}.` : `Customer Review Summary for ${category}:\n${lines.join("\n")}`;
  },
});

const getInventory = tool({
  description: "The warehouse inventory report as text: one line per product with the units in stock, or OUT OF STOCK.",
  output: z.string(),
  run: () => `Warehouse Inventory Report (as of 2026-03-01):\n${products.map((p) => `${p.name} - ${stock[p.name] > 0 ? `${stock[p.name]} units in stock` : "OUT OF STOCK"}`).join("\n")}`,
});

const category = "Electronics";

export const reviews = defineExample({
  name: "reviews",
  title: "Well-reviewed products in stock",
  summary: "Two tools return free-text reports; the agent prints them, parses them with regular expressions into maps, and joins them with the product list.",
  prompt: "Find well-reviewed products (average rating of 4.0 or more) in the {{category}} category that are currently in stock. Return their names, best rated first.",
  tools: { "search-reviews": searchReviews, "get-inventory": getInventory },
  output: z.object({ products: z.array(z.string()).describe("Product names, best rated first") }),
  maxTurns: 5,
  context: { category, products },
  replies: [
    `I'll start by selecting the products of the category and fetching both reports, printing them so I can see their format.

\`\`\`clojure
(def in-category "Products of the requested category" (filterv #(= (:category %) data/category) data/products))
(def reviews (tool/search-reviews {:category data/category}))
(def inventory (tool/get-inventory))
(println "Products:" (mapv :name in-category))
(println reviews)
(println inventory)
\`\`\``,
    `Both reports are plain text. Ratings look like "- Laptop: Average rating 4.5/5" and stock lines like "Laptop - 23 units in stock" or "Mouse - OUT OF STOCK". I'll parse them into maps and list the well-rated candidates.

\`\`\`clojure
(defn parse-ratings
  "Product name -> average rating, from the review summary text"
  [text]
  (into {} (map (fn [[_ product rating]] [product (parse-double rating)])
                (re-seq #"- (.+?): Average rating ([0-9.]+)/5" text))))

(defn parse-stock
  "Product name -> units in stock; products out of stock are absent"
  [text]
  (into {} (map (fn [[_ product units]] [product (parse-long units)])
                (re-seq #"(?m)^(.+?) - (\\d+) units in stock" text))))

(def rating-of (parse-ratings reviews))
(def units-of (parse-stock inventory))
(def candidates
  "Well-rated products of the category with rating and units, best rated first"
  (->> in-category
       (map :name)
       (filter #(>= (get rating-of % 0) 4.0))
       (map (fn [n] {:name n :rating (get rating-of n) :units (get units-of n 0)}))
       (sort-by :rating >)))
(doseq [c candidates] (println c))
\`\`\``,
    `Headphones are well rated but have 0 units, so they drop out. The others are in stock.

\`\`\`clojure
(return {:products (->> candidates (filter #(pos? (:units %))) (mapv :name))})
\`\`\``,
  ],
  expected: {
    products: products
      .filter((p) => p.category === category && ratings[p.name].rating >= 4 && stock[p.name] > 0)
      .sort((a, b) => ratings[b.name].rating - ratings[a.name].rating)
      .map((p) => p.name),
  },
});
