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
