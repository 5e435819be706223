;; QA: idiomatic Clojure snippets LLMs write: functions, control flow, threading, loops, errors.
(defn greet
  ([] (greet "world"))
  ([name] (str "Hello, " name "!")))
[(greet) (greet "Ann")]
;=> ["Hello, world!" "Hello, Ann!"]
(defn sum-all [& nums] (reduce + 0 nums))
[(sum-all) (sum-all 1 2 3)]
;=> [0 6]
(defn stats [xs] {:n (count xs) :sum (reduce + xs) :mean (/ (reduce + xs) (count xs))})
(stats [1 2 3])
;=> {:n 3 :sum 6 :mean 2.0}
(defn- helper [x] (* 2 x))
(helper 4)
;=> 8
(let [square #(* % %)] (map square [1 2 3]))
;=> [1 4 9]
((comp inc #(* 2 %)) 5)
;=> 11
((comp str/upper-case name) :abc)
;=> "ABC"
((partial + 10) 5)
;=> 15
(map (partial * 2) [1 2])
;=> [2 4]
((juxt first last count) [1 2 3])
;=> [1 3 3]
((complement even?) 3)
;=> true
(filter (complement nil?) [1 nil 2])
;=> [1 2]
((fnil + 0) nil 5)
;=> 5
((constantly 7) 1 2)
;=> 7
(map (constantly 0) [1 2])
;=> [0 0]
((some-fn even? neg?) 3)
;=> false
((every-pred pos? even?) 4)
;=> true
(apply max-key val {:a 1 :b 3 :c 2})
;=> [:b 3]
(identity 5)
;=> 5
(-> data/orders first :total (* 2))
;=> 20
(->> data/orders (map :total) (filter #(> % 5)) (reduce +))
;=> 35
(as-> data/orders $ (map :total $) (apply + $) (/ $ 2))
;=> 17.5
(cond-> {:a 1} true (assoc :b 2) false (assoc :c 3))
;=> {:a 1 :b 2}
(let [x 5] (cond-> [] (odd? x) (conj :odd) (pos? x) (conj :pos)))
;=> [:odd :pos]
(some-> {:user {:name "Ann"}} :user :name str/upper-case)
;=> "ANN"
(some->> [1 2 3] (filter even?) first inc)
;=> 3
(-> 1 inc (* 3) str)
;=> "6"
(-> {:a {:b [10 20]}} (get-in [:a :b]) second)
;=> 20
(->> (range 10) (partition 3) (map #(apply + %)))
;=> [3 12 21]
(cond (< 5 3) :less (> 5 3) :greater :else :equal)
;=> :greater
(let [grade (fn [s] (cond (>= s 90) "A" (>= s 80) "B" :else "C"))] (map grade [95 85 50]))
;=> ["A" "B" "C"]
(case :b :a "A" :b "B" "default")
;=> "B"
(case 5 1 :one :other)
;=> :other
(condp = "x" "x" 1 "y" 2 0)
;=> 1
(condp some [1 2] #{3} :three #{2} :two :none)
;=> :two
(if (seq []) :nonempty :empty)
;=> :empty
(when-not (empty? [1]) :has)
;=> :has
(if-let [o (first (filter #(= 9 (:id %)) data/orders))] o :not-found)
;=> :not-found
(when-first [x [5 6]] (* x 2))
;=> 10
(loop [i 0 acc 0] (if (> i 10) acc (recur (inc i) (+ acc i))))
;=> 55
(loop [xs [3 1 4 1 5] best nil] (if (empty? xs) best (recur (rest xs) (if (or (nil? best) (> (first xs) best)) (first xs) best))))
;=> 5
(loop [n 10 fib [0 1]] (if (zero? n) (take 10 fib) (recur (dec n) (conj fib (+ (peek fib) (nth fib (- (count fib) 2)))))))
;=> [0 1 1 2 3 5 8 13 21 34]
(defn fact [n] (if (<= n 1) 1 (* n (fact (dec n)))))
(fact 10)
;=> 3628800
(defn fib [n] (loop [a 0 b 1 i 0] (if (= i n) a (recur b (+ a b) (inc i)))))
(map fib (range 8))
;=> [0 1 1 2 3 5 8 13]
(for [x [1 2 3] y [:a :b] :when (odd? x)] [x y])
;=> [[1 :a] [1 :b] [3 :a] [3 :b]]
(for [x (range 5) :let [y (* x x)] :when (even? y)] y)
;=> [0 4 16]
(for [x (range 10) :while (< x 3)] x)
;=> [0 1 2]
(for [[i v] (map-indexed vector ["a" "b"])] (str i ":" v))
;=> ["0:a" "1:b"]
(doseq [o data/orders] (println (:id o) "->" (:total o)))
;>> 1 -> 10
;>> 2 -> 25
;=> nil
(doseq [[k v] {:a 1}] (println k v))
;>> :a 1
;=> nil
(dotimes [i 2] (println i))
;>> 0
;>> 1
;=> nil
;; Unlike Clojure, strings inside collections stay quoted in println output (clearer to an LLM).
(do (println "a" nil "b" [1 "x"] {:k "v"}) :done)
;>> a nil b [1 "x"] {:k "v"}
;=> :done
(do (prn "a" [1 "x"]) nil)
;>> "a" [1 "x"]
;=> nil
(do (print "no newline") nil)
;>> no newline
;=> nil
(let [{:keys [a b]} {:a 1 :b 2} [x y] [3 4]] (+ a b x y))
;=> 10
(let [[a b & more] (range 5)] {:a a :b b :more more})
;=> {:a 0 :b 1 :more [2 3 4]}
(map (fn [[k v]] (str k v)) [[1 2] [3 4]])
;=> ["12" "34"]
(map (fn [{:keys [id]}] id) data/orders)
;=> [1 2]
(reduce (fn [[lo hi] x] [(min lo x) (max hi x)]) [100 0] [5 50 20])
;=> [5 50]
(try (/ 1 0) (catch Exception e (str "caught: " (ex-message e))))
;=> "caught: division by zero"
(try (throw (ex-info "bad" {:code 42})) (catch clojure.lang.ExceptionInfo e (:code (ex-data e))))
;=> 42
(try (throw (Exception. "boom")) (catch Exception e (.getMessage e)))
;=> "boom"
(try (/ 1 0) (catch Exception e (str "failed: " (.getMessage e))))
;=> "failed: division by zero"
(defn check-age [x] (if (neg? x) (throw (Exception. (str "negative age: " x))) x))
(try (check-age -1) (catch Exception e {:error (.getMessage e)}))
;=> {:error "negative age: -1"}
(throw (Exception. "stop"))
;!! exception: stop
(try 1 (catch Exception e (.getMessage "not an error")))
;=> 1
(.getMessage "not an error")
;!! type_error: .getMessage expects an exception
(try (/ 1 0) (catch Exception e (:message e)))
;=> "division by zero"
(try (/ 1 0) (catch Exception e (:kind e)))
;=> :arithmetic_error
(try (nth [1] 5) (catch Exception e :oops))
;=> :oops
(try (parse-long "x") (catch Exception e :bad))
;=> nil
(try (:a (first [])) (finally (println "cleanup")))
;>> cleanup
;=> nil
(defn safe-div [a b] (try (/ a b) (catch ArithmeticException e nil)))
(safe-div 1 0)
;=> nil
(try (throw (ex-info "x" {})) (catch Throwable t :caught))
;=> :caught
(def counter (reduce (fn [acc _] (inc acc)) 0 (range 5)))
counter
;=> 5
(defn add [a b] (+ a b))
(apply add [1 2])
;=> 3
(map + [1 2 3] [10 20 30])
;=> [11 22 33]
(map vector [:a :b] [1 2])
;=> [[:a 1] [:b 2]]
(mapv (fn [a b] (* a b)) [1 2] [3 4])
;=> [3 8]
(map #(str %1 "-" %2) ["a" "b"] [1 2])
;=> ["a-1" "b-2"]
(every? true? [true true])
;=> true
(not (some nil? [1 2]))
;=> true
(nil? nil)
;=> true
(some? 0)
;=> true
(true? 1)
;=> false
(boolean nil)
;=> false
(type 1)
;=> :integer
(number? 1.5)
;=> true
(string? "s")
;=> true
(keyword? :a)
;=> true
(fn? inc)
;=> true
(integer? 1.0)
;=> false
(zero? 0.0)
;=> true
(pos? -1)
;=> false
(even? 4)
;=> true
(max-key :n {:n 1} {:n 3})
;=> {:n 3}
(compare 2 10)
;=> -1
(compare [1 2] [1 3])
;=> -1
(not= 1 2)
;=> true
(= "a" "a" "a")
;=> true
(< 1 2 3)
;=> true
((memoize inc) 1)
;=> 2
(let [xs (atom [])] xs)
;!! unbound_var: atom
(nth [1 2 3] 3)
;!! index_out_of_bounds: 3
(nth [] 0)
;!! index_out_of_bounds
'(1 2 3)
;!! parse_error: vector
(list 1 2)
;!! unbound_var: vector
(:name {"name" "x"})
;=> "x"
(get "abc" 1)
;=> "b"
(+ 1 (:missing {:a 1}))
;!! type_error: nil
(str/join (map :total data/orders) ", ")
;!! type_error: separator comes first
(undefined-fn 1 2)
;!! unbound_var: undefined-fn
(count 5)
;!! type_error: count
(first 5)
;!! type_error: first
(sort-by :total data/orders >)
;!! type_error
(assoc {:a 1} :b)
;!! arity_error
(reduce + nil)
;=> 0
(apply + nil)
;=> 0
(range)
;!! arity_error
(repeat 3 "x")
;=> ["x" "x" "x"]
(repeat "x")
;!! arity_error
(take 3 (repeat "x"))
;!! arity_error
(take 3 (iterate inc 0))
;!! unbound_var: infinite
(take 3 (cycle [1 2]))
;!! unbound_var: infinite
(run! #(println "order" (:id %) (:total %)) data/orders)
;>> order 1 10
;>> order 2 25
;=> nil
(run! println (sort (keys {:b 1 :a 2})))
;>> :a
;>> :b
;=> nil
