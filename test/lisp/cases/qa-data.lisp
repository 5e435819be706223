;; QA: data exploration over JSON-like data, as an LLM agent writes it.
(count data/orders)
;=> 2
(first data/orders)
;=> {:id 1 :total 10}
(keys (first data/orders))
;=> [:id :total]
(map :total data/orders)
;=> [10 25]
(reduce + (map :total data/orders))
;=> 35
(->> data/orders (map :total) (apply +))
;=> 35
(->> data/orders (filter #(> (:total %) 15)) (map :id))
;=> [2]
(sort-by :total > data/orders)
;=> [{:id 2 :total 25} {:id 1 :total 10}]
(last (sort-by :total data/orders))
;=> {:id 2 :total 25}
(apply max-key :total data/orders)
;=> {:id 2 :total 25}
(def users [{:name "Ann" :age 31 :dept "eng"}
            {:name "Bob" :age 25 :dept "ops"}
            {:name "Cid" :age 42 :dept "eng"}
            {:name "Dee" :age 25 :dept "sales"}])
(frequencies (map :dept users))
;=> {"eng" 2 "ops" 1 "sales" 1}
(def users [{:name "Ann" :age 31 :dept "eng"} {:name "Bob" :age 25 :dept "ops"} {:name "Cid" :age 42 :dept "eng"}])
(group-by :dept users)
;=> {"eng" [{:name "Ann" :age 31 :dept "eng"} {:name "Cid" :age 42 :dept "eng"}] "ops" [{:name "Bob" :age 25 :dept "ops"}]}
(def users [{:name "Ann" :age 31 :dept "eng"} {:name "Bob" :age 25 :dept "ops"} {:name "Cid" :age 42 :dept "eng"}])
(update-vals (group-by :dept users) count)
;=> {"eng" 2 "ops" 1}
(def users [{:name "Ann" :age 31 :dept "eng"} {:name "Bob" :age 25 :dept "ops"} {:name "Cid" :age 42 :dept "eng"}])
(into {} (for [[d us] (group-by :dept users)] [d (map :name us)]))
;=> {"eng" ["Ann" "Cid"] "ops" ["Bob"]}
(def users [{:name "Ann" :age 31} {:name "Bob" :age 25} {:name "Cid" :age 42}])
(map :name (take 2 (sort-by :age users)))
;=> ["Bob" "Ann"]
(def users [{:name "Ann" :age 31} {:name "Bob" :age 25} {:name "Cid" :age 42}])
(:name (apply min-key :age users))
;=> "Bob"
(def users [{:name "Ann" :age 31} {:name "Bob" :age 25} {:name "Cid" :age 42}])
(/ (reduce + (map :age users)) (count users))
;=> 32.666666666666664
(def users [{:name "Ann" :age 30} {:name "Bob" :age 25} {:name "Cid" :age 41}])
(double (/ (reduce + (map :age users)) (count users)))
;=> 32.0
(avg [1 2 3 4])
;=> 2.5
(avg [])
;=> nil
(sum [])
;=> 0
(sum-by :total data/orders)
;=> 35
(avg-by :total data/orders)
;=> 17.5
(max-by :total data/orders)
;=> {:id 2 :total 25}
(min-by :total [])
;=> nil
(sort-by (juxt :dept :name) [{:dept "b" :name "z"} {:dept "a" :name "y"} {:dept "b" :name "a"}])
;=> [{:dept "a" :name "y"} {:dept "b" :name "a"} {:dept "b" :name "z"}]
(sort-by :name #(compare %2 %1) [{:name "a"} {:name "c"} {:name "b"}])
;=> [{:name "c"} {:name "b"} {:name "a"}]
(sort > [3 1 2])
;=> [3 2 1]
(sort ["banana" "apple" "cherry"])
;=> ["apple" "banana" "cherry"]
(sort [3 1.5 2])
;=> [1.5 2 3]
(reverse (sort [3 1 2]))
;=> [3 2 1]
(take 3 (reverse (sort-by val {:a 5 :b 9 :c 1 :d 7})))
;=> [[:b 9] [:d 7] [:a 5]]
(->> {:a 5 :b 9 :c 1} (sort-by val >) (map key))
;=> [:b :a :c]
(->> ["a" "b" "a" "c" "a" "b"] frequencies (sort-by val >) first)
;=> ["a" 3]
(->> ["x" "y" "x"] frequencies (sort-by (comp - val)) (take 1))
;=> [["x" 2]]
(distinct [1 2 1 3 2])
;=> [1 2 3]
(count (distinct (map :id data/orders)))
;=> 2
(first [])
;=> nil
(first nil)
;=> nil
(second [1])
;=> nil
(last [])
;=> nil
(nth [1 2 3] 1)
;=> 2
(nth [1 2 3] 5 :none)
;=> :none
(get [1 2 3] 5)
;=> nil
(take 10 [1 2])
;=> [1 2]
(drop 5 [1 2])
;=> []
(rest [1])
;=> []
(next [1])
;=> nil
(empty? [])
;=> true
(seq [])
;=> nil
(not-empty [])
;=> nil
(count "héllo")
;=> 5
(count {:a 1 :b 2})
;=> 2
(count nil)
;=> 0
(map-indexed (fn [i x] [i x]) [:a :b])
;=> [[0 :a] [1 :b]]
(map-indexed vector ["a" "b"])
;=> [[0 "a"] [1 "b"]]
(keep :email [{:email "a@x"} {:name "n"} {:email "b@y"}])
;=> ["a@x" "b@y"]
(keep #(when (odd? %) (* % %)) [1 2 3])
;=> [1 9]
(keep-indexed (fn [i x] (when (even? i) x)) [:a :b :c])
;=> [:a :c]
(mapv inc [1 2 3])
;=> [2 3 4]
(filterv even? (range 10))
;=> [0 2 4 6 8]
(remove nil? [1 nil 2 nil])
;=> [1 2]
(some #(when (> (:total %) 20) %) data/orders)
;=> {:id 2 :total 25}
(some #{3} [1 2 3])
;=> 3
(some even? [1 3])
;=> nil
(every? :id data/orders)
;=> true
(every? pos? [])
;=> true
(not-any? nil? [1 2])
;=> true
(first (filter #(= 2 (:id %)) data/orders))
;=> {:id 2 :total 25}
(zipmap [:a :b :c] [1 2 3])
;=> {:a 1 :b 2 :c 3}
(zipmap [:a :b] [1])
;=> {:a 1}
(into {} (map (juxt :id :total) data/orders))
;=> {1 10 2 25}
(into {} (map (fn [o] [(:id o) o]) data/orders))
;=> {1 {:id 1 :total 10} 2 {:id 2 :total 25}}
(reduce (fn [m o] (assoc m (:id o) (:total o))) {} data/orders)
;=> {1 10 2 25}
(partition 2 [1 2 3 4 5])
;=> [[1 2] [3 4]]
(partition-all 2 [1 2 3 4 5])
;=> [[1 2] [3 4] [5]]
(partition 3 1 [1 2 3 4])
;=> [[1 2 3] [2 3 4]]
(partition-by odd? [1 3 2 4 5])
;=> [[1 3] [2 4] [5]]
(partition-by identity "aabccc")
;=> [["a" "a"] ["b"] ["c" "c" "c"]]
(map count (partition-by identity [1 1 2 2 2 3]))
;=> [2 3 1]
(dedupe [1 1 2 2 1])
;=> [1 2 1]
(interleave [:a :b] [1 2])
;=> [:a 1 :b 2]
(apply hash-map (interleave [:a :b] [1 2]))
;=> {:a 1 :b 2}
(interpose ", " ["a" "b" "c"])
;=> ["a" ", " "b" ", " "c"]
(flatten [[1 [2]] 3 [[4]]])
;=> [1 2 3 4]
(mapcat :tags [{:tags ["a" "b"]} {:tags ["c"]}])
;=> ["a" "b" "c"]
(mapcat identity [[1 2] [3]])
;=> [1 2 3]
(concat [1 2] [3] nil [4])
;=> [1 2 3 4]
(into [] (concat [1] [2]))
;=> [1 2]
(conj [1 2] 3)
;=> [1 2 3]
(conj nil 1)
;=> [1]
(into #{} [1 2 2])
;=> #{1 2}
(into [] #{1})
;=> [1]
(vec (range 3))
;=> [0 1 2]
(range 1 10 3)
;=> [1 4 7]
(range 5 0 -2)
;=> [5 3 1]
(range 0 1 0.25)
;=> [0 0.25 0.5 0.75]
(range (/ (count [1 2 3 4 5 6]) 2))
;=> [0 1 2]
(map #(nth [:a :b :c :d] %) (range 0 4.0 2))
;=> [:a :c]
(range 0.5 3)
;=> [0.5 1.5 2.5]
(take-while #(< % 3) [1 2 3 1])
;=> [1 2]
(drop-while #(< % 3) [1 2 3 1])
;=> [3 1]
(take-last 2 [1 2 3])
;=> [2 3]
(drop-last [1 2 3])
;=> [1 2]
(butlast [1 2 3])
;=> [1 2]
(split-at 2 [1 2 3 4])
;=> [[1 2] [3 4]]
(split-with even? [2 4 5 6])
;=> [[2 4] [5 6]]
(take-nth 2 [0 1 2 3 4])
;=> [0 2 4]
(reductions + [1 2 3])
;=> [1 3 6]
(reductions + 0 [1 2 3])
;=> [0 1 3 6]
(reduce-kv (fn [acc k v] (+ acc v)) 0 {:a 1 :b 2})
;=> 3
(reduce-kv (fn [m k v] (assoc m v k)) {} {:a 1 :b 2})
;=> {1 :a 2 :b}
(reduce + 0 [])
;=> 0
(reduce + [])
;=> 0
(reduce max [3 9 2])
;=> 9
(apply max [1 5 3])
;=> 5
(apply str ["a" "b"])
;=> "ab"
(apply + 1 2 [3 4])
;=> 10
(max 1 2.5)
;=> 2.5
(min-key count "abc" "x" "yy")
;=> "x"
(frequencies "hello")
;=> {"h" 1 "e" 1 "l" 2 "o" 1}
(contains? {:a nil} :a)
;=> true
(contains? [10 20] 1)
;=> true
(contains? #{:a} :a)
;=> true
(find {:a 1} :a)
;=> [:a 1]
(peek [1 2 3])
;=> 3
(pop [1 2 3])
;=> [1 2]
(subvec [1 2 3 4] 1 3)
;=> [2 3]
(empty [1 2])
;=> []
(vector 1 2)
;=> [1 2]
(distinct-by :k [{:k 1 :v 1} {:k 1 :v 2} {:k 2 :v 3}])
;=> [{:k 1 :v 1} {:k 2 :v 3}]
(pluck :id data/orders)
;=> [1 2]
(count (filter odd? (range 100)))
;=> 50
(->> (range 1 11) (map #(* % %)) (filter even?) (reduce +))
;=> 220
(into (sorted-map) {:b 2 :a 1 :c 3})
;=> {:a 1 :b 2 :c 3}
(sort-by first [[2 :b] [1 :a]])
;=> [[1 :a] [2 :b]]
(sort-by count ["ccc" "a" "bb"])
;=> ["a" "bb" "ccc"]
(sort (map :total data/orders))
;=> [10 25]
(sort-by :total (fn [a b] (> a b)) data/orders)
;=> [{:id 2 :total 25} {:id 1 :total 10}]
(sort-by :missing [{:a 1} {:a 2}])
;=> [{:a 1} {:a 2}]
(sort [nil 3 1])
;=> [nil 1 3]
(group-by odd? [1 2 3])
;=> {true [1 3] false [2]}
(group-by count ["a" "bb" "c"])
;=> {1 ["a" "c"] 2 ["bb"]}
(vals (group-by :k [{:k 1} {:k 2} {:k 1}]))
;=> [[{:k 1} {:k 1}] [{:k 2}]]
(let [idx (group-by :id data/orders)] (get-in idx [2 0 :total]))
;=> 25
(median [3 1 2])
;=> 2
(median [1 2 3 4])
;=> 2.5
;; clojure.set's relational functions, over sets or vectors of maps.
(clojure.set/index #{{:a 1 :b 2} {:a 1 :b 3} {:a 2 :b 4}} [:a])
;=> {{:a 1} #{{:a 1 :b 2} {:a 1 :b 3}} {:a 2} #{{:a 2 :b 4}}}
(set/project [{:id 1 :name "x" :age 3} {:id 2 :name "y" :age 4}] [:id :name])
;=> #{{:id 1 :name "x"} {:id 2 :name "y"}}
(set/rename #{{:a 1 :b 2}} {:a :x})
;=> #{{:b 2 :x 1}}
(set/join [{:id 1 :name "ann"} {:id 2 :name "bob"}] [{:id 1 :total 10} {:id 1 :total 5} {:id 3 :total 7}])
;=> #{{:id 1 :name "ann" :total 10} {:id 1 :name "ann" :total 5}}
(set/join [{:id 1 :name "ann"} {:id 2 :name "bob"}] [{:user 2 :total 10}] {:id :user})
;=> #{{:user 2 :total 10 :id 2 :name "bob"}}
(set/join [{:user 2 :total 10} {:user 2 :total 3}] [{:id 2 :name "bob"}] {:user :id})
;=> #{{:id 2 :name "bob" :user 2 :total 10} {:id 2 :name "bob" :user 2 :total 3}}
(set/join #{} #{{:a 1}})
;=> #{}
(set/index [1 2] [:a])
;!! type_error: set/index expects maps
(set/join [{:a 1}] 5)
;!! type_error
