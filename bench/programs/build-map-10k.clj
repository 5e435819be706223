;; Builds a 10,000-entry map with string keys one assoc at a time, then reads it back.
(let [m (reduce (fn [m i] (assoc m (str "key-" i) i)) {} (range 10000))]
  (+ (count m) (get m "key-9999")))
