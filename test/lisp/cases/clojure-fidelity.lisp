;; Behave as Clojure wherever the dialect does not deliberately differ (issue: fidelity round 2).
;; Nothing is nil, not an empty (truthy) vector, where Clojure says so.
(butlast [1])
;=> nil
(if (butlast [1]) :more :done)
;=> :done
(take-last 0 [1 2])
;=> nil
(take-last 3 [])
;=> nil
(nthrest nil 0)
;=> nil
(nthrest [1 2] 0)
;=> [1 2]
;; A float anywhere makes a float.
(quot 10.0 3)
;=> 3.0
(quot 10 3.0)
;=> 3.0
(quot 10 3)
;=> 3
(rem 10.0 3)
;=> 1.0
;; NaN equals nothing, inside collections too.
(= #{1.0 ##NaN} #{1.0 ##NaN})
;=> false
(= {##NaN 1} {##NaN 1})
;=> false
;; parse-* read strings only.
(parse-long 42)
;!! type_error: parse-long expects a string
(parse-double 1.5)
;!! type_error: parse-double expects a string
(parse-long "42")
;=> 42
;; Valid Clojure that used to be refused.
(first #{7})
;=> 7
(first (sorted-set 3 1 2))
;=> 1
(rest (sorted-set 3 1 2))
;=> [2 3]
(next (sorted-set 1))
;=> nil
(last (sorted-set 3 1 2))
;=> 3
(second (sorted-set 3 1 2))
;=> 2
(butlast (sorted-set 3 1 2))
;=> [1 2]
(drop 2 (sorted-set 3 1 2))
;=> [3]
(second (sorted-map :b 2 :a 1))
;=> [:b 2]
(merge {} [:k 1])
;=> {:k 1}
(merge {:a 1} [:b 2] {:c 3})
;=> {:a 1 :b 2 :c 3}
(clojure.string/replace "the cat sat" #"cat|sat" {"cat" "dog" "sat" "ran"})
;=> "the dog ran"
(clojure.string/replace "a-b" #"-" (fn [m] (str "<" m ">")))
;=> "a<->b"
(keyword "user" "id")
;=> :user/id
(name :user/id)
;=> "id"
(namespace :user/id)
;=> "user"
(namespace :id)
;=> nil
(< 1)
;=> true
(max 5)
;=> 5
(min 5)
;=> 5
(when-let [x nil])
;=> nil
(when-some [x 1])
;=> nil
(every? 1 [])
;=> true
(some 1 [])
;=> nil
(map 1 [])
;=> []
(filter "x" nil)
;=> []
;; Functions a model reaches for.
(NaN? ##NaN)
;=> true
(NaN? 1)
;=> false
(parse-boolean "true")
;=> true
(parse-boolean "no")
;=> nil
[(pos-int? 1) (pos-int? 0) (neg-int? -1) (nat-int? 0) (nat-int? 1.0)]
;=> [true false true true false]
[(bit-and 12 10) (bit-or 12 10) (bit-xor 12 10) (bit-not 0) (bit-and-not 12 10)]
;=> [8 14 6 -1 4]
[(bit-shift-left 1 10) (bit-shift-right 1024 3) (bit-test 5 0) (bit-set 0 4) (bit-clear 7 1) (bit-flip 0 1)]
;=> [1024 128 true 16 5 2]
(unsigned-bit-shift-right -1 60)
;=> 15
(bit-shift-left 1 63)
;!! arithmetic_error: integer overflow in bit-shift-left
(rseq [1 2 3])
;=> [3 2 1]
(rseq (sorted-map :a 1 :b 2))
;=> [[:b 2] [:a 1]]
(rseq [])
;=> nil
(rseq {:a 1})
;!! type_error: rseq expects a vector or a sorted collection
(sorted-map-by > 1 :a 3 :c 2 :b)
;=> {3 :c 2 :b 1 :a}
(into (sorted-map-by >) {1 :a 3 :c 2 :b})
;=> {3 :c 2 :b 1 :a}
(sorted-set-by > 1 3 2)
;=> #{3 2 1}
;; A sorted collection holds one element (or key) per place in its order: one its comparator
;; calls equal to a held one is the same, as in Clojure (a set or key kept both when not =).
(sorted-set-by (fn [a b] (compare (count a) (count b))) "ab" "cd" "e")
;=> #{"e" "ab"}
(conj (sorted-set-by (fn [a b] (compare (count a) (count b))) "ab") "cd" "xyz")
;=> #{"ab" "xyz"}
(sorted-map-by (fn [a b] (compare (count a) (count b))) "ab" 1 "cd" 2 "e" 3)
;=> {"e" 3 "ab" 2}
(assoc (sorted-map-by (fn [a b] (compare (count a) (count b))) "ab" 1) "cd" 2)
;=> {"ab" 2}
(let [by-len (fn [a b] (compare (count a) (count b)))
      s (apply sorted-set-by by-len (map #(apply str (repeat % "a")) (range 1 10)))]
  [(count (conj s "bbbbb")) (nth (vec (conj s "bbbbb")) 4) (count (into s ["b" "cc" "dddddddddd"]))])
;=> [9 "aaaaa" 10]
(sorted-set-by #(compare (quot %1 10) (quot %2 10)) 12 5 17 31 8 30)
;=> #{5 12 31}
;; Keys of such a collection are found by its comparator, not by =, as in Clojure.
(let [by-len (fn [a b] (compare (count a) (count b)))
      s (sorted-set-by by-len "ab" "e")
      m (sorted-map-by by-len "ab" 1 "e" 2)]
  [(get s "cd") (contains? s "cd") (s "cd") (disj s "cd") (get m "cd") (m "cd") (contains? m "x")
   (find m "cd") (dissoc m "cd") (get s "xyz") (contains? m "xyz") (get m "xyz" :none)])
;=> ["ab" true "ab" #{"e"} 1 1 true ["ab" 1] {"e" 2} nil false :none]
(let [s (apply sorted-set-by #(compare (quot %1 10) (quot %2 10)) (range 0 200 10))]
  [(get s 57) (contains? s 205) (count (disj s 41 42 199))])
;=> [50 false 18]
;; Host data's string keys still find keyword keys first, before the comparator is asked.
(let [m (into (sorted-map-by (fn [a b] (compare a b))) (map vector [:a :b :c :d :e :f :g :h :i :j] (range 10)))]
  [(get m "c") (contains? m "j") (count (dissoc m "a"))])
;=> [2 true 9]
(array-map :b 1 :a 2)
;=> {:b 1 :a 2}
(with-out-str (println "a" 1) (print "b") (prn :c))
;=> "a 1\nb:c\n"
(with-out-str (pr "a" 1 nil) (pr) (pr :b))
;=> "\"a\" 1 nil:b"
(do (println "kept") (count (with-out-str (println "not kept"))))
;>> kept
;=> 9
(clojure.string/escape "a<b>" {"<" "&lt;" ">" "&gt;"})
;=> "a&lt;b&gt;"
(repeatedly 3 (fn [] :x))
;=> [:x :x :x]
(repeatedly (fn [] :x))
;!! type_error: repeatedly needs a count
(assert (= 1 1))
;=> nil
(try (assert (= 1 2) "math") (catch e (ex-message e)))
;=> "Assert failed: math"
;; Sorted collections stay sorted.
(assoc (sorted-map :b 2 :c 3) :a 1)
;=> {:a 1 :b 2 :c 3}
(keys (reduce (fn [m i] (assoc m i true)) (sorted-map) [5 3 9 1 7 2 8 6 4 10]))
;=> [1 2 3 4 5 6 7 8 9 10]
(merge (sorted-map :c 1) {:a 2 :b 3})
;=> {:a 2 :b 3 :c 1}
(update (sorted-map :b 1) :a (fnil inc 0))
;=> {:a 1 :b 1}
(conj (sorted-set 5 1) 3)
;=> #{1 3 5}
(assoc (sorted-map-by > 1 :a) 5 :e 3 :c)
;=> {5 :e 3 :c 1 :a}
(assoc {:b 1} :a 2)
;=> {:b 1 :a 2}
;; The reader: a leading zero is octal, as in Clojure.
017
;=> 15
[00 07 010]
;=> [0 7 8]
08
;!! parse_error: leading zero is octal
0.5
;=> 0.5
;; N marks an integer whatever its base (017N was read as 17, 0x10N refused); M a float;
;; N after a float is not a number.
[017N -017N 0x10N -0XffN 0N 00N 17N 017M 08M]
;=> [15 -15 16 -255 0 0 17 17.0 8.0]
08N
;!! parse_error: leading zero is octal
1.5N
;!! parse_error: invalid number 1.5N
;@ 1:1
[1 1e3N]
;!! parse_error: invalid number 1e3N
;@ 1:4
;; A number token that is none of the forms is named whole, where it starts.
(+ 1 2a)
;!! parse_error: invalid number 2a
;@ 1:6
(+ 1e 2)
;!! parse_error: invalid number 1e
;@ 1:4
[0xG 1]
;!! parse_error: invalid number 0xG
;@ 1:2
;; letfn: local functions that call themselves and each other.
(letfn [(ev? [n] (if (zero? n) true (od? (dec n)))) (od? [n] (if (zero? n) false (ev? (dec n))))] [(ev? 10) (od? 7)])
;=> [true true]
(letfn [(fact [n] (if (< n 2) 1 (* n (fact (dec n)))))] (fact 10))
;=> 3628800
(letfn [(a [] (b)) (b [] (fn [] (c))) (c [] 42)] ((a)))
;=> 42
(let [k 3] (letfn [(f [x] (+ x k))] (mapv f [1 2])))
;=> [4 5]
(letfn [(f [x] x)])
;=> nil
(letfn [f] 1)
;!! invalid_form: each letfn spec is (name [params] body...)
;; `/` always makes a float, where Clojure's (/ 4 2) is the integer 2: an integral float finds
;; a vector's or string's element as its integer does (2.0 is the key 2 in a map too).
(let [v [10 20 30 40]] [(get v (/ (count v) 2)) (v (/ 2 2)) (contains? v (/ 8 2)) (get v 1.5)])
;=> [30 20 false nil]
(get-in {:rows [[1 2] [3 4]]} [:rows (/ 2 2) 0])
;=> 3
[(get "abc" (/ 4 2)) (contains? "abc" 2.0)]
;=> ["c" true]
[(assoc [1 2] (/ 2 2) :x) (update [1 2] (/ 0 2) inc) (assoc-in [[1 2]] [0 (/ 4 2)] 3)]
;=> [[1 :x] [2 2] [[1 2 3]]]
([1 2 3] 1.5)
;!! type_error: a vector used as a function expects an integer index, got float 1.5
(assoc [1 2] 0.5 :x)
;!! type_error: expects an integer index, got float 0.5
;; Clojure reads (Math/PI) as the static field itself, as it reads Math/PI.
[(Math/PI) (* 2 (Math/E)) (Integer/MAX_VALUE) (Double/POSITIVE_INFINITY)]
;=> [3.141592653589793 5.43656365691809 2147483647 ##Inf]
(Math/PI 2)
;!! not_callable: is not a function
;; 0 and 0.0 are = as keys too (immutable's key test gave up on the falsy 0 before unboxing 0.0).
(contains? #{0} 0.0)
;=> true
(contains? #{0.0 1} 0)
;=> true
(get {0 :zero} 0.0)
;=> :zero
(get {-0.0 :zero} 0)
;=> :zero
(= (set (range 5)) (set (map double (range 5))))
;=> true
(= {0 :a} {0.0 :a})
;=> true
(count (into #{} [0 0.0 -0.0]))
;=> 1
(frequencies [0 0.0 1 1.0])
;=> {0 2 1 2}
(assoc {0 :a} 0.0 :b)
;=> {0 :b}
(dissoc {0 :a :b 1} 0.0)
;=> {:b 1}
(disj #{0 1} 0.0)
;=> #{1}
(let [m (zipmap (range 40) (range 40))] [(get m 0.0) (contains? (dissoc m -0.0) 0)])
;=> [0 false]
;; A key or element = to one held keeps the one held, as Clojure's assoc and conj do: only the
;; value changes, so 1 and 1.0 never trade places (the map printed {1.0 :b}).
(assoc {1 :a} 1.0 :b)
;=> {1 :b}
(assoc {1.0 :a} 1 :b)
;=> {1.0 :b}
(assoc {-0.0 :a} 0.0 :b)
;=> {-0.0 :b}
[(hash-map 1 :a 1.0 :b) (into {} [[2.0 :a] [2 :b]]) (merge {[1] :a} {[1.0] :b}) (zipmap [1 1.0] [:a :b])]
;=> [{1 :b} {2.0 :b} {[1] :b} {1 :b}]
(let [m (zipmap (range 40) (range 40))] [(get (assoc m 5.0 :x) 5) (contains? (set (keys (assoc m 5.0 :x))) 5.0) (some float? (keys (assoc m 5.0 :x)))])
;=> [:x true nil]
[(conj #{1} 1.0) (hash-set 2.0 2) (set [[1] [1.0]]) (into #{3} [3.0])]
;=> [#{1} #{2.0} #{[1]} #{3}]
(some float? (conj (set (range 40)) 7.0))
;=> nil
[(sorted-set 1 1.0) (sorted-set 2.0 2) (assoc (sorted-map 1 :a) 1.0 :b) (conj (apply sorted-set (range 20)) 7.0)]
;=> [#{1} #{2.0} {1 :b} #{0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19}]
(some float? (conj (apply sorted-set (range 20)) 7.0))
;=> nil
(some float? (keys (assoc (apply sorted-map (range 40)) 6.0 :x)))
;=> nil
;; A lookup by a key = to one held gives the one held, as Clojure's find and set lookup do: the
;; caller's 1.0 came back for the 1 a set or map held.
[(#{1} 1.0) (get #{1} 1.0) (find {1 :a} 1.0) (select-keys {1 :a} [1.0]) (#{0.0} 0) (find {0 :a} 0.0) (#{[1]} [1.0])]
;=> [1 1 [1 :a] {1 :a} 0.0 [0 :a] [1]]
[(get (set (range 40)) 7.0) (find (zipmap (range 40) (range 40)) 7.0) ((apply sorted-set (range 20)) 7.0) (find (apply sorted-map (range 40)) 6.0) ((sorted-set 1 2) 1.0)]
;=> [7 [7 7] 7 [6 7] 1]
[(some #{1} [1.0]) (keep #{[1]} [[1.0]]) (map {1 :a} [1.0])]
;=> [1 [[1]] [:a]]
;; A large sorted set or map hashes as the = hash set or map does (Clojure's hash ignores order):
;; once hashed, (= s ss) turned false and both stayed apart in a set or as keys.
(let [s (set (range 20)) ss (apply sorted-set (range 20)) rs (apply sorted-set-by > (range 20)) probe (set (range 10))]
  [(contains? probe s) (contains? probe ss) (contains? probe rs) (= s ss) (= ss rs) (count (set [s ss rs])) (contains? (set (cons ss (range 10))) s) (get (zipmap [rs 1 2 3 4 5 6 7 8 9] (range 10)) s)])
;=> [false false false true true 1 true 0]
(let [m (zipmap (range 20) (range 20)) sm (into (sorted-map) m) probe (set (range 10))]
  [(contains? probe m) (contains? probe sm) (= m sm) (count (distinct [m sm])) (frequencies [[m] [sm]])])
;=> [false false true 1 {[{0 0 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9 10 10 11 11 12 12 13 13 14 14 15 15 16 16 17 17 18 18 19 19}] 2}]
;; A set sorted by its own comparator, used as a predicate, finds by that comparator as when called.
(let [s (sorted-set-by (fn [a b] (compare (count a) (count b))) "ab")] [(filter s ["xy" "abc"]) (some s ["xy"]) (s "xy")])
;=> [["xy"] "ab" "ab"]
;; A fractional size or step counts as Clojure's take and drop count it, rounded up: / always
;; makes a float here, so (partition-all (/ (count xs) 2) xs) splits 5 items in two halves.
(take-nth 2.5 [1 2 3 4 5 6 7])
;=> [1 4 7]
(take-nth 0.5 [1 2 3])
;=> [1 2 3]
(partition-all (/ 5 2) [1 2 3 4 5])
;=> [[1 2 3] [4 5]]
(partition-all 2 1.5 [1 2 3 4 5])
;=> [[1 2] [3 4] [5]]
(partition 2 1.5 [1 2 3 4 5])
;=> [[1 2] [3 4]]
(partition (/ 4 2) [1 2 3 4])
;=> [[1 2] [3 4]]
;; Clojure's partition keeps only chunks of exactly n, which a fractional n never makes.
(partition (/ 5 2) [1 2 3 4 5])
;!! value_error: partition expects a whole size
;; An integer has no sign of zero (JS arithmetic makes -0): a float made from one is 0.0.
(quot -1 3)
;=> 0
[(double (quot -1 3)) (double (rem -4 2)) (double (mod -3 3)) (double (apply * [-1 0])) (double -0)]
;=> [0.0 0.0 0.0 0.0 0.0]
(/ 1.0 (quot -1 3))
;=> ##Inf
(* 2.0 (reduce * [0 -1]))
;=> 0.0
;; Floats print as Clojure (Java's Double.toString) prints them: plain from 0.001 up to 10^7,
;; else one digit, a point and an exponent; and they read back.
[1e7 12345678.9 1e21 1.5e-7 5e-7 0.0001 0.001 9999999.0 -2.5e-5 1.7976931348623157E308]
;=> [1.0E7 1.23456789E7 1.0E21 1.5E-7 5.0E-7 1.0E-4 0.001 9999999.0 -2.5E-5 1.7976931348623157E308]
(str 1e20 " " 0.5 " " (* 1.0 12345678))
;=> "1.0E20 0.5 1.2345678E7"
(println (avg [1700000000000000 1700000000000000]) -0.0 0.0)
;>> 1.7E15 -0.0 0.0
;=> nil
(= [1e7 5e-7 1e21] [(parse-double (str 1e7)) (parse-double (str 5e-7)) (parse-double (pr-str 1e21))])
;=> true
;; Math/round is Java's (clojure.math/round): a half goes toward positive infinity, so a
;; negative half toward zero; PTC-Lisp's own round takes halves away from zero.
[(Math/round -2.5) (Math/round 2.5) (Math/round -0.5) (Math/round -2.6) (round -1.5) (round 1.5) (round -2.4)]
;=> [-2 3 0 -3 -2 2 -2]
;; Java's Math.round of NaN is 0 (an integer, as its doc promises), not NaN.
[(Math/round ##NaN) (Math/round (- ##Inf ##Inf))]
;=> [0 0]
;; max and min return the later of equal numbers, as Clojure's do ((max 2 2.0) is 2.0).
[(max 2 2.0) (max 2.0 2) (min 1 1.0) (min 1.0 1 3) (max 1 3 3.0 2) (max ##NaN 1) (max 1 ##NaN)]
;=> [2.0 2 1.0 1 3.0 ##NaN ##NaN]
;; A range whose bounds or step are NaN follows Clojure's Range: empty when its start is already
;; past the end by the step's sign (a NaN step counts as negative), else a sequence that never
;; ends, refused as (range 0 ##Inf) is, not an empty vector.
[(range ##NaN) (range 0 10 ##NaN) (range ##Inf ##Inf) (range ##-Inf ##-Inf -1) (range 0 ##Inf ##Inf) (range 2.5 ##-Inf ##-Inf)]
;=> [[] [] [] [] [0] [2.5]]
(range 5 ##NaN -1)
;!! collection_too_large: never ends
(range ##NaN 0 -1)
;!! collection_too_large: never ends
(range 0 ##NaN)
;!! collection_too_large: never ends
(range ##NaN 10)
;!! collection_too_large: never ends
(range 10 0 ##NaN)
;!! collection_too_large: never ends
(range 1 ##NaN 0.5)
;!! collection_too_large: never ends
;; Past 2^53 a float step smaller than half the gap between floats leaves the element where it
;; is: Clojure's range then never ends; refused, not 11 copies of 1e16.
(range 1e16 (+ 1e16 10))
;!! collection_too_large: never ends
(for [x (range 1e16 (+ 1e16 4))] x)
;!! collection_too_large: never ends
(range 1 1e17 1e-10)
;!! collection_too_large
;; Where the elements do move, each is the sum of the one before and the step, as Clojure adds
;; them: 1e16 + 2.9 rounds to 1e16 + 2, so there are 14 elements short of 1e16 + 28, not the 11
;; that the count estimated from the step, ceil(28 / 2.9) + 1, allowed.
[(count (range 1e16 (+ 1e16 29) 2.9)) (last (range 1e16 (+ 1e16 29) 2.9)) (count (range 1e16 (+ 1e16 10) 2)) (range 1e16 (+ 1e16 10) 3)]
;=> [14 1.0000000000000026E16 5 [1.0E16 1.0000000000000004E16 1.0000000000000008E16]]
;; Integer elements past ±2^53 overflow, as (+ 9007199254740991 1) does, not repeat or skip.
(range 9007199254740985 9.007199254740995e15)
;!! arithmetic_error: integer overflow in range
(range -9007199254740990 -9.007199254740995e15 -1)
;!! arithmetic_error: integer overflow in range
[(last (range 9007199254740985 9.007199254740992e15)) (count (range 9007199254740985 9.007199254740992e15))]
;=> [9007199254740991 7]
;; The clojure.set operations and rename-keys build on their first set or map, so a sorted one
;; gives a sorted result, as in Clojure; later additions land in their place.
(clojure.set/union (sorted-set 3 1) #{2})
;=> #{1 2 3}
(first (clojure.set/union (apply sorted-set (range 20)) #{-1}))
;=> -1
(conj (clojure.set/difference (sorted-set-by > 3 1 2) #{2}) 2)
;=> #{3 2 1}
(conj (clojure.set/intersection (sorted-set-by > 3 1 2) #{1 3}) 2)
;=> #{3 2 1}
(conj (clojure.set/select odd? (sorted-set-by > 3 1 2)) 2)
;=> #{3 2 1}
(assoc (clojure.set/rename-keys (sorted-map :a 1 :b 2) {:a :z}) :c 3)
;=> {:b 2 :c 3 :z 1}
(first (clojure.set/rename-keys (apply sorted-map (range 40)) {38 -1}))
;=> [-1 39]
;; Clojure names a model writes: keyword predicates by namespace, list*, the v-suffixed
;; partition and split functions of Clojure 1.12 (results are vectors anyway).
(mapv simple-keyword? [:a :a/b "a" nil])
;=> [true false false false]
(mapv qualified-keyword? [:a :a/b "a/b" nil])
;=> [false true false false]
(list* 1 2 [3 4])
;=> [1 2 3 4]
(list* [1 2])
;=> [1 2]
(list* nil)
;=> nil
(list* 1 nil)
;=> [1]
(apply list* 1 [[2]])
;=> [1 2]
(list* 1 2)
;!! type_error
(partitionv 2 [1 2 3 4 5])
;=> [[1 2] [3 4]]
(partitionv-all 2 [1 2 3])
;=> [[1 2] [3]]
(splitv-at 1 [1 2 3])
;=> [[1] [2 3]]
;; Math/floor and Math/ceil are Java's: a double, whatever the argument (floor and ceil give integers).
(Math/floor 2.5)
;=> 2.0
(Math/ceil 2.1)
;=> 3.0
(Math/floor -2.5)
;=> -3.0
(Math/ceil 5)
;=> 5.0
(Math/floor ##NaN)
;=> ##NaN
(Math/ceil -0.5)
;=> -0.0
(Math/floor 1e300)
;=> 1.0E300
(floor 2.5)
;=> 2
(Math/floor "2")
;!! type_error
;; Integer/parseInt and Long/parseLong take Java's radix too.
(Integer/parseInt "ff" 16)
;=> 255
(Long/parseLong "-101" 2)
;=> -5
(Integer/parseInt "Zz" 36)
;=> 1295
(Integer/parseInt "+7" 8)
;=> 7
(Integer/parseInt "19" 8)
;!! value_error: Integer/parseInt cannot read an integer in base 8 from string "19"
(Integer/parseInt "ff" 37)
;!! value_error: radix
(Integer/parseInt "ff" 1.5)
;!! type_error
(Long/parseLong "zzzzzzzzzzzzz" 36)
;!! value_error: out of range for a long
;; A long past 2^53-1 a double cannot hold: an error, not another number.
(Long/parseLong "zzzzzzzzzzzz" 36)
;!! arithmetic_error
(try (Integer/parseInt "-" 16) (catch NumberFormatException e :nfe))
;=> :nfe
(Integer/parseInt "ff" nil)
;!! type_error: integer radix
