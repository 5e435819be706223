;; QA: nested data, maps and sets.
(get-in {:a {:b {:c 1}}} [:a :b :c])
;=> 1
(get-in {:a {:b 1}} [:a :x :y] :default)
;=> :default
(get-in {:items [{:id 7}]} [:items 0 :id])
;=> 7
(get-in {"user" {"name" "Ann"}} ["user" "name"])
;=> "Ann"
(get-in {:a 1} [])
;=> {:a 1}
(assoc-in {} [:a :b] 1)
;=> {:a {:b 1}}
(assoc-in {:a [{:x 1}]} [:a 0 :x] 2)
;=> {:a [{:x 2}]}
(update-in {:a {:n 1}} [:a :n] inc)
;=> {:a {:n 2}}
(update-in {:a {:n 1}} [:a :n] + 10)
;=> {:a {:n 11}}
(update-in {} [:counts :x] (fnil inc 0))
;=> {:counts {:x 1}}
(update {:n 1} :n inc)
;=> {:n 2}
(update {} :xs conj 1)
;=> {:xs [1]}
(update {:tags ["a"]} :tags conj "b")
;=> {:tags ["a" "b"]}
(update [1 2 3] 1 * 10)
;=> [1 20 3]
(assoc {:a 1} :b 2 :c 3)
;=> {:a 1 :b 2 :c 3}
(assoc [1 2] 2 3)
;=> [1 2 3]
(assoc nil :a 1)
;=> {:a 1}
(dissoc {:a 1 :b 2 :c 3} :a :c)
;=> {:b 2}
(merge {:a 1 :b 2} {:b 3} nil {:c 4})
;=> {:a 1 :b 3 :c 4}
(merge)
;=> nil
(merge-with + {:a 1 :b 2} {:a 10})
;=> {:a 11 :b 2}
(apply merge-with + [{:x 1} {:x 2} {:y 3}])
;=> {:x 3 :y 3}
(merge-with into {:a [1]} {:a [2] :b [3]})
;=> {:a [1 2] :b [3]}
(select-keys {:a 1 :b 2 :c 3} [:a :c :z])
;=> {:a 1 :c 3}
(map #(select-keys % [:id]) data/orders)
;=> [{:id 1} {:id 2}]
(keys {})
;=> nil
(vals {:a 1})
;=> [1]
(keys nil)
;=> nil
(key (first {:a 1}))
;=> :a
(map key {:a 1 :b 2})
;=> [:a :b]
(for [[k v] {:a 1 :b 2} :when (> v 1)] k)
;=> [:b]
(into {} (filter (fn [[k v]] (pos? v)) {:a 1 :b -1}))
;=> {:a 1}
(into {} (map (fn [[k v]] [k (* 2 v)]) {:a 1 :b 2}))
;=> {:a 2 :b 4}
(update-vals {:a 1 :b 2} inc)
;=> {:a 2 :b 3}
(update-keys {:a 1} name)
;=> {"a" 1}
(clojure.set/rename-keys {:a 1 :b 2} {:a :x})
;=> {:b 2 :x 1}
(clojure.set/map-invert {:a 1 :b 2})
;=> {1 :a 2 :b}
(:a {:a 1})
;=> 1
(:missing {:a 1} 0)
;=> 0
({:a 1} :a)
;=> 1
(get {:a 1} :b "none")
;=> "none"
(get {"a" 1} :a)
;=> 1
(:name {"name" "Ann"})
;=> "Ann"
(get nil :a)
;=> nil
(:a nil)
;=> nil
(= {:a 1 :b 2} {:b 2 :a 1})
;=> true
(= [1 2] [1 2])
;=> true
(= 1 1.0)
;=> true
(== 1 1.0)
;=> true
(hash-map :a 1)
;=> {:a 1}
(map? {})
;=> true
(vector? [])
;=> true
(sequential? [])
;=> true
(coll? {})
;=> true
(set [1 2 2 3])
;=> #{1 2 3}
(conj #{1} 2)
;=> #{1 2}
(disj #{1 2} 1)
;=> #{2}
(contains? #{"a"} "a")
;=> true
(#{1 2} 2)
;=> 2
(#{1 2} 3)
;=> nil
(clojure.set/union #{1 2} #{2 3})
;=> #{1 2 3}
(clojure.set/intersection #{1 2 3} #{2 3 4})
;=> #{2 3}
(clojure.set/difference #{1 2 3} #{2})
;=> #{1 3}
(set/subset? #{1} #{1 2})
;=> true
(count (set (map :id data/orders)))
;=> 2
(filter #{:a :c} [:a :b :c])
;=> [:a :c]
(remove (set [1 2]) [1 2 3 4])
;=> [3 4]
(let [seen #{"x"}] (if (seen "x") :dup :new))
;=> :dup
(sort (clojure.set/union #{3 1} #{2}))
;=> [1 2 3]
(clojure.walk/keywordize-keys {"a" {"b" 1}})
;=> {:a {:b 1}}
(clojure.walk/stringify-keys {:a 1})
;=> {"a" 1}
(clojure.walk/postwalk #(if (number? %) (inc %) %) {:a [1 2]})
;=> {:a [2 3]}
(let [m {:user {:profile {:tags #{"x"}}}}] (contains? (get-in m [:user :profile :tags]) "x"))
;=> true
(-> {:a 1} (assoc :b 2) (dissoc :a) (update :b inc))
;=> {:b 3}
(reduce (fn [acc {:keys [dept salary]}] (update acc dept (fnil + 0) salary)) {} [{:dept "a" :salary 10} {:dept "b" :salary 5} {:dept "a" :salary 1}])
;=> {"a" 11 "b" 5}
(reduce #(assoc %1 %2 (inc (get %1 %2 0))) {} [:x :y :x])
;=> {:x 2 :y 1}
(into {} [[:a 1] [:b 2]])
;=> {:a 1 :b 2}
(into {} [{:a 1} {:b 2}])
;=> {:a 1 :b 2}
(conj {:a 1} [:b 2])
;=> {:a 1 :b 2}
(conj {:a 1} {:b 2 :c 3})
;=> {:a 1 :b 2 :c 3}
(seq {:a 1})
;=> [[:a 1]]
(first {:a 1})
;=> [:a 1]
(vec {:a 1})
;=> [[:a 1]]
(map (fn [[k v]] (str (name k) "=" v)) {:a 1 :b 2})
;=> ["a=1" "b=2"]
(sort-by key {:b 1 :a 2})
;=> [[:a 2] [:b 1]]
(let [m {:a {:b 1}}] (assoc-in m [:a :c] 2))
;=> {:a {:b 1 :c 2}}
(get-in {:a [1 2 3]} [:a 5])
;=> nil
(empty? {})
;=> true
(count (keys {:a 1 :b 2}))
;=> 2
(some (fn [[k v]] (when (= v 2) k)) {:a 1 :b 2})
;=> :b
(zipmap (map :id data/orders) data/orders)
;=> {1 {:id 1 :total 10} 2 {:id 2 :total 25}}
(let [{:keys [id total] :as o} (first data/orders)] [id total (count o)])
;=> [1 10 2]
(let [{a :a {c :c} :b} {:a 1 :b {:c 3}}] [a c])
;=> [1 3]
(let [{:keys [x y] :or {x 0 y 0}} {:y 5}] [x y])
;=> [0 5]
(let [{:strs [a b]} {"a" 1 "b" 2}] (+ a b))
;=> 3
(defn area [{:keys [w h]}] (* w h))
(area {:w 3 :h 4})
;=> 12
(let [[first-item & others] data/orders] [(:id first-item) (count others)])
;=> [1 1]
(let [{{:keys [city]} :address} {:address {:city "Oslo"}}] city)
;=> "Oslo"
(merge-with (fn [a b] (max a b)) {:a 1 :b 5} {:a 3 :b 2})
;=> {:a 3 :b 5}
(reduce merge [{:a 1} {:b 2}])
;=> {:a 1 :b 2}
(apply merge [{:a 1} {:a 2}])
;=> {:a 2}
(into (sorted-map) {:b 2 :a 1 :c 3})
;=> {:a 1 :b 2 :c 3}
(into (sorted-map) (frequencies ["b" "a" "c" "a"]))
;=> {"a" 2 "b" 1 "c" 1}
(into (sorted-set) [3 1 2])
;=> #{1 2 3}
(sorted-map :b 1 :a 2)
;=> {:a 2 :b 1}
(into (sorted-map) (zipmap (range 12 0 -1) (range 12)))
;=> {1 11 2 10 3 9 4 8 5 7 6 6 7 5 8 4 9 3 10 2 11 1 12 0}
(first (into (sorted-map) {"b" 1 "a" 2}))
;=> ["a" 2]
(into (sorted-set) ["pear" "apple" "fig" "apple"])
;=> #{"apple" "fig" "pear"}
(into (sorted-map) {:a 1 "b" 2})
;!! type_error: one comparable type
;; An empty set sorted by a comparator keeps it (it was the shared empty set, sorted by compare).
(into (sorted-set-by >) [1 3 2])
;=> #{3 2 1}
(conj (disj (sorted-set-by > 1) 1) 1 3 2)
;=> #{3 2 1}
;; empty keeps a sorted collection's order, as Clojure's does.
(assoc (empty (sorted-map :b 1)) :c 1 :a 2)
;=> {:a 2 :c 1}
(conj (empty (sorted-set-by > 1)) 1 3 2)
;=> #{3 2 1}
(into (empty (sorted-map-by > 1 :a)) {1 :a 2 :b 3 :c})
;=> {3 :c 2 :b 1 :a}
(assoc {} :a 1 :b)
;!! arity_error
(get-in {:a 1} :a)
;!! type_error
(assoc-in {:a 1} [:a :b] 2)
;!! type_error
(update {:a "x"} :a inc)
;!! type_error: inc expects a number
(merge [1] {:a 1})
;!! type_error
(keys [1 2])
;!! type_error
(select-keys {:a 1} :a)
;!! type_error
(contains? [1 2 3] 3)
;=> false
(find {:a 1} :b)
;=> nil
(map (juxt :id :total) data/orders)
;=> [[1 10] [2 25]]
(into {} (map (juxt identity count) ["ab" "c"]))
;=> {"ab" 2 "c" 1}
(->> data/orders (map #(assoc % :tax (* 0.1 (:total %)))) (map :tax))
;=> [1.0 2.5]
(update-vals {:a [1 2] :b [3]} #(reduce + %))
;=> {:a 3 :b 3}
(let [inventory {:apple 3 :pear 0}] (keys (filter (comp pos? val) inventory)))
;=> [:apple]
(->> {"a" 3 "b" 9 "c" 5} (sort-by val >) (take 2) keys)
;=> ["b" "c"]
(vals (sort-by key {:b 1 :a 2}))
;=> [2 1]
(keys (filter (comp neg? val) {:a 1}))
;=> nil
(keys [1 2])
;!! type_error: keys expects a map
(let [m {:a 1}] (if-let [v (:b m)] v :none))
;=> :none
(let [m {:a 1}] (when-let [v (:a m)] (* v 10)))
;=> 10
(boolean (some #{:x} [:y :x]))
;=> true
(clojure.set/select even? #{1 2 3 4})
;=> #{2 4}
(set/superset? #{1 2} #{2})
;=> true
(clojure.set/union)
;=> #{}
(clojure.set/union #{1} nil)
;=> #{1}
