;; QA: the errors an LLM sees for its common mistakes: one line, a position, a hint.
(update {:a "x"} :a inc)
;!! type_error: inc expects a number, got string "x"
(update {:n nil} :n inc)
;!! type_error: inc expects a number, got nil
(dec "5")
;!! type_error: (parse-long s)
(max [1 2 3])
;!! type_error: (apply max coll)
(let [xs (map :total data/orders)]
  (min xs))
;!! type_error: (apply min coll)
;@ 2:3
(int "42")
;!! type_error: (parse-long s)
(long "42")
;!! type_error: long expects a number, got string "42"
(long 1 2)
;!! arity_error: long expects 1 argument, got 2
(double "1.5")
;!! type_error: (parse-double s)
(+ 1 (:missing {:a 1}))
;!! type_error: nil
(+ 1 "2")
;!! type_error: parse-long
(reduce + [1 "2"])
;!! type_error: + expects numbers
(> nil 1)
;!! type_error: nil
(< 1 "2")
;!! type_error: compare
(/ 1 0)
;!! arithmetic_error: division by zero
(map inc 5)
;!! type_error: collection comes last
(count :a)
;!! type_error: (count (:k m))
(count 5)
;!! type_error: count
(first 5)
;!! type_error: first
(nth [1 2 3] 3)
;!! index_out_of_bounds: index 3
(nth data/orders 2)
;!! index_out_of_bounds: (nth coll i nil)
;@ 1:1
(nth [] 0)
;!! index_out_of_bounds
(sort-by :total data/orders >)
;!! type_error: comparator
(sort [1 "a"])
;!! type_error: cannot compare string with integer
(str/join (map :total data/orders) ", ")
;!! type_error: separator comes first
(filter [1 2 3] even?)
;!! type_error: check the argument order
(reduce data/orders + 0)
;!! type_error
(apply + 1)
;!! type_error: apply
(assoc {:a 1} :b)
;!! arity_error: (assoc m k v & kvs)
(select-keys {:a 1} :a)
;!! type_error
(keys [1 2])
;!! type_error: keys
(merge [1] {:a 1})
;!! type_error
(merge {:a 1} [:b 2])
;=> {:a 1 :b 2}
(merge {:a 1} [:b 2 3])
;!! type_error: (into {} pairs)
(->> {:a [1 2] :b [3]} (update-vals #(reduce + %)))
;!! type_error: use -> (thread-first)
(conj "abc" "d")
;!! type_error: (str s x)
(into "" ["a"])
;!! type_error: (str s x)
(take "3" [1])
;!! type_error: take expects a number
(take [1 2] 3)
;!! type_error: argument order
(partition 0 [1 2])
;!! value_error: positive size
(range "5")
;!! type_error: range
(subs nil 1)
;!! type_error: subs expects a string, got nil
(str/upper-case nil)
;!! type_error: nil
(str/includes? "abc" nil)
;!! type_error: second argument
(re-find #"a" nil)
;!! type_error: re-find
(re-find #"(" "x")
;!! regex_error: RE2
(.toUpperCase nil)
;!! type_error: .toUpperCase
(name nil)
;!! type_error: name
(format "%d" "5")
;!! value_error: parse-long
(format "%s %s" 1)
;!! value_error: more directives
(format "%.2f" nil)
;!! value_error: nil
(defn f [x] (inc x))
(f)
;!! arity_error: f expects 1 argument, got 0
;@ 2:1
(defn f [x] (inc x))
(f 1 2)
;!! arity_error: expects 1 argument, got 2
((fn [x] x))
;!! arity_error: anonymous fn expects 1 argument
(let [m {:a 1}] (m))
;!! arity_error: a map used as a function
(:a {:a 1} 2 3)
;!! arity_error: keyword :a used as a function
(first data/orders 2)
;!! arity_error: (first coll)
(str/split "a,b")
;!! arity_error: split expects 2 or 3 arguments, got 1
(zipmap [:a])
;!! arity_error: (zipmap ks vs)
(min)
;!! arity_error: min expects at least 1 argument
(undefined-fn 1 2)
;!! unbound_var: undefined-fn
(fo 1)
;!! unbound_var: did you mean
(clojure.string/no-such "x")
;!! unbound_var: clojure.string functions
(str/format "%s" 1)
;!! unbound_var: clojure.string functions
(Math/cbrt 8)
;!! unbound_var: Math functions
(reduce (fn [acc x] (if (> x 2) (reduced acc) (+ acc x))) 0 [1 2 3 4])
;=> 3
(take 3 (iterate inc 0))
;!! unbound_var: infinite
(take 3 (cycle [1 2]))
;!! unbound_var: infinite
(let [xs (atom [])] xs)
;!! unbound_var: no atoms
(swap! counter inc)
;!! unbound_var: atoms
(repeat "x")
;!! arity_error: repeat needs a count
(range)
;!! arity_error: range
(list 1 2)
;!! unbound_var: vector
'(1 2 3)
;!! parse_error: vector
(#(map #(* % 2) %) [1 2])
;!! parse_error: nested #()
(double 1/3)
;!! parse_error: ratio
(def ^:private x 1)
;!! parse_error: metadata
123456789012345678901
;!! parse_error: out of range
(defn foo [x y] (+ x y)
;!! parse_error: 1 unclosed '('
(+ 1 2))
;!! parse_error: unexpected ')'
;@ 1:8
"unterminated
;!! parse_error: unterminated string
{:a 1 :b}
;!! parse_error: even number of forms
{:a 1 :a 2}
;!! invalid_form: duplicate key :a
(for [x [1 2] :when] x)
;!! invalid_form: :when
(if true)
;!! invalid_form: (if test then else?)
(cond :else)
;!! invalid_form: :else
(let [a 1 b] a)
;!! invalid_form: name/value pairs
(fn x)
;!! invalid_form: parameter vector
(defn foo (x) x)
;!! invalid_form: parameter vector
(let [x 1] (recur 2))
;!! invalid_form: recur outside
(loop [i 0] (+ 1 (recur i)))
;!! invalid_form: tail position
(letfn [(sq [x] (* x x))] (sq 3))
;=> 9
(while true 1)
;!! invalid_form: loop
(defn g "doc" [x] {:pre [(pos? x)]} x)
;!! invalid_form: pre/post
(defn map [f xs] xs)
;!! cannot_shadow_builtin
(def x)
;!! invalid_form: (def name value)
(try 1 (catch))
;!! invalid_form: (catch e
(tool/search {:q "x"})
;!! unknown_tool: tool/search
(defn f [n] (if (pos? n) (f (dec n)) :done))
(f 5000)
;!! depth_exceeded: loop/recur
(count (range 10000000))
;!! collection_too_large: limit
(apply str (repeat 900000 "ab"))
;!! string_too_large
(throw (ex-info "bad input" {:field :age}))
;!! exception: bad input
(into [] (comp (filter odd?) (map inc)) [1 2 3])
;=> [2 4]
(transduce (map inc) + [1 2])
;=> 5
((filter odd?) [1 2 3])
;!! type_error: is a transducer
(-> data/orders (filter #(> (:total %) 5)))
;!! type_error: ->>
(map data/orders :total)
;!! type_error: argument order, e.g. (map :total coll)
(-> data/orders (map :total))
;!! type_error: argument order
;@ 1:17
(map #(str/upper-case %) [1 2])
;!! type_error: upper-case expects a string, got integer 1
(str/lower-case nil)
;!! type_error: lower-case expects a string, got nil
(apply max (map :score []))
;!! arity_error: fails when xs is empty
(reduce min [])
;!! arity_error: (if (seq xs) (apply min xs) 0)
(let [scores (keep :score [{:a 1}])]
  (if (seq scores) (apply max scores) 0))
;=> 0
(->> "a,b" (str/split #","))
;!! type_error: the string comes first: (split s
;@ 1:12
(->> "a-b" (str/replace #"-" "+"))
;!! type_error: in a ->> pipeline, string functions need ->
(re-find "abc 123" #"\d+")
;!! type_error: the regex comes first: (re-find #"..." s)
(-> (map :total data/orders) (reduce + 0))
;!! type_error: in a -> pipeline, sequence functions need ->>
(-> data/orders (take 1))
;!! type_error: take expects a number for its count or index, got vector
(->> (map :total data/orders) (reduce + 0))
;=> 35
