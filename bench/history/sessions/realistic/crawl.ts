// catalog-crawl with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { catalogCrawl } from "../crawl.js";

/** Blenders printed on each page (2-13) of the terse run, for the next turn's recap. */
const found: Record<number, number> = { 1: 3, 2: 4, 3: 4, 4: 0, 5: 0, 6: 0, 7: 0, 8: 4, 9: 3, 10: 1, 11: 1, 12: 3 };
const total: Record<number, number> = { 1: 3, 2: 7, 3: 11, 4: 11, 5: 11, 6: 11, 7: 11, 8: 15, 9: 18, 10: 19, 11: 20, 12: 23 };

const pageTurn = (page: number): string =>
  reply(
    `Page ${page - 1} ${found[page - 1] === 0 ? "had no blenders" : `added ${found[page - 1]} blender${found[page - 1] === 1 ? "" : "s"}`}, so ${total[page - 1]} are collected so far out of ${page - 1} of 13 pages. I'll continue with page ${page}: fetch it, add its blenders to the collection, and print each blender on the page with its price and stock status so I can follow the candidates as I go. I'll also print how many items the page had, to notice an empty or short page.`,
    `;; Page ${page} of 13
(def page-${page}
  (tool/catalog-page {:page ${page}}))

(def blenders
  "Blenders collected from the pages fetched so far"
  (into blenders (filter blender? (:items page-${page}))))

(println "items on page:" (count (:items page-${page})))
(doseq [b (filter blender? (:items page-${page}))]
  (println (:sku b) (:name b) (:price b) (if (:in-stock b) "in stock" "out")))
(println "blenders so far:" (count blenders))`,
  );

export const catalogCrawlRealistic: Session = {
  ...catalogCrawl,
  replies: [
    reply(
      "To find the best blender I need to go through the whole catalogue, which is paginated. I'll fetch the first page to learn the item format and the total number of pages, and print the first few items to see how the product kind appears in the data.",
      `;; Step 1: the first catalogue page
(def page-1
  (tool/catalog-page {:page 1}))

(println "pages:" (:pages page-1) "items on page:" (count (:items page-1)))
(doseq [item (take 4 (:items page-1))]
  (println item))`,
    ),
    reply(
      "There are 13 pages of 12 items, and each item has :sku, :name, :price and :in-stock. There is no category field, but the name contains the product kind (\"Globex toaster 100\"), so I'll identify blenders by name. I'll define a predicate and start the collection with the blenders of page 1, printing them with price and stock.",
      `;; Step 2: a blender predicate and the first blenders
(defn blender?
  "Whether a catalogue item is a blender"
  [item]
  (clojure.string/includes? (clojure.string/lower-case (:name item)) "blender"))

(def blenders
  "Blenders collected from the pages fetched so far"
  (filterv blender? (:items page-1)))

(doseq [b blenders]
  (println (:sku b) (:name b) (:price b) (if (:in-stock b) "in stock" "out")))
(println "blenders so far:" (count blenders))`,
    ),
    ...Array.from({ length: 12 }, (_, i) => pageTurn(i + 2)),
    reply(
      "Page 13 added 2 more blenders, so all 13 pages are done with 25 blenders collected. Now I'll narrow them down to candidates: in stock and priced under 150 EUR. I'll print the candidates with their sku, name and price, and the number of blenders excluded by each condition.",
      `;; Step 3: candidates under 150 EUR and in stock
(def candidates
  "In-stock blenders under 150 EUR"
  (filterv #(and (:in-stock %) (< (:price %) 150)) blenders))

(println (count candidates) "candidates")
(println "out of stock:" (count (remove :in-stock blenders))
         "too expensive:" (count (filter #(>= (:price %) 150) blenders)))
(doseq [c candidates]
  (println (:sku c) (:name c) (:price c)))`,
    ),
    reply(
      "Seven blenders qualify, priced between 35 and 104 EUR. To compare quality I need their ratings, review counts, power and warranty, so I'll fetch the details of all candidates in parallel with pmap and print them sorted by sku.",
      `;; Step 4: details of every candidate
(def candidate-details
  "sku -> details"
  (into {}
        (pmap (fn [c] [(:sku c) (tool/product-details {:sku (:sku c)})])
              candidates)))

(doseq [[sku d] (sort-by key candidate-details)]
  (println sku "rating" (:rating d) "reviews" (:reviews d) "watts" (:watts d) "warranty" (:warranty d)))`,
    ),
    reply(
      "Ratings range from 2.7 to 4.7, but P0036 has no reviews at all, so its 3.7 rating is meaningless, and a few others have few reviews. I'll only keep candidates with at least 50 reviews, merge the catalogue data with the details, and rank them by rating and then by watts, both descending.",
      `;; Step 5: rank the well-reviewed candidates
(def ranked
  "Candidates with 50+ reviews, best first"
  (->> candidates
       (map #(merge % (get candidate-details (:sku %))))
       (filter #(>= (:reviews %) 50))
       (sort-by (juxt (comp - :rating) (comp - :watts)))
       vec))

(println (count ranked) "ranked")
(doseq [r (take 5 ranked)]
  (println (:sku r) (:name r) (:price r) (:rating r) (:reviews r) (:watts r) (:warranty r)))`,
    ),
    reply(
      "P0095 (Umbrella blender 194) leads with a 4.7 rating from 165 reviews, followed by P0032 with 4.3 from 767 reviews. Before deciding I want to compare the top two in detail, because P0032 has many more reviews and a lower price, while P0095 has the better rating and warranty.",
      `;; Step 6: compare the top two
(def top2 (take 2 ranked))

(doseq [r top2]
  (println r))
(println "price difference:" (abs (- (:price (first top2)) (:price (second top2)))))
(println "warranty difference:" (- (:warranty (first top2)) (:warranty (second top2))))`,
    ),
    reply(
      "P0095 costs 47 EUR more than P0032 but has a higher rating (4.7 vs 4.3), slightly more power (763 W vs 722 W) and a 5-year instead of a 1-year warranty; 165 reviews are enough to trust its rating. I'll pick P0095 and write the justification from its actual numbers.",
      `;; Step 7: the pick and its justification
(def best
  "The chosen blender"
  (first ranked))

(def why
  "Justification from the product's numbers"
  (str (:name best) ": rated " (:rating best) " from " (:reviews best) " reviews, "
       (:watts best) " W, " (:warranty best) "-year warranty, " (:price best) " EUR"))

(println why)`,
    ),
    reply(
      "The justification reads well and uses only the product's own numbers. Returning the pick.",
      `;; Final answer
(return {:sku (:sku best) :why why})`,
    ),
  ],
};
