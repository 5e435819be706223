;; Destructuring in let, fn, loop, for, doseq.
(let [[a b] [1 2]] (+ a b))
;=> 3
(let [[a b c] [1]] [a b c])
;=> [1 nil nil]
(let [[a & r :as all] [1 2 3]] [a r all])
;=> [1 [2 3] [1 2 3]]
(let [[_ second] [1 2]] second)
;=> 2
(let [[[a b] c] [[1 2] 3]] [a b c])
;=> [1 2 3]
(let [[a b] "hi"] [a b])
;=> ["h" "i"]
(let [[a b] nil] [a b])
;=> [nil nil]
(let [[a] 42] a)
;!! destructure_error: vector
(let [{:keys [a b]} {:a 1 :b 2}] (+ a b))
;=> 3
(let [{:keys [a b] :or {b 10}} {:a 1}] [a b])
;=> [1 10]
(let [{:keys [a] :or {a 10}} {:a nil}] a)
;=> nil
(let [{:strs [name]} {"name" "Ann"}] name)
;=> "Ann"
(let [{n :name, :as p} {:name "Bo" :age 3}] [n (:age p)])
;=> ["Bo" 3]
(let [{:keys [name]} {"name" "fallback"}] name)
;=> "fallback"
(let [{[x y] :point} {:point [3 4]}] (+ x y))
;=> 7
(let [{:keys [a]} nil] a)
;=> nil
(let [{:keys [a]} [1 2]] a)
;!! destructure_error: map
((fn [{:keys [x y]} [a b]] [x y a b]) {:x 1 :y 2} [3 4])
;=> [1 2 3 4]
((fn [a & {:keys [k]}] [a k]) 1 {:k 2})
;=> [1 2]
(defn opts [a & {:keys [limit sort] :or {limit 10}}] [a limit sort])
[(opts 1) (opts 1 :sort :asc) (opts 1 :limit 3 :sort :desc)]
;=> [[1 10 nil] [1 10 :asc] [1 3 :desc]]
;; Clojure's namespaced :keys: {:ns/keys [a]} reads :ns/a, a name with its own namespace keeps it.
(let [{:user/keys [id name] :order/keys [total] :keys [x/y] :or {total 0}} {:user/id 7 :user/name "Al" :x/y 3}] [id name total y])
;=> [7 "Al" 0 3]
(let [{:a/keys [b c/d]} {:a/b 1 :c/d 2 :a/d 3}] [b d])
;=> [1 2]
(let [{:a/keys b} {}] b)
;!! invalid_form: :a/keys must be followed by a vector of names
((fn [& {:keys [k]}] k) :k)
;!! destructure_error
;; Odd keyword arguments name the key left without a value (Clojure: "No value supplied for key").
((fn [& {:keys [a]}] a) :a 1 :b)
;!! destructure_error: no value supplied for the key keyword :b
(defn opts2 [x & {:keys [a]}] a)
(opts2 0 1 2 3)
;!! destructure_error: no value supplied for the key integer 3
;@ 1:18
;; A trailing map after the pairs is merged in, as in Clojure 1.11.
((fn [& {:keys [a b]}] [a b]) :a 1 {:b 2})
;=> [1 2]
(for [[k v] {:a 1 :b 2}] [v k])
;=> [[1 :a] [2 :b]]
(doseq [{:keys [id]} [{:id 1} {:id 2}]] (println id))
;>> 1
;>> 2
;=> nil
(let [[a :as] [1]] a)
;!! invalid_form: :as
(let [{:keys a} {}] a)
;!! invalid_form: vector of names
(let [5 1] 5)
;!! invalid_form: binding form
;; Only :as may follow the & binding, as in Clojure: [a & r last] does not bind last to an element.
(let [[a & r last] [1 2 3 4]] last)
;!! invalid_form: only :as can follow the & binding
;@ 1:14
(defn f [[x & xs y]] y)
;!! invalid_form: only :as can follow the & binding
(let [[a & r :as all] [1 2]] [r all])
;=> [[2] [1 2]]
;; As in Clojure, a map pattern's :as is bound before its keys: an :or default may read it,
;; and a key of the same name wins.
(let [{:keys [a] :or {a (count m)} :as m} {:b 1}] a)
;=> 1
(let [{:keys [m] :as m} {:m 5}] m)
;=> 5
;; :as in a vector pattern binds the value given, as Clojure does, not its elements.
(let [[a :as all] "xy"] [a all])
;=> ["x" "xy"]
((fn [[c :as s]] (str (upper-case c) (subs s 1))) "hello")
;=> "Hello"
(loop [[a & r :as all] "ab" n 0] (if (< n 1) (recur all (inc n)) [a r all]))
;=> ["a" ["b"] "ab"]
(let [[[k v] :as m] {:a 1}] [k v m])
;=> [:a 1 {:a 1}]
(let [[a :as all] nil] [a all])
;=> [nil nil]
(let [[a :as all] [1 2]] all)
;=> [1 2]
