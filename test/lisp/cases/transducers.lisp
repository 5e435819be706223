;; Transducers, eager: (f args) without the collection, applied by into, transduce, sequence, eduction.
(into [] (map inc) [1 2 3])
;=> [2 3 4]
(into #{} (map :k) [{:k 1} {:k 1} {:k 2}])
;=> #{1 2}
(into {} (map (fn [[k v]] [k (* 2 v)])) {:a 1 :b 2})
;=> {:a 2 :b 4}
(into [0] (filter even?) [1 2 3 4])
;=> [0 2 4]
(transduce (map :x) + 0 [{:x 1} {:x 2} {:x 3}])
;=> 6
(transduce (filter odd?) + [1 2 3 4 5])
;=> 9
(transduce (map inc) conj [1 2])
;=> [2 3]
(transduce (map inc) (completing conj) [] [1 2])
;=> [2 3]
(transduce (map inc) (fn [acc x] (+ acc x)) 0 [1 2])
;=> 5
(sequence (comp (filter odd?) (map inc)) [1 2 3 4 5])
;=> [2 4 6]
(sequence (map inc) [])
;=> []
(eduction (filter even?) (map inc) [1 2 3 4])
;=> [3 5]
;; comp of transducers runs left to right over the data.
(into [] (comp (map inc) (filter even?)) [1 2 3 4])
;=> [2 4]
(into [] (comp (filter even?) (map inc)) [1 2 3 4])
;=> [3 5]
;; Every one-argument (or no-argument) transducing arity.
(into [] (remove odd?) [1 2 3 4])
;=> [2 4]
(into [] (keep :a) [{:a 1} {:b 2} {:a false}])
;=> [1 false]
(into [] (keep-indexed (fn [i x] (when (odd? i) x))) [:a :b :c :d])
;=> [:b :d]
(into [] (map-indexed vector) [:a :b])
;=> [[0 :a] [1 :b]]
(into [] (mapcat (fn [x] [x x])) [1 2])
;=> [1 1 2 2]
(into [] cat [[1 2] [] [3]])
;=> [1 2 3]
(into [] (take 2) [1 2 3 4])
;=> [1 2]
(into [] (take 0) [1 2])
;=> []
(into [] (drop 2) [1 2 3 4])
;=> [3 4]
(into [] (take-while pos?) [2 1 0 3])
;=> [2 1]
(into [] (drop-while pos?) [2 1 0 3])
;=> [0 3]
(into [] (take-nth 2) [1 2 3 4 5])
;=> [1 3 5]
(into [] (distinct) [1 2 1 3 2])
;=> [1 2 3]
(into [] (dedupe) [1 1 2 2 1])
;=> [1 2 1]
(into [] (interpose :sep) [1 2 3])
;=> [1 :sep 2 :sep 3]
(into [] (partition-all 2) [1 2 3 4 5])
;=> [[1 2] [3 4] [5]]
(into [] (partition-by odd?) [1 3 2 4 5])
;=> [[1 3] [2 4] [5]]
;; Early exit: a taking transducer stops the source; a step that returns reduced stops too.
(into [] (comp (map inc) (take 3)) (range 1000000))
;=> [1 2 3]
(transduce (take 2) + (range 1000000))
;=> 1
(into [] (comp (partition-all 2) (take 2)) [1 2 3 4 5 6])
;=> [[1 2] [3 4]]
(reduce (fn [acc x] (if (> acc 5) (reduced :big) (+ acc x))) 0 [1 2 3 4 5])
;=> :big
(reductions (fn [acc x] (if (> acc 2) (reduced acc) (+ acc x))) [1 2 3 4])
;=> [1 3 3]
(reduce-kv (fn [acc k v] (if (= k :b) (reduced acc) (+ acc v))) 0 {:a 1 :b 2})
;=> 1
(reduced? (reduced 1))
;=> true
(reduced? 1)
;=> false
(unreduced (reduced [1]))
;=> [1]
(unreduced 5)
;=> 5
(unreduced (ensure-reduced (ensure-reduced 3)))
;=> 3
;; A transducer is not called directly.
((map inc) [1 2])
;!! type_error: without a collection is a transducer
(into [] inc [1 2])
;!! type_error: into expects a transducer
(into [] cat [1 2])
;!! type_error: cat: expected a collection to concatenate
(into [] (take -1) [1])
;!! value_error: take expects a count of at least 0
;; transduce completes with (f acc): completing's cf runs there.
(transduce (map identity) (completing + str) 0 [1 2])
;=> "3"
(transduce (filter odd?) (completing conj count) [] [1 2 3])
;=> 2
;; sequence over several collections gives the first transducer their elements in step, as
;; Clojure's map and mapcat transducers take them, stopping at the shortest.
(sequence (map +) [1 2] [3 4])
;=> [4 6]
(sequence (map vector) [1 2 3] [:a :b] ["x" "y" "z"])
;=> [[1 :a "x"] [2 :b "y"]]
(sequence (comp (map +) (filter odd?)) [1 2 3] [2 2 2])
;=> [3 5]
(sequence (mapcat vector) [1 2] [3 4])
;=> [1 3 2 4]
(sequence (comp (map +) (take 1)) [1 2] [3 4])
;=> [4]
(sequence (map +) [1 2] [])
;=> []
(sequence (filter odd?) [1 2] [3 4])
;!! arity_error: (filter ...) takes one element at a time
(sequence (map +) [1 2] 5)
;!! type_error
(sequence cat [[1]] [[2]])
;!! arity_error: and cat takes one element at a time
