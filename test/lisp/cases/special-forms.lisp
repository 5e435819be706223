;; Special forms.
(if true 1 2)
;=> 1
(if nil 1)
;=> nil
(if false 1 2 3)
;!! invalid_form: cond
(if-not false :a :b)
;=> :a
(when true (println "side") :done)
;>> side
;=> :done
(when-not true :x)
;=> nil
(cond false 1 nil 2 :else 3)
;=> 3
(cond false 1)
;=> nil
(cond true)
;!! invalid_form: pairs
(condp = 3 1 :one 3 :three :other)
;=> :three
(condp > 5 1 :small 10 :big)
;=> :big
(condp = 9 1 :one)
;!! value_error: no clause
;; Clojure's test :>> f: f gets what (pred test expr) returned; clauses of both kinds mix.
(condp some [1 2 3] #{0 6} :>> inc #{4 5} :>> dec #{1 2} :>> #(+ % 3))
;=> 4
(condp re-find "ab12" #"x" :x #"\d+" :>> parse-long :none)
;=> 12
(condp some [7] #{0 6} :>> inc :none)
;=> :none
(condp some [7] #{0 6} :>> inc)
;!! value_error: no clause
(loop [i 0] (condp some [i] #{3} :>> identity (recur (inc i))))
;=> 3
(condp = 1 1 :>>)
;!! invalid_form: :>> must be followed by a function
(case "b" "a" 1 "b" 2 3)
;=> 2
(case 7 (1 2 3) :low (7 8) :high :none)
;=> :high
;; A vector key matches an equal vector, as in Clojure; a list groups keys, so a vector of them is one key.
(let [f (fn [x] (case x [1 2] :pair [:a [nil "s"]] :nested ([3] [4]) :listed :none))]
  [(f [1 2]) (f (vec (map inc [0 1]))) (f [:a [nil "s"]]) (f [4]) (f [1]) (f 1)])
;=> [:pair :pair :nested :listed :none :none]
(case [1] [1] :a [1] :b)
;!! invalid_form: duplicate case key
(case :z :a 1)
;!! value_error: no clause
(case 1 y 1)
;!! invalid_form: literals
(do)
;=> nil
(do 1 2 3)
;=> 3
(and)
;=> true
(and 1 2)
;=> 2
(and 1 false 3)
;=> false
(or)
;=> nil
(or nil false)
;=> false
(or nil 5)
;=> 5
(let [x 1 y (+ x 1)] [x y])
;=> [1 2]
(let [x 1] (let [x 2] x))
;=> 2
(let [x] x)
;!! invalid_form: pairs
(let x 1)
;!! invalid_form: vector
(loop [i 0 acc []] (if (< i 3) (recur (inc i) (conj acc i)) acc))
;=> [0 1 2]
(loop [[x & more] [1 2 3] sum 0] (if x (recur more (+ sum x)) sum))
;=> 6
(loop [i 0] (+ 1 (recur i)))
;!! invalid_form: tail position
(recur 1)
;!! invalid_form: outside
(loop [a 1 b 2] (recur 1))
;!! arity_error: recur expects 2
;; recur inside try (a retry loop) or a for/doseq body cannot reach the loop around it: the
;; error says so instead of claiming there is no loop.
(loop [n 0]
  (try (if (< n 3) (recur (inc n)) n)
    (catch Exception e :failed)))
;!! invalid_form: recur cannot jump out of a try
;@ 2:20
(defn f [xs] (doseq [x xs] (when (odd? x) (recur (rest xs)))))
;!! invalid_form: recur cannot jump out of a doseq body
(loop [i 0] (for [x [1]] (recur x)))
;!! invalid_form: recur cannot jump out of a for body
(try (recur 1))
;!! invalid_form: recur outside of a loop or function
((fn [n acc] (if (zero? n) acc (recur (dec n) (* acc n)))) 5 1)
;=> 120
(def x 10)
(defn add-x "adds x" [y] (+ x y))
(add-x 5)
;=> 15
(defn f ([a] (f a 10)) ([a b] (+ a b)))
[(f 1) (f 1 2)]
;=> [11 3]
(defn g [a & more] [a more])
[(g 1) (g 1 2 3)]
;=> [[1 nil] [1 [2 3]]]
(defn h [a b] a)
(h 1)
;!! arity_error: expects 2
(defn map [x] x)
;!! cannot_shadow_builtin
(def if 1)
;!! cannot_shadow_builtin
(defn k [x] {:pre [(pos? x)]} x)
;!! invalid_form: pre/post
(defonce once 1)
(defonce once 2)
once
;=> 1
((fn fact [n] (if (zero? n) 1 (* n (fact (dec n))))) 5)
;=> 120
(#(* % %2) 3 4)
;=> 12
(#(vector %1 %&) 1 2 3)
;=> [1 [2 3]]
(#(identity 5))
;=> 5
(-> 5 (- 2) (* 10))
;=> 30
(->> 5 (- 2) (* 10))
;=> -30
(-> {:a {:b 1}} :a :b)
;=> 1
(as-> 1 v (+ v 1) (* v 10) [v])
;=> [20]
(cond-> 1 true inc false (* 100) true (* 2))
;=> 4
(cond->> 1 true (- 10))
;=> 9
(some-> {:a 1} :a inc)
;=> 2
(some-> {:a 1} :b inc)
;=> nil
(some->> 5 (- 10))
;=> 5
(if-let [x nil] :yes :no)
;=> :no
(if-let [[a b] [1 2]] (+ a b) :no)
;=> 3
(when-let [x 5] (println x) (* x 2))
;>> 5
;=> 10
(if-some [x false] [x] :none)
;=> [false]
(when-some [x nil] :never)
;=> nil
(dotimes [i 3] (println "i" i))
;>> i 0
;>> i 1
;>> i 2
;=> nil
(comment (undefined-thing))
;=> nil
(pmap :a [{}] [5])
;=> [5]
(pmap + [1 2] [10 20])
;=> [11 22]
;; dotimes takes (long n) times, as Clojure does: (/ 5 2) is 2.5 here, a ratio there, and both run twice.
(dotimes [i (/ 5 2)] (println i))
;>> 0
;>> 1
;=> nil
(dotimes [i -1.5] (println i))
;=> nil
