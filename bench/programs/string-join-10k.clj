;; Turns 10,000 numbers into strings and joins them with a separator.
(count (clojure.string/join ", " (map (fn [i] (str "item-" i)) (range 10000))))
