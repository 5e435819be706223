// orders-fanout with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { ordersFanout } from "../orders.js";

export const ordersFanoutRealistic: Session = {
  ...ordersFanout,
  replies: [
    reply(
      "To rank customers by lifetime value I need every customer and every order. The customer list is paginated, so I'll first fetch page 1 to learn the record format and see whether more pages follow. I'll print the has-more flag, the number of customers on the page and the first three records.",
      `;; Step 1: the first page of customers
(def page-1
  (tool/list-customers {:page 1}))

(println "has more:" (:has-more page-1) "on page:" (count (:customers page-1)))
(doseq [c (take 3 (:customers page-1))]
  (println c))`,
    ),
    reply(
      "Each page holds 10 customers with :id, :name, :country and :since, and has-more is true, so there are more pages. Rather than fetching one page per turn, I'll loop over the pages until has-more is false, accumulating all customers in a vector, and print the total and the country distribution.",
      `;; Step 2: fetch every page
(def all-customers
  "Every customer, all pages"
  (loop [page 1
         acc  []]
    (let [r   (tool/list-customers {:page page})
          acc (into acc (:customers r))]
      (if (:has-more r)
        (recur (inc page) acc)
        acc))))

(println (count all-customers) "customers")
(println "countries:" (frequencies (map :country all-customers)))`,
    ),
    reply(
      "There are 36 customers in total, spread over six countries. Before fanning out over all of them, I'll fetch the orders of a single customer (c001) to understand the order format, in particular how totals and statuses are represented.",
      `;; Step 3: the order format
(def sample-orders
  (tool/get-orders {:customer-id "c001"}))

(println (count sample-orders) "orders for c001")
(doseq [o sample-orders]
  (println o))`,
    ),
    reply(
      "An order has :id, :total (in EUR), :status and :date; c001's order is paid. Now I'll fetch the orders of all 36 customers in parallel with pmap and keep them in a map from customer id to orders. I'll print the number of customers and orders fetched to verify nothing was lost.",
      `;; Step 4: fan out over all customers
(def orders-by-customer
  "customer id -> orders"
  (into {}
        (pmap (fn [c] [(:id c) (tool/get-orders {:customer-id (:id c)})])
              all-customers)))

(println (count orders-by-customer) "customers,"
         (reduce + (map count (vals orders-by-customer))) "orders")`,
    ),
    reply(
      "I have 121 orders for 36 customers. Since lifetime value must exclude refunds, I'll check which status values actually occur before filtering, in case there are values other than paid and refunded (for example pending or cancelled) that would need a decision.",
      `;; Step 5: status values across all orders
(def all-orders (mapcat val orders-by-customer))

(println "statuses:" (frequencies (map :status all-orders)))
(println "total value:" (round (reduce + (map :total all-orders))))`,
    ),
    reply(
      "Only paid (108) and refunded (13) occur. I'll define lifetime value as the sum of the totals of paid orders, compute it for every customer, and print the eight highest values so I can see how close the top five are to the next ones.",
      `;; Step 6: lifetime value from paid orders
(defn lifetime-value
  "Sum of paid order totals"
  [orders]
  (->> orders
       (filter #(= "paid" (:status %)))
       (map :total)
       (reduce +)))

(def ltv
  "customer id -> lifetime value (paid orders)"
  (update-vals orders-by-customer lifetime-value))

(doseq [[id v] (take 8 (sort-by val > ltv))]
  (println id (round v)))`,
    ),
    reply(
      "c022 (3,659) and c036 (3,618) lead, followed by c013, c031 and c032; the sixth customer is only about 50 below the fifth. To see how much refunds affect the ranking, I'll compare the paid value with the gross value including refunds for the top ten.",
      `;; Step 7: paid vs gross value for the top ten
(def gross
  "customer id -> total of all orders, refunds included"
  (update-vals orders-by-customer #(reduce + (map :total %))))

(doseq [[id v] (take 10 (sort-by val > ltv))]
  (println id "paid" (round v) "gross" (round (get gross id))
           (if (= (round v) (round (get gross id))) "" "(refunds)")))`,
    ),
    reply(
      "Refunds matter for some customers (c032, c007 and c028 would rank differently by gross value), which confirms that excluding them is important. I'll now take the top five by paid value, round their values to cents, look up their countries from the customer records and count the country mix.",
      `;; Step 8: top five and their countries
(def top5
  "The five customers with the highest lifetime value"
  (mapv (fn [[id v]] {:id id :value (/ (round (* 100 v)) 100.0)})
        (take 5 (sort-by val > ltv))))

(def country-of
  "customer id -> country"
  (into {} (map (juxt :id :country) all-customers)))

(def top-countries
  "Country mix of the top five"
  (frequencies (map #(get country-of (:id %)) top5)))

(println top5)
(println top-countries)`,
    ),
    reply(
      "The top five are c022, c036, c013, c031 and c032, three of them in Germany and one each in Italy and the Netherlands. As a sanity check I'll compute the share of total paid revenue that these five customers account for; with 36 customers it should be noticeably above 5/36 if the ranking is meaningful.",
      `;; Step 9: share of paid revenue held by the top five
(def share
  (/ (reduce + (map :value top5))
     (reduce + (vals ltv))))

(println "top-5 share:" (round (* 100 share)) "%")
(println "uniform share would be:" (round (* 100 (/ 5 (count ltv)))) "%")`,
    ),
    reply(
      "The top five hold 29% of paid revenue against 14% for a uniform split, so the ranking is meaningful. Everything is consistent, so I'll return the top five with their values and the country mix.",
      `;; Final answer
(return {:top top5
         :countries top-countries})`,
    ),
  ],
};
