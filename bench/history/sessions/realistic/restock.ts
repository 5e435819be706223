// restock-exploration with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { restockExploration } from "../restock.js";

export const restockExplorationRealistic: Session = {
  ...restockExploration,
  replies: [
    reply(
      "The mission is about Electronics products only, so I'll start by selecting them from the product list in the input. I won't print anything yet: the summary of this turn will show me the size of the selection and a sample of its records.",
      `;; Step 1: the products of the category
(def electronics
  "Electronics products from the input"
  (filterv #(= (:category %) "Electronics") data/products))`,
    ),
    reply(
      "There are ten Electronics products, each with :sku, :name, :category and :price. Next I need their reviews; the review tool takes a category, so one call covers all of them. I'll store the result and look at its shape in the next summary.",
      `;; Step 2: ratings of the category
(def reviews
  "Average rating and review count per sku"
  (tool/search-reviews {:category "Electronics"}))`,
    ),
    reply(
      "Each review has :sku, :rating and :count. Now the stock: the inventory tool returns every product in every warehouse, so I'll fetch it once and keep it.",
      `;; Step 3: stock per product and warehouse
(def inventory
  "Units per sku and warehouse"
  (tool/get-inventory))`,
    ),
    reply(
      "The inventory has one row per product and warehouse (:sku, :warehouse, :units), so a product's stock is the sum over warehouses. I'll build two lookup maps keyed by sku: the rating, and the total units.",
      `;; Step 4: lookups by sku
(def rating-by-sku
  "sku -> average rating"
  (into {} (map (juxt :sku :rating) reviews)))

(def stock-by-sku
  "sku -> units over all warehouses"
  (reduce (fn [m r] (update m (:sku r) (fnil + 0) (:units r)))
          {}
          inventory))`,
    ),
    reply(
      "With the lookups in place I can select the well-reviewed products, those rated 4.0 or more. I'll print how many there are and their names to check the threshold behaves as expected.",
      `;; Step 5: well-reviewed products
(def well-reviewed
  "Electronics rated 4.0 or more"
  (filterv #(>= (get rating-by-sku (:sku %) 0) 4.0) electronics))

(println (count well-reviewed) (mapv :name well-reviewed))`,
    ),
    reply(
      "Now I'll split the well-reviewed products into those with units in stock and those with none; the latter need restocking. The summary will show both collections.",
      `;; Step 6: in stock or not
(def in-stock
  "Well-reviewed products with units in stock"
  (filterv #(pos? (get stock-by-sku (:sku %) 0)) well-reviewed))

(def out-of-stock
  "Well-reviewed products with no units"
  (filterv #(zero? (get stock-by-sku (:sku %) 0)) well-reviewed))`,
    ),
    reply(
      "For each product out of stock I need its supplier and lead time. The supplier tool takes one sku, so I'll call it for each of them and keep the results in order.",
      `;; Step 7: suppliers of the products to restock
(def suppliers
  "Supplier record per out-of-stock product, same order"
  (mapv #(tool/get-supplier {:sku (:sku %) :token data/_token}) out-of-stock))`,
    ),
    reply(
      "The supplier records have :sku, :supplier and :lead-days. I'll join them with the products into a restock list with the product name, the supplier and the lead time, and print it since it goes into the answer.",
      `;; Step 8: the restock list
(def restock
  "Products to restock with supplier and lead time"
  (mapv (fn [p s] {:name (:name p) :supplier (:supplier s) :lead-days (:lead-days s)})
        out-of-stock
        suppliers))

(println restock)`,
    ),
    reply(
      "The restock list looks right. The last piece is the cheapest product that is in stock: I'll sort the in-stock products by price and take the first.",
      `;; Step 9: the cheapest product in stock
(def cheapest
  "Cheapest well-reviewed product in stock"
  (first (sort-by :price in-stock)))`,
    ),
    reply(
      "I have everything: the names in stock, the restock list and the cheapest product. I'll assemble the answer map and print its size and the cheapest name as a final check before returning it.",
      `;; Step 10: the answer
(def answer
  {:in-stock (mapv :name in-stock)
   :restock restock
   :cheapest (:name cheapest)})

(println (count (:in-stock answer)) (:cheapest answer))`,
    ),
    reply("The answer is complete and consistent with what I printed, so I'll return it.", "(return answer)"),
  ],
};
