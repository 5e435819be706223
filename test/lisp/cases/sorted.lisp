;; Sorted collections against Clojure's clojure.core: comparators, subseq/rsubseq and the
;; clojure.set operations' choice of the set they build on.
;; A comparator's result is a boolean (less than) or a number; nil is neither (Clojure's
;; AFunction.compare throws on it), so it is refused rather than read as false, which made
;; a comparator always returning nil call every element equal and keep only the first.
(sorted-set-by (fn [a b] nil) 1 2 3)
;!! type_error: sorted-set-by: the comparator must return a number or a boolean, got nil
;@ 1:1
(sorted-set-by (fn [a b] (when (< a b) true)) 3 1 2)
;!! type_error: sorted-set-by: the comparator must return a number or a boolean, got nil
;@ 1:1
(sort (fn [a b] nil) [3 1 2])
;!! type_error: sort: the comparator must return a number or a boolean, got nil
(sort-by :a (fn [a b] (and a b (< a b))) [{:a 2} {:a nil}])
;!! type_error: sort-by: the comparator must return a number or a boolean, got nil
(sorted-set-by (fn [a b] (boolean (when (< a b) true))) 3 1 2)
;=> #{1 2 3}
;; clojure.set/union builds on its largest set and intersection on its smallest, as in Clojure
;; (the first of two the same size); a sorted one gives a sorted result, wherever it stands.
(conj (clojure.set/union nil (sorted-set-by > 1 2 3)) 5)
;=> #{5 3 2 1}
(conj (clojure.set/union #{} (apply sorted-set (range 10))) 50 -1)
;=> #{-1 0 1 2 3 4 5 6 7 8 9 50}
(first (clojure.set/union #{0} (sorted-set-by > 1 2 3)))
;=> 3
(first (clojure.set/union [7 0] (sorted-set 3 2 1)))
;=> 0
(conj (clojure.set/union #{1} #{2} (sorted-set-by > 3 4)) 0 9)
;=> #{9 4 3 2 1 0}
(conj (clojure.set/intersection #{1 2 3 4} (sorted-set-by > 1 2 3)) 0)
;=> #{3 2 1 0}
(conj (clojure.set/intersection #{1 2 3 4} #{1 2 3 5} (sorted-set-by > 1 2 3)) 0)
;=> #{3 2 1 0}
;; The first set still leads when the one Clojure builds on is not sorted.
(clojure.set/union #{1} #{2 3})
;=> #{1 2 3}
(clojure.set/intersection #{3 1 2} #{1 2})
;=> #{1 2}
;; subseq and rsubseq: the elements (entries of a map) whose key the collection's own order
;; places against the key as the test says; nil when none.
(let [s (sorted-set 1 2 3 4 5)]
  [(subseq s > 2) (subseq s >= 2) (subseq s < 3) (subseq s <= 3) (subseq s > 1 < 5) (subseq s >= 2 <= 4)])
;=> [[3 4 5] [2 3 4 5] [1 2] [1 2 3] [2 3 4] [2 3 4]]
(let [s (sorted-set 1 2 3 4 5)]
  [(rsubseq s < 3) (rsubseq s >= 4) (rsubseq s > 1 < 5) (rsubseq s >= 2 <= 4)])
;=> [[2 1] [5 4] [4 3 2] [4 3 2]]
(let [s (sorted-set 1 3 5 7)]
  [(subseq s >= 4) (subseq s < 4) (subseq s > 7) (subseq s > 3 < 5) (rsubseq s < 1) (subseq (sorted-set) > 1)])
;=> [[5 7] [1 3] nil nil nil nil]
(subseq (sorted-map :a 1 :b 2 :c 3) > :a)
;=> [[:b 2] [:c 3]]
(rsubseq (apply sorted-map (range 40)) < 6)
;=> [[4 5] [2 3] [0 1]]
(subseq (apply sorted-set (range 100)) >= 95)
;=> [95 96 97 98 99]
(subseq (disj (apply sorted-set (range 20)) 5 6) > 3 < 9)
;=> [4 7 8]
;; By the collection's comparator, as Clojure: > 3 in a descending set is what comes after 3.
(subseq (sorted-set-by > 1 2 3 4 5) > 3)
;=> [2 1]
(rsubseq (into (sorted-map-by >) (map vector (range 12) (range 12))) >= 9)
;=> [[0 0] [1 1] [2 2] [3 3] [4 4] [5 5] [6 6] [7 7] [8 8] [9 9]]
(let [by-len (fn [a b] (compare (count a) (count b)))
      s (sorted-set-by by-len "a" "bb" "ccc" "dddd")]
  [(subseq s >= "xx") (rsubseq s < "xxx") (subseq s > "x" <= "yyy")])
;=> [["bb" "ccc" "dddd"] ["bb" "a"] ["bb" "ccc"]]
(subseq {:a 1} > :a)
;!! type_error: subseq expects a sorted collection, got map
(subseq (sorted-set 1 2) = 1)
;!! type_error: subseq expects <, <=, > or >= as its test
(subseq (sorted-set 1 2) < 5 > 1)
;!! type_error: subseq expects > or >= as its start test
(rsubseq (sorted-set 1 2) > 0 >= 5)
;!! type_error: rsubseq expects < or <= as its end test
(let [s (sorted-set 1 2 3)]
  (subseq s > "a"))
;!! type_error: subseq: cannot compare
;@ 2:3
;; merge-with and select-keys find a key of a map sorted by its own comparator as get and
;; contains? do (Clojure's merge-with asks contains? and get, select-keys find).
(let [by-len (fn [a b] (compare (count a) (count b)))]
  (merge-with + (sorted-map-by by-len "aa" 1 "b" 2) {"cc" 5} {"d" 10}))
;=> {"b" 12 "aa" 6}
(merge-with + (apply sorted-map-by #(compare (quot %1 10) (quot %2 10)) (range 0 100 5)) {57 100})
;=> {0 5 10 15 20 25 30 35 40 45 50 155 60 65 70 75 80 85 90 95}
(select-keys (sorted-map-by (fn [a b] (compare (count a) (count b))) "aa" 1 "b" 2) ["cc" "xyz"])
;=> {"aa" 1}
(select-keys (apply sorted-map-by #(compare (quot %1 10) (quot %2 10)) (range 0 200 5)) [57 3])
;=> {50 55 0 5}
;; difference and intersection find elements of a set sorted by its own comparator as disj
;; and contains? do.
(let [by-len (fn [a b] (compare (count a) (count b)))
      s (sorted-set-by by-len "aa" "b" "eee")]
  [(clojure.set/difference s #{"cc"}) (clojure.set/difference s ["x"] #{"yyy"}) (clojure.set/difference #{"cc" "q"} s)
   (clojure.set/intersection #{"cc" "zzzz"} s) (clojure.set/intersection #{"cc" "zzzz"} s #{"cc"})])
;=> [#{"b" "eee"} #{"aa"} #{} #{"cc"} #{"cc"}]
(clojure.set/difference (apply sorted-set-by #(compare (quot %1 10) (quot %2 10)) (range 0 200 10)) #{57 3})
;=> #{10 20 30 40 60 70 80 90 100 110 120 130 140 150 160 170 180 190}
;; A comparator that never returns 0 never finds a key again; dissoc and disj of a key held by =
;; take it out of a large map or set as of a small one, and it leaves nothing behind (the large
;; ones kept the key, with no value, beside a count one short).
(let [m (apply sorted-map-by #(if (< %1 %2) -1 1) (range 40))
      m2 (reduce dissoc m [2 10 38 5])]
  [(count m2) (count (vec m2)) (keys m2) (vals m2) (assoc m2 2 :back)])
;=> [17 17 [0 4 6 8 12 14 16 18 20 22 24 26 28 30 32 34 36] [1 5 7 9 13 15 17 19 21 23 25 27 29 31 33 35 37] {0 1 2 :back 4 5 6 7 8 9 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37}]
(let [s (apply sorted-set-by #(if (< %1 %2) -1 1) (range 20))
      s2 (disj s 2 19)]
  [(count s2) (vec s2) (contains? s2 2) (conj s2 2)])
;=> [18 [0 1 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18] false #{0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18}]
(let [s (disj (sorted-set-by #(if (< %1 %2) -1 1) 1 2 3) 2)]
  [(count s) (vec s)])
;=> [2 [1 3]]
