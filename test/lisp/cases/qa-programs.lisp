;; QA: whole agent-style programs over JSON data.
(def tickets [{:id "T1" :status "open" :priority "high" :tags ["billing" "urgent"] :created "2024-03-01T10:00:00Z" :assignee {:name "ann"}}
              {:id "T2" :status "closed" :priority "low" :tags ["ui"] :created "2024-03-02T11:30:00Z" :assignee nil}
              {:id "T3" :status "open" :priority "low" :tags ["billing"] :created "2024-02-28T09:15:00Z" :assignee {:name "bob"}}
              {:id "T4" :status "pending" :priority "high" :tags [] :created "2024-03-05T08:00:00Z" :assignee {:name "ann"}}])
(let [open (filter #(= "open" (:status %)) tickets)
      by-tag (frequencies (mapcat :tags tickets))
      unassigned (map :id (remove :assignee tickets))
      per-person (->> tickets (keep #(get-in % [:assignee :name])) frequencies)]
  {:open (count open) :top-tag (key (apply max-key val by-tag)) :unassigned unassigned :per-person per-person})
;=> {:open 2 :top-tag "billing" :unassigned ["T2"] :per-person {"ann" 2 "bob" 1}}
(def tickets [{:id "T1" :created "2024-03-01T10:00:00Z"} {:id "T2" :created "2024-03-02T11:30:00Z"} {:id "T3" :created "2024-02-28T09:15:00Z"}])
(->> tickets (sort-by :created) (map :id))
;=> ["T3" "T1" "T2"]
(def tickets [{:id "T1" :created "2024-03-01T10:00:00Z"} {:id "T2" :created "2024-03-02T11:30:00Z"} {:id "T3" :created "2024-02-28T09:15:00Z"}])
(->> tickets (group-by #(subs (:created %) 0 7)) (map (fn [[month ts]] [month (count ts)])) (sort-by first) vec)
;=> [["2024-02" 1] ["2024-03" 2]]
(def sales [{:region "north" :amount 120.5 :qty 3} {:region "south" :amount 80 :qty 1} {:region "north" :amount 99.5 :qty 2}])
(->> sales
     (group-by :region)
     (map (fn [[r rows]] {:region r :total (reduce + (map :amount rows)) :qty (reduce + (map :qty rows))}))
     (sort-by :total >))
;=> [{:region "north" :total 220.0 :qty 5} {:region "south" :total 80 :qty 1}]
(def sales [{:region "north" :amount 120.5} {:region "south" :amount 80} {:region "north" :amount 99.5}])
(let [totals (reduce (fn [acc {:keys [region amount]}] (update acc region (fnil + 0) amount)) {} sales)
      grand (reduce + (vals totals))]
  (into {} (map (fn [[k v]] [k (Math/round (* 100.0 (/ v grand)))]) totals)))
;=> {"north" 73 "south" 27}
(def log-lines ["2024-01-01 ERROR db timeout" "2024-01-01 INFO started" "2024-01-02 ERROR db timeout" "2024-01-02 WARN slow query" "2024-01-03 ERROR auth failed"])
(->> log-lines
     (map #(str/split % #" " 3))
     (filter (fn [[_ level _]] (= level "ERROR")))
     (map last)
     frequencies
     (sort-by (fn [[msg n]] [(- n) msg]))
     first)
;=> ["db timeout" 2]
(def log-lines ["2024-01-01 ERROR db timeout" "2024-01-01 INFO started" "2024-01-02 WARN slow"])
(for [line log-lines
      :let [[date level & words] (str/split line #"\s+")]
      :when (not= level "INFO")]
  {:date date :level (keyword (str/lower-case level)) :msg (str/join " " words)})
;=> [{:date "2024-01-01" :level :error :msg "db timeout"} {:date "2024-01-02" :level :warn :msg "slow"}]
(def csv "name,age,city\nAnn,31,Oslo\nBob,25,Rome\n")
(let [[header & rows] (str/split-lines csv)
      ks (map keyword (str/split header #","))]
  (map #(zipmap ks (str/split % #",")) rows))
;=> [{:name "Ann" :age "31" :city "Oslo"} {:name "Bob" :age "25" :city "Rome"}]
(def csv "name,age\nAnn,31\nBob,25")
(let [rows (->> (str/split-lines csv) rest (map #(str/split % #",")))]
  (->> rows (map (fn [[n a]] {:name n :age (parse-long a)})) (filter #(> (:age %) 30)) (map :name)))
;=> ["Ann"]
(def products [{:sku "A" :price 10.0 :stock 0} {:sku "B" :price 25.5 :stock 4} {:sku "C" :price 5.25 :stock 10}])
(let [in-stock (filter (comp pos? :stock) products)
      value (reduce + (map #(* (:price %) (:stock %)) in-stock))]
  (format "%d SKUs in stock worth $%.2f" (count in-stock) value))
;=> "2 SKUs in stock worth $154.50"
(def products [{:sku "A" :price 10.0} {:sku "B" :price 25.5} {:sku "C" :price 5.25}])
(let [prices (map :price products)]
  {:min (apply min prices) :max (apply max prices) :avg (/ (reduce + prices) (count prices))})
;=> {:min 5.25 :max 25.5 :avg 13.583333333333334}
(def events [{:user "u1" :type "click"} {:user "u2" :type "view"} {:user "u1" :type "view"} {:user "u1" :type "click"}])
(->> events
     (group-by :user)
     (map (fn [[u es]] [u (frequencies (map :type es))]))
     (into {}))
;=> {"u1" {"click" 2 "view" 1} "u2" {"view" 1}}
(def events [{:user "u1" :ts 5} {:user "u2" :ts 3} {:user "u1" :ts 9}])
(-> (group-by :user events) (update-vals #(apply max (map :ts %))))
;=> {"u1" 9 "u2" 3}
(def tree {:name "root" :children [{:name "a" :children [{:name "a1" :children []}]} {:name "b" :children []}]})
(defn names [node] (cons (:name node) (mapcat names (:children node))))
(names tree)
;=> ["root" "a" "a1" "b"]
(def tree {:name "root" :children [{:name "a" :children [{:name "a1"}]} {:name "b"}]})
(map :name (tree-seq :children :children tree))
;=> ["root" "a" "a1" "b"]
(def tree {:name "root" :children [{:name "a" :children [{:name "a1"}]} {:name "b"}]})
(defn depth [n] (if (seq (:children n)) (inc (apply max (map depth (:children n)))) 1))
(depth tree)
;=> 3
(def matrix [[1 2 3] [4 5 6]])
(apply map vector matrix)
;=> [[1 4] [2 5] [3 6]]
(def matrix [[1 2 3] [4 5 6]])
(mapv #(reduce + %) matrix)
;=> [6 15]
(def words ["apple" "banana" "avocado" "blueberry" "cherry"])
(->> words (group-by first) (map (fn [[k v]] [k (count v)])) (sort-by second >) first)
;=> ["a" 2]
(def words ["apple" "banana" "avocado"])
(into (sorted-map) (map (juxt identity count) words))
;=> {"apple" 5 "avocado" 7 "banana" 6}
(def resp {:status 200 :body {:results [{:title "A" :score 0.9} {:title "B" :score 0.4} {:title "C" :score 0.75}] :next nil}})
(let [{{:keys [results next]} :body} resp]
  {:titles (->> results (filter #(>= (:score %) 0.5)) (map :title)) :more? (some? next)})
;=> {:titles ["A" "C"] :more? false}
(def resp {"data" {"items" [{"id" 1 "name" "x"} {"id" 2 "name" "y"}]}})
(map #(get % "name") (get-in resp ["data" "items"]))
;=> ["x" "y"]
(def resp {"data" {"items" [{"id" 1 "name" "x"} {"id" 2 "name" "y"}]}})
(map :name (get-in resp [:data :items]))
;=> ["x" "y"]
(def nums [3 8 1 9 4])
(let [sorted (sort nums) n (count sorted)]
  (if (odd? n) (nth sorted (quot n 2)) (/ (+ (nth sorted (dec (quot n 2))) (nth sorted (quot n 2))) 2)))
;=> 4
(def nums [3 8 1 9])
(let [mean (/ (reduce + nums) (count nums))
      variance (/ (reduce + (map #(Math/pow (- % mean) 2) nums)) (count nums))]
  [mean (Math/sqrt variance)])
;=> [5.25 3.344772040064913]
(def pages [{:n 1 :items [1 2]} {:n 2 :items [3]} {:n 3 :items []}])
(loop [ps pages acc []] (if-let [p (first ps)] (if (empty? (:items p)) acc (recur (rest ps) (into acc (:items p)))) acc))
;=> [1 2 3]
(defn percent [part total] (if (zero? total) 0.0 (* 100.0 (/ part total))))
(percent 1 3)
;=> 33.33333333333333
(defn percent [part total] (if (zero? total) 0.0 (* 100.0 (/ part total))))
(format "%.1f%%" (percent 1 3))
;=> "33.3%"
(def emails ["ann@x.com" "bad-email" "bob@y.org"])
(->> emails (filter #(re-matches #"[^@]+@[^@]+\.\w+" %)) (map #(second (str/split % #"@"))))
;=> ["x.com" "y.org"]
(def text "The quick brown fox. The lazy dog! A fox?")
(->> (str/split (str/lower-case text) #"\W+") (remove str/blank?) frequencies (filter #(> (val %) 1)) (into {}))
;=> {"the" 2 "fox" 2}
(def orders [{:id 1 :items [{:sku "a" :qty 2 :price 3.0} {:sku "b" :qty 1 :price 10.0}]} {:id 2 :items [{:sku "a" :qty 5 :price 3.0}]}])
(->> orders (mapcat :items) (group-by :sku) (map (fn [[sku xs]] [sku (reduce + (map :qty xs))])) (into {}))
;=> {"a" 7 "b" 1}
(def orders [{:id 1 :items [{:qty 2 :price 3.0} {:qty 1 :price 10.0}]} {:id 2 :items [{:qty 5 :price 3.0}]}])
(map (fn [o] (assoc (select-keys o [:id]) :total (reduce + (map #(* (:qty %) (:price %)) (:items o))))) orders)
;=> [{:id 1 :total 16.0} {:id 2 :total 15.0}]
(def people [{:name "Ann" :langs ["clj" "py"]} {:name "Bob" :langs ["py"]}])
(reduce (fn [idx {:keys [name langs]}] (reduce #(update %1 %2 (fnil conj []) name) idx langs)) {} people)
;=> {"clj" ["Ann"] "py" ["Ann" "Bob"]}
(def a #{1 2 3})
(def b #{2 3 4})
{:only-a (sort (clojure.set/difference a b)) :both (sort (clojure.set/intersection a b))}
;=> {:only-a [1] :both [2 3]}
(def xs [1 2 3 4 5 6 7])
(let [{evens true odds false} (group-by even? xs)] [evens odds])
;=> [[2 4 6] [1 3 5 7]]
(def m {:a 1 :b nil :c 3})
(into {} (remove (comp nil? val) m))
;=> {:a 1 :c 3}
(def m {:a 1 :b nil :c 3})
(reduce-kv (fn [acc k v] (if (nil? v) acc (assoc acc k v))) {} m)
;=> {:a 1 :c 3}
(def rows [[1 "a"] [2 "b"]])
(for [[n s] rows] (apply str (repeat n s)))
;=> ["a" "bb"]
(def xs [5 3 8])
(map-indexed (fn [i x] {:rank (inc i) :value x}) (sort > xs))
;=> [{:rank 1 :value 8} {:rank 2 :value 5} {:rank 3 :value 3}]
(def hist {"a" 3 "b" 1})
(doseq [[k v] (sort-by val > hist)] (println (format "%-3s %s" k (apply str (repeat v "#")))))
;>> a   ###
;>> b   #
;=> nil
(def data {:users [{:id 1 :name "A"}] :posts [{:uid 1 :title "p1"} {:uid 1 :title "p2"} {:uid 2 :title "p3"}]})
(let [by-uid (group-by :uid (:posts data))]
  (map #(assoc % :posts (map :title (get by-uid (:id %) []))) (:users data)))
;=> [{:id 1 :name "A" :posts ["p1" "p2"]}]
(def scores {"ann" [90 80] "bob" [70]})
(into {} (for [[k v] scores] [k (double (/ (reduce + v) (count v)))]))
;=> {"ann" 85.0 "bob" 70.0}
(def s "a1b2c3")
(reduce + (map #(parse-long (str %)) (filter #(Character/isDigit %) s)))
;!! unbound_var: Character
(def s "a1b2c3")
(reduce + (keep #(parse-long (str %)) s))
;=> 6
(def dates ["2024-01-15" "2023-12-01" "2024-02-10"])
(last (sort dates))
;=> "2024-02-10"
(def data [{:k "x" :v 1} {:k "y" :v 2}])
(str/join "\n" (map (fn [{:keys [k v]}] (str k ": " v)) data))
;=> "x: 1\ny: 2"
(def n 12345)
(->> (str n) (map str) (map parse-long) (reduce +))
;=> 15
(->> data/orders (map :total) (map #(* 1.1 %)) (map #(Math/round %)))
;=> [11 28]
(->> data/orders (map :total) (map #(/ (Math/round (* % 1.1 100)) 100.0)))
;=> [11.0 27.5]
(let [total (sum-by :total data/orders) n (count data/orders)] (str "avg=" (/ total n)))
;=> "avg=17.5"
(into [] (filter odd?) [1 2 3])
;=> [1 3]
(transduce (map inc) + [1 2])
;=> 5
(sequence [1 2])
;=> [1 2]
(def emps [{:name "A" :dept "x" :salary 100} {:name "B" :dept "x" :salary 300} {:name "C" :dept "y" :salary 200} {:name "D" :dept "y" :salary 50} {:name "E" :dept "x" :salary 200}])
(->> emps (group-by :dept) (map (fn [[d es]] [d (map :name (take 2 (sort-by :salary > es)))])) (into {}))
;=> {"x" ["B" "E"] "y" ["C" "D"]}
(def emps [{:name "A" :dept "x" :salary 100} {:name "B" :dept "x" :salary 300} {:name "C" :dept "y" :salary 200}])
(for [[dept es] (group-by :dept emps)
      :let [total (reduce + (map :salary es))]]
  (format "%s: %d (%d people)" dept total (count es)))
;=> ["x: 400 (2 people)" "y: 200 (1 people)"]
(def xs [1 2 3 4 5])
(reductions + xs)
;=> [1 3 6 10 15]
(def xs [3 5 2 8 6])
(map (fn [[a b]] (- b a)) (partition 2 1 xs))
;=> [2 -3 6 -2]
(def xs [1 2 3 4 5 6])
(map #(/ (reduce + %) (count %)) (partition 3 1 xs))
;=> [2.0 3.0 4.0 5.0]
(def temps [{:day 1 :t 20} {:day 2 :t 25} {:day 3 :t 18}])
(:day (apply max-key :t temps))
;=> 2
(def users [{:id 1 :name "Ann"} {:id 2 :name "Bob"}])
(def orders [{:uid 1 :amt 5} {:uid 1 :amt 7} {:uid 3 :amt 1}])
(let [by-id (into {} (map (juxt :id identity) users))]
  (for [o orders :let [u (by-id (:uid o))]] (assoc o :name (:name u "unknown"))))
;=> [{:uid 1 :amt 5 :name "Ann"} {:uid 1 :amt 7 :name "Ann"} {:uid 3 :amt 1 :name "unknown"}]
(def sales [{:month "jan" :prod "a" :n 1} {:month "jan" :prod "b" :n 2} {:month "feb" :prod "a" :n 3}])
(reduce (fn [acc {:keys [month prod n]}] (assoc-in acc [month prod] n)) {} sales)
;=> {"jan" {"a" 1 "b" 2} "feb" {"a" 3}}
(def ages [5 17 23 41 67 35 12])
(->> ages (group-by #(* 10 (quot % 10))) (map (fn [[b xs]] [b (count xs)])) (sort-by first))
;=> [[0 1] [10 2] [20 1] [30 1] [40 1] [60 1]]
(def nested {:a {:b {:c 1 :d 2}} :e 3})
(defn flatten-keys [m prefix] (mapcat (fn [[k v]] (let [p (if prefix (str prefix "." (name k)) (name k))] (if (map? v) (flatten-keys v p) [[p v]]))) m))
(into {} (flatten-keys nested nil))
;=> {"a.b.c" 1 "a.b.d" 2 "e" 3}
(def s "aaabccdddd")
(->> s (partition-by identity) (map #(str (first %) (count %))) (apply str))
;=> "a3b1c2d4"
(def s "hello world")
(->> s frequencies (filter #(> (val %) 1)) (map key) sort)
;=> ["l" "o"]
(def s "hello world")
(->> s (remove #{\space}) frequencies (apply max-key val) key)
;=> "l"
(def words ["level" "hello" "racecar"])
(filter #(= % (str/reverse %)) words)
;=> ["level" "racecar"]
(def words ["listen" "silent" "enlist" "google"])
(->> words (group-by sort) vals (filter #(> (count %) 1)))
;=> [["listen" "silent" "enlist"]]
(def text "Contact: ann@x.com, bob@y.org; phone 555-1234")
{:emails (re-seq #"[\w.]+@[\w.]+\.\w+" text) :phones (re-seq #"\d{3}-\d{4}" text)}
;=> {:emails ["ann@x.com" "bob@y.org"] :phones ["555-1234"]}
(def url "https://api.example.com/v1/users?id=42&sort=asc")
(let [[_ query] (str/split url #"\?")]
  (into {} (map #(let [[k v] (str/split % #"=")] [(keyword k) v]) (str/split query #"&"))))
;=> {:id "42" :sort "asc"}
(def path "/a/b/c.txt")
(last (str/split path #"/"))
;=> "c.txt"
(def fname "report.final.pdf")
(subs fname (inc (str/last-index-of fname ".")))
;=> "pdf"
(def ts "2024-03-15T10:30:00Z")
(let [[date time] (str/split ts #"T")] {:date date :hour (parse-long (subs time 0 2))})
;=> {:date "2024-03-15" :hour 10}
(def ts ["2024-03-15T10:30:00Z" "2024-03-14T09:00:00Z"])
(compare (first ts) (second ts))
;=> 1
(def price "$1,234.50")
(parse-double (str/replace price #"[$,]" ""))
;=> 1234.5
(def m {:b 2 :a 1 :c 3})
(str/join ", " (for [[k v] (sort m)] (str (name k) "=" v)))
;=> "a=1, b=2, c=3"
(def rows [["Ann" 31] ["Bob" 5]])
(str/join "\n" (map (fn [[n a]] (format "%-5s|%3d" n a)) rows))
;=> "Ann  | 31\nBob  |  5"
(def items [{:name "pen" :qty 3 :price 1.5} {:name "book" :qty 1 :price 12.0}])
(let [lines (map #(format "%s x%d = %.2f" (:name %) (:qty %) (* (:qty %) (:price %))) items)
      total (reduce + (map #(* (:qty %) (:price %)) items))]
  (str/join "\n" (conj (vec lines) (format "TOTAL %.2f" total))))
;=> "pen x3 = 4.50\nbook x1 = 12.00\nTOTAL 16.50"
(def xs [4 8 15 16 23 42])
(let [n (count xs) mean (/ (reduce + xs) n) sorted (sort xs)]
  {:mean mean :median (/ (+ (nth sorted (dec (quot n 2))) (nth sorted (quot n 2))) 2) :range (- (last sorted) (first sorted))})
;=> {:mean 18.0 :median 15.5 :range 38}
(def xs [1 2 3 4 5 6 7 8 9 10])
(let [[a b] (split-at (quot (count xs) 2) xs)] [(reduce + a) (reduce + b)])
;=> [15 40]
(def graph {:a [:b :c] :b [:d] :c [:d] :d []})
(loop [queue [:a] seen #{:a} order []]
  (if (empty? queue) order
    (let [n (first queue) nbrs (remove seen (graph n))]
      (recur (into (vec (rest queue)) nbrs) (into seen nbrs) (conj order n)))))
;=> [:a :b :c :d]
(def graph {:a [:b] :b [:c] :c []})
(defn reachable [g start] (loop [stack [start] seen #{}] (if-let [n (peek stack)] (if (seen n) (recur (pop stack) seen) (recur (into (pop stack) (g n)) (conj seen n))) seen)))
(sort (reachable graph :a))
;=> [:a :b :c]
(def deps {"app" ["lib" "util"] "lib" ["util"] "util" []})
(defn depth [d k] (if (empty? (deps k)) 0 (inc (apply max (map #(depth d %) (deps k))))))
(into {} (map (juxt identity #(depth deps %)) (keys deps)))
;=> {"app" 2 "lib" 1 "util" 0}
(def xs [1 2 3 4])
(for [x xs y xs :when (< x y) :when (= 5 (+ x y))] [x y])
;=> [[1 4] [2 3]]
(def m {:a 1 :b 2})
(reduce-kv (fn [acc k v] (conj acc (str (name k) v))) [] m)
;=> ["a1" "b2"]
(def inv {:apples 5 :pears 0 :kiwis 2})
(->> inv (filter (fn [[_ n]] (zero? n))) (map first))
;=> [:pears]
(def data {:results [{:id 1 :tags ["a"]} {:id 2 :tags ["a" "b"]} {:id 3 :tags []}]})
(->> (:results data) (filter #(some #{"b"} (:tags %))) (map :id))
;=> [2]
(def data {:results [{:id 1 :tags ["a"]} {:id 2 :tags ["a" "b"]} {:id 3 :tags []}]})
(->> (:results data) (map #(update % :tags count)) (sort-by :tags >) first :id)
;=> 2
(def data {:results [{:id 1 :score nil} {:id 2 :score 3} {:id 3 :score 5}]})
(->> (:results data) (keep :score) (reduce + 0))
;=> 8
(def data {:results [{:id 1 :score nil} {:id 2 :score 3}]})
(map #(update % :score (fnil inc 0)) (:results data))
;=> [{:id 1 :score 1} {:id 2 :score 4}]
(def data {:results [{:id 1 :score nil} {:id 2 :score 3}]})
(map #(or (:score %) 0) (:results data))
;=> [0 3]
(def config {:db {:host "localhost" :port 5432}})
(-> config (assoc-in [:db :port] 6543) (update-in [:db :host] str/upper-case) (get :db))
;=> {:host "LOCALHOST" :port 6543}
(def m {:a {:x 1} :b {:x 2}})
(update-vals m :x)
;=> {:a 1 :b 2}
(def m {"k1" 1 "k2" 2})
(update-keys m keyword)
;=> {:k1 1 :k2 2}
(def v [:a :b :c :d])
(vec (concat (subvec v 0 1) (subvec v 2)))
;=> [:a :c :d]
(def v [:a :b :c])
(into [] (map-indexed (fn [i x] (if (= i 1) :X x)) v))
;=> [:a :X :c]
(def v [3 1 2])
(let [idx (first (keep-indexed #(when (= %2 2) %1) v))] idx)
;=> 2
(def v ["a" "b" "c"])
(.indexOf v "b")
;=> 1
(.indexOf [{:id 1} {:id 2}] {:id 2})
;=> 1
(.indexOf [1 2 3] 9)
;=> -1
(def xs [[1 2] [3 4] [5]])
(reduce into [] xs)
;=> [1 2 3 4 5]
(def xs [[1 2] [3 4]])
(apply concat xs)
;=> [1 2 3 4]
(def xs ["b" "a" "c"])
(sort-by identity #(compare %2 %1) xs)
;=> ["c" "b" "a"]
(def xs [{:n "b" :p 1} {:n "a" :p 1} {:n "c" :p 2}])
(map :n (sort-by (juxt (comp - :p) :n) xs))
;=> ["c" "a" "b"]
(def kvs [[:a 1] [:b 2] [:a 3]])
(reduce (fn [m [k v]] (update m k (fnil conj []) v)) {} kvs)
;=> {:a [1 3] :b [2]}
(def s "The Quick Brown")
(apply str (map first (str/split s #" ")))
;=> "TQB"
(def s "snake_case_name")
(let [[h & t] (str/split s #"_")] (apply str h (map str/capitalize t)))
;=> "snakeCaseName"
(def s "CamelCaseString")
(str/lower-case (str/replace s #"([a-z])([A-Z])" "$1_$2"))
;=> "camel_case_string"
(def s "  padded  ")
[(count s) (count (str/trim s))]
;=> [10 6]
(def n 1234567.891)
(format "%,.2f" n)
;=> "1,234,567.89"
(def secs 3725)
(format "%02d:%02d:%02d" (quot secs 3600) (quot (mod secs 3600) 60) (mod secs 60))
;=> "01:02:05"
(def bytes 1536000)
(format "%.1f MB" (/ bytes 1024.0 1024.0))
;=> "1.5 MB"
(def xs [1 2 3])
(str "[" (str/join ", " xs) "]")
;=> "[1, 2, 3]"
(def xs (range 1 21))
(->> xs (filter #(zero? (mod % 3))) (map #(* % %)) (take 3))
;=> [9 36 81]
(def fizz (fn [n] (cond (zero? (mod n 15)) "FizzBuzz" (zero? (mod n 3)) "Fizz" (zero? (mod n 5)) "Buzz" :else (str n))))
(map fizz (range 1 16))
;=> ["1" "2" "Fizz" "4" "Buzz" "Fizz" "7" "8" "Fizz" "Buzz" "11" "Fizz" "13" "14" "FizzBuzz"]
(defn prime? [n] (and (> n 1) (not-any? #(zero? (mod n %)) (range 2 (inc (int (Math/sqrt n)))))))
(filter prime? (range 20))
;=> [2 3 5 7 11 13 17 19]
(defn gcd [a b] (if (zero? b) a (recur b (mod a b))))
(gcd 48 18)
;=> 6
(def xs [5 3 9 1])
(loop [xs xs mx Long/MIN_VALUE] (if (empty? xs) mx (recur (rest xs) (max mx (first xs)))))
;=> 9
(def m {:a 1})
(if (contains? m :a) "has a" "no a")
;=> "has a"
(def results (pmap (fn [x] (* x x)) [1 2 3]))
results
;=> [1 4 9]
(def r (pcalls (fn [] 1) (fn [] 2)))
r
;=> [1 2]
(filter (where :total > 15) data/orders)
;=> [{:id 2 :total 25}]
(def x 5)
(return {:answer x})
;=> {:answer 5}
(println "step 1")
(def a 10)
(println "a is" a)
(* a 2)
;>> step 1
;>> a is 10
;=> 20
;; Non-Clojure builtins (sum, avg, pairs, entries, ...) cannot be redefined, but let may shadow them.
(def pairs [[:a 1]])
;!! cannot_shadow_builtin: pick another name
(let [pairs [[:a 1]] sum 3] [(count pairs) sum])
;=> [1 3]
;; Agent forms: where predicates, pluck, early return and fail.
(filter (all-of (where :total > 5) (where :id = 1)) data/orders)
;=> [{:id 1 :total 10}]
(filter (where :name includes "nn") [{:name "Ann"} {:name "Bob"}])
;=> [{:name "Ann"}]
(filter (where [:a :b] = 1) [{:a {:b 1}} {:a {:b 2}}])
;=> [{:a {:b 1}}]
(if (empty? data/orders) (fail "no orders") (return {:n (count data/orders) :ids (pluck :id data/orders)}))
;=> {:n 2 :ids [1 2]}
(defn check [o] (when (> (:total o) 20) (return {:big (:id o)})) o)
(map check data/orders)
:unreached
;=> {:big 2}
