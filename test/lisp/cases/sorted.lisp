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
