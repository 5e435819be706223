;; A tight loop/recur of one million iterations with two loop variables.
(loop [i 0 acc 0]
  (if (< i 1000000)
    (recur (inc i) (+ acc i))
    acc))
