;; Errors carry kinds, positions and hints.
(+ 1 "a")
;!! type_error: (str a b)
;@ 1:1
(let [x 1]
  (+ x nil))
;!! type_error: nil
;@ 2:3
undefined-name
;!! unbound_var: undefined symbol
(fo 1)
;!! unbound_var: did you mean
(atom 1)
;!! unbound_var: no atoms
(42 1)
;!! not_callable
("str" 1)
;!! not_callable
(let [f 5] (f 1))
;!! not_callable
()
;!! invalid_form: empty list
(call "search" {})
;!! invalid_form: tool/name
(. "s" length)
;!! invalid_form: .method
(ns my.app)
;!! invalid_form: namespaces
(while true 1)
;!! invalid_form: loop
data/missing
;!! unbound_var: available
(tool/search {:q 1})
;!! unknown_tool: no tools
(clojure.string/no-such "x")
;!! unbound_var: clojure.string functions
(foo.bar/baz 1)
;!! unbound_var: unknown namespace
(/ 1 0)
;!! arithmetic_error: division by zero
(defn f [x] (g x))
;!! unbound_var: g
(def a (b))
(defn b [] 1)
;!! unbound_var: before it is defined
(map)
;!! arity_error: map expects
(if)
;!! invalid_form: (if test then else?)
(try (throw (ex-info "boom" {:code 7})) (catch e (ex-data e)))
;=> {:code 7}
(try (+ 1 :a) (catch e (:kind e)))
;=> :type_error
(try 1 (finally (println "done")))
;>> done
;=> 1
(try (throw (ex-info "nope" {})) (catch e (ex-message e)) (finally (println "f")))
;>> f
;=> "nope"
(throw (ex-info "bad input" {:field :age}))
;!! exception: bad input
(return 1 2)
;!! invalid_form: (return value)
(fail)
;!! invalid_form: (fail
;; Clojure names the dialect lacks say so, and what to write instead.
(sequence-of 1)
;!! unbound_var: undefined symbol
(conj! [] 1)
;!! unbound_var: conj! is Clojure, not available in PTC-Lisp use conj
(volatile! 0)
;!! unbound_var: volatile! is Clojure, not available in PTC-Lisp
(trampoline f)
;!! unbound_var: trampoline is Clojure
(delay 1)
;!! unbound_var: delay is Clojure
(transient [])
;!! unbound_var: transient is Clojure
;; "Did you mean" offers a builtin near in meaning before names near in spelling.
(mean [1 2 3])
;!! unbound_var: undefined symbol: mean did you mean `avg`?
(average [1 2 3])
;!! unbound_var: did you mean `avg`?
(uniq [1 1])
;!! unbound_var: did you mean `distinct`?
(flat-map identity [[1]])
;!! unbound_var: did you mean `mapcat`?
;; Overflow names the operation that overflowed.
(inc 9007199254740991)
;!! arithmetic_error: integer overflow in inc
(dec -9007199254740991)
;!! arithmetic_error: integer overflow in dec
;; Java's Math.round of an infinity is Long/MAX_VALUE, past the integers PTC-Lisp has, as 1e20's is.
(Math/round ##Inf)
;!! arithmetic_error: integer overflow in Math/round
(Math/round ##-Inf)
;!! arithmetic_error: integer overflow in Math/round

;; A result too deep to cross out of the program is placed: at the return or fail that gave
;; it, else at the last form.
(def deep (reduce (fn [a _] [a]) 1 (range 600)))
(if (vector? deep) (return deep) 0)
;!! nesting_too_deep
;@ 2:20
(def deep (reduce (fn [a _] [a]) 1 (range 600)))
(when deep
  (fail deep))
;!! nesting_too_deep
;@ 3:3
(def deep (reduce (fn [a _] [a]) 1 (range 600)))
(count deep)
(identity deep)
;!! nesting_too_deep
;@ 3:1
