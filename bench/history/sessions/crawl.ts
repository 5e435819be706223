// A long tool-heavy session (22 turns): the model crawls a paginated product catalogue
// page by page across turns, printing what each page holds, then fetches details for the
// interesting items and aggregates.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { pick, random, reply, type Session } from "../session.js";

const rand = random(23);
const brands = ["Acme", "Globex", "Initech", "Umbrella", "Hooli"];
const kinds = ["kettle", "toaster", "blender", "mixer", "grinder"];
const items = Array.from({ length: 150 }, (_, i) => ({
  sku: `P${String(i + 1).padStart(4, "0")}`,
  name: `${pick(rand, brands)} ${pick(rand, kinds)} ${100 + i}`,
  price: Math.round(20 + rand() * 280),
  "in-stock": rand() > 0.2,
}));
const details = (sku: string) => {
  const r = random(Number(sku.slice(1)));
  return { sku, watts: 300 + Math.floor(r() * 1700), warranty: pick(r, [1, 2, 3, 5]), rating: Math.round((2.5 + r() * 2.5) * 10) / 10, reviews: Math.floor(r() * 900) };
};

const PAGE = 12;
const tools = {
  "catalog-page": tool({
    description: "One page of the product catalogue (12 items per page, pages from 1): sku, name, price in EUR and stock flag, plus the total page count.",
    input: z.object({ page: z.number().int().positive() }),
    run: ({ page }) => ({ items: items.slice((page - 1) * PAGE, page * PAGE), pages: Math.ceil(items.length / PAGE) }),
  }),
  "product-details": tool({
    description: "Technical details and ratings of one product: watts, warranty years, average rating and review count.",
    input: z.object({ sku: z.string() }),
    run: ({ sku }) => details(sku),
  }),
};

const pageTurn = (page: number): string =>
  reply(
    `Page ${page}: I'll fetch it, add its blenders to the ones collected so far, and print the blenders on this page so I can follow the prices as I go.`,
    `(def page-${page} (tool/catalog-page {:page ${page}}))
(def blenders (into blenders (filter blender? (:items page-${page}))))
(doseq [b (filter blender? (:items page-${page}))] (println (:sku b) (:name b) (:price b) (if (:in-stock b) "in stock" "out")))
(println "blenders so far:" (count blenders))`,
  );

export const catalogCrawl: Session = {
  name: "catalog-crawl",
  kind: "tool-heavy",
  prompt: "Find the best blender under 150 EUR that is in stock: crawl the catalogue, compare the candidates' ratings, power and warranty, and return the sku with a short justification.",
  tools,
  output: z.object({ sku: z.string(), why: z.string() }),
  context: {},
  replies: [
    reply(
      "I'll fetch the first catalogue page to learn the item format and the number of pages.",
      `(def page-1 (tool/catalog-page {:page 1}))
(println "pages:" (:pages page-1))
(doseq [i (take 4 (:items page-1))] (println i))`,
    ),
    reply(
      "There are 13 pages of 12 items. Names contain the product kind, so I'll define a predicate for blenders and start collecting them from page 1.",
      `(defn blender? "Whether a catalogue item is a blender" [item] (includes? (lower-case (:name item)) "blender"))
(def blenders "Blenders collected from the pages fetched so far" (filterv blender? (:items page-1)))
(doseq [b blenders] (println (:sku b) (:name b) (:price b) (if (:in-stock b) "in stock" "out")))`,
    ),
    ...Array.from({ length: 12 }, (_, i) => pageTurn(i + 2)),
    reply(
      "All 13 pages are done. I'll narrow the blenders down to candidates: in stock and under 150 EUR.",
      `(def candidates "In-stock blenders under 150 EUR" (filterv #(and (:in-stock %) (< (:price %) 150)) blenders))
(println (count candidates) "candidates")
(doseq [c candidates] (println (:sku c) (:name c) (:price c)))`,
    ),
    reply(
      "I'll fetch the details of every candidate in parallel.",
      `(def candidate-details "sku -> details" (into {} (pmap (fn [c] [(:sku c) (tool/product-details {:sku (:sku c)})]) candidates)))
(doseq [[sku d] (sort-by key candidate-details)] (println sku (:rating d) (:reviews d) (:watts d) (:warranty d)))`,
    ),
    reply(
      "Ratings with very few reviews are unreliable. I'll only keep candidates with at least 50 reviews and rank by rating, then watts.",
      `(def ranked "Candidates with 50+ reviews, best first" (->> candidates
  (map #(merge % (get candidate-details (:sku %))))
  (filter #(>= (:reviews %) 50))
  (sort-by (juxt (comp - :rating) (comp - :watts)))
  vec))
(doseq [r (take 5 ranked)] (println (:sku r) (:name r) (:price r) (:rating r) (:reviews r) (:watts r) (:warranty r)))`,
    ),
    reply(
      "Let me compare the top two in detail, including the price difference, before deciding.",
      `(def top2 (take 2 ranked))
(doseq [r top2] (println r))
(println "price difference:" (abs (- (:price (first top2)) (:price (second top2)))))`,
    ),
    reply(
      "I'll take the best rated candidate and write the justification from its numbers.",
      `(def best (first ranked))
(def why (str (:name best) ": rated " (:rating best) " from " (:reviews best) " reviews, " (:watts best) " W, " (:warranty best) "-year warranty, " (:price best) " EUR"))
(println why)`,
    ),
    reply("Returning the pick.", "(return {:sku (:sku best) :why why})"),
  ],
};
