;; Naive doubly recursive Fibonacci: function calls, arithmetic and comparison.
(defn fib [n]
  (if (< n 2)
    n
    (+ (fib (- n 1)) (fib (- n 2)))))

(fib 25)
