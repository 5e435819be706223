;; A sequence pipeline over 100,000 elements: range, filter, map, reduce.
(reduce + 0
  (map (fn [x] (* x 3))
    (filter odd? (range 100000))))
