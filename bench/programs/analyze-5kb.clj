;; A definitions-only program of about 5 KB, shaped like the helpers an agent writes:
;; it measures reading and analysis (nothing is called).
(defn normalize-name
  "Lower-cases and trims a customer name."
  [s]
  (clojure.string/lower-case (clojure.string/trim (str s))))

(defn order-total
  "Sum of quantity times price over the lines of an order."
  [order]
  (reduce + 0 (map (fn [{:keys [qty price]}] (* qty price)) (:lines order))))

(defn big-orders
  "Orders whose total is at least `threshold`, largest first."
  [orders threshold]
  (->> orders
       (map (fn [o] (assoc o :total (order-total o))))
       (filter (fn [o] (>= (:total o) threshold)))
       (sort-by :total)
       (reverse)))

(defn by-customer
  "Groups orders by normalized customer name."
  [orders]
  (group-by (fn [o] (normalize-name (:customer o))) orders))

(defn customer-summary
  "One summary map per customer: order count, revenue and the largest order id."
  [orders]
  (for [[name os] (by-customer orders)]
    (let [totals (map order-total os)
          best (first (reverse (sort-by order-total os)))]
      {:customer name
       :orders (count os)
       :revenue (reduce + 0 totals)
       :largest (:id best)})))

(defn top-n
  "The n entries with the largest value of k."
  [n k rows]
  (take n (reverse (sort-by k rows))))

(defn status-counts
  "How many orders are in each status."
  [orders]
  (frequencies (map :status orders)))

(defn overdue?
  [order today]
  (and (= (:status order) "open")
       (< (:due order) today)))

(defn overdue-orders
  [orders today]
  (filter (fn [o] (overdue? o today)) orders))

(defn index-by
  "A map from (f x) to x."
  [f xs]
  (reduce (fn [m x] (assoc m (f x) x)) {} xs))

(defn merge-inventory
  "Adds stock levels to product records, defaulting to zero."
  [products stock]
  (let [levels (index-by :sku stock)]
    (mapv (fn [p]
            (let [s (get levels (:sku p))]
              (assoc p :stock (if s (:level s) 0))))
          products)))

(defn low-stock
  [products limit]
  (->> products
       (filter (fn [p] (< (:stock p) limit)))
       (map :sku)
       (distinct)))

(defn restock-plan
  "For each low-stock product: how many units to order to reach the target."
  [products target]
  (into {}
        (for [p products
              :when (< (:stock p) target)]
          [(:sku p) (- target (:stock p))])))

(defn format-money
  [cents]
  (let [units (quot cents 100)
        rest (mod cents 100)]
    (str "$" units "." (if (< rest 10) (str "0" rest) rest))))

(defn format-line
  [{:keys [customer orders revenue]}]
  (str customer ": " orders " orders, " (format-money revenue)))

(defn report
  "A printable report of the customer summaries, one line each."
  [orders]
  (clojure.string/join "\n" (map format-line (customer-summary orders))))

(defn parse-row
  "Splits a CSV row into a map with the given column names."
  [columns line]
  (zipmap columns (map clojure.string/trim (clojure.string/split line #","))))

(defn parse-csv
  [text]
  (let [lines (clojure.string/split-lines text)
        columns (map keyword (clojure.string/split (first lines) #","))]
    (map (fn [l] (parse-row columns l)) (rest lines))))

(defn valid-row?
  [row]
  (and (some? (:id row))
       (not (clojure.string/blank? (:customer row)))
       (every? some? (vals (select-keys row [:id :customer :status])))))

(defn clean-rows
  [rows]
  (let [good (filter valid-row? rows)
        bad (remove valid-row? rows)]
    {:good (vec good) :bad (count bad)}))

(defn search
  "Rows whose customer name contains the query, case-insensitively."
  [rows query]
  (let [q (normalize-name query)]
    (filter (fn [r] (clojure.string/includes? (normalize-name (:customer r)) q)) rows)))

(defn pct
  [part whole]
  (if (zero? whole)
    0.0
    (/ (* 100.0 part) whole)))

(defn status-share
  "The percentage of orders in each status."
  [orders]
  (let [n (count orders)]
    (into {} (map (fn [[k v]] [k (pct v n)]) (status-counts orders)))))

(defn window-sums
  "Sums over consecutive windows of size n."
  [n xs]
  (map (fn [w] (reduce + 0 w)) (partition n 1 xs)))

(defn trend
  [values]
  (let [diffs (map - (rest values) values)
        ups (count (filter pos? diffs))
        downs (count (filter neg? diffs))]
    (cond
      (> ups downs) :rising
      (< ups downs) :falling
      :else :flat)))

(defn classify-order
  [order]
  (let [t (order-total order)]
    (cond
      (>= t 100000) :large
      (>= t 10000) :medium
      (pos? t) :small
      :else :empty)))

(defn size-histogram
  [orders]
  (frequencies (map classify-order orders)))

(defn dedupe-by
  "Keeps the first item for each value of (f item)."
  [f xs]
  (loop [seen #{} out [] xs xs]
    (if (empty? xs)
      out
      (let [x (first xs) k (f x)]
        (if (contains? seen k)
          (recur seen out (rest xs))
          (recur (conj seen k) (conj out x) (rest xs)))))))

(defn nested-get
  [m path default]
  (let [v (get-in m path)]
    (if (nil? v) default v)))
