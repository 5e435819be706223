;; QA: string processing as LLM agents write it.
(clojure.string/split "a,b,,c" #",")
;=> ["a" "b" "" "c"]
(str/split "a,b,c," #",")
;=> ["a" "b" "c"]
(str/split "a,b,c,," ",")
;=> ["a" "b" "c"]
(count (str/split "x\ny\n\n" #"\n"))
;=> 2
(str/split ",," #",")
;=> []
(str/split "" #",")
;=> [""]
(str/split "a,," #"," -1)
;=> ["a" "" ""]
;; As Java's Pattern.split: only an empty match at the start makes no piece; one at the end
;; leaves an empty last piece, which a limit of 0 drops.
[(str/split "abc" #"" -1) (str/split "ab" #"$" -1) (str/split "ab\n" #"$" -1) (str/split "a1" #"\d*" -1) (.split "ab" "$" -1) (str/split "abc" #"" 2) (str/split "abc" #"") (str/split "" #"" -1)]
;=> [["a" "b" "c" ""] ["ab" ""] ["ab" "\n" ""] ["a" "" ""] ["ab" ""] ["a" "bc"] ["a" "b" "c"] [""]]
(str/split "a b  c" #"\s+")
;=> ["a" "b" "c"]
(str/split "k=v=w" #"=" 2)
;=> ["k" "v=w"]
(clojure.string/split "a,b" ",")
;=> ["a" "b"]
(str/split-lines "l1\nl2\r\nl3\n")
;=> ["l1" "l2" "l3"]
;; As Clojure: an empty string is one empty line, as (split "" #",") is one empty piece.
(str/split-lines "")
;=> [""]
(str/join ", " ["a" "b" "c"])
;=> "a, b, c"
(str/join ["a" "b"])
;=> "ab"
(str/join "-" [1 :k nil "s"])
;=> "1-:k--s"
(clojure.string/join "," (map :id data/orders))
;=> "1,2"
(str/upper-case "hello")
;=> "HELLO"
(clojure.string/lower-case "HeLLo")
;=> "hello"
(str/capitalize "hELLO world")
;=> "Hello world"
(str/trim "  x y \n")
;=> "x y"
(str/triml "  x ")
;=> "x "
(str/trimr "  x ")
;=> "  x"
(str/blank? "  ")
;=> true
(str/blank? nil)
;=> true
(str/includes? "hello world" "o w")
;=> true
(str/starts-with? "hello" "he")
;=> true
(str/ends-with? "file.json" ".json")
;=> true
(str/replace "a-b-c" "-" "_")
;=> "a_b_c"
(str/replace "a1b22c" #"\d+" "#")
;=> "a#b#c"
(str/replace "John Smith" #"(\w+) (\w+)" "$2, $1")
;=> "Smith, John"
(str/replace-first "aaa" "a" "b")
;=> "baa"
(str/replace "hello" #"l" (fn [m] (str/upper-case m)))
;=> "heLLo"
(str/reverse "abc")
;=> "cba"
(apply str (reverse "abc"))
;=> "cba"
(str/index-of "hello" "l")
;=> 2
(str/index-of "hello" "z")
;=> nil
(str/last-index-of "hello" "l")
;=> 3
(subs "hello world" 6)
;=> "world"
(subs "hello" 1 3)
;=> "el"
(str "a" 1 nil :k 2.5 [1 2] {:a 1})
;=> "a1:k2.5[1 2]{:a 1}"
(str)
;=> ""
(str nil)
;=> ""
(pr-str "a" nil)
;=> "\"a\" nil"
(count "hello")
;=> 5
(format "%s has %d items" "cart" 3)
;=> "cart has 3 items"
(format "%.2f" 3.14159)
;=> "3.14"
(format "%05d" 42)
;=> "00042"
(format "%-5s|" "ab")
;=> "ab   |"
(format "%5.1f%%" 12.345)
;=> " 12.3%"
(format "%x" 255)
;=> "ff"
(format "%,d" 1234567)
;=> "1,234,567"
(format "Total: $%.2f" (/ 35 2))
;=> "Total: $17.50"
(name :foo)
;=> "foo"
(name "s")
;=> "s"
(keyword "abc")
;=> :abc
(keyword "with space")
;=> :with space
(parse-long "42")
;=> 42
(parse-long "4.2")
;=> nil
(parse-long " 42")
;=> nil
(parse-double "4.5")
;=> 4.5
(parse-double "1e3")
;=> 1000.0
(parse-long nil)
;!! type_error: parse-long expects a string, got nil
(parse-long 42)
;!! type_error: it is already a number
(re-find #"\d+" "abc 123 def 45")
;=> "123"
(re-find #"(\w+)@(\w+)\.com" "mail bob@site.com now")
;=> ["bob@site.com" "bob" "site"]
(re-find #"x" "abc")
;=> nil
(re-seq #"\d+" "a1 b22 c333")
;=> ["1" "22" "333"]
(map parse-long (re-seq #"\d+" "a1 b22"))
;=> [1 22]
(re-seq #"(\w)=(\d)" "a=1 b=2")
;=> [["a=1" "a" "1"] ["b=2" "b" "2"]]
(re-matches #"\d{3}-\d{4}" "555-1234")
;=> "555-1234"
(re-matches #"\d+" "12a")
;=> nil
(re-matches #"(\d+)-(\d+)" "10-20")
;=> ["10-20" "10" "20"]
(re-find (re-pattern (str "(?i)" "HELLO")) "say hello")
;=> "hello"
(re-find #"(?i)error" "An ERROR occurred")
;=> "ERROR"
; Java's (?i) folds ASCII letters only; (?u) adds Unicode case, which RE2 would fold always.
(re-find #"(?i)σ" "Σ")
;=> nil
(re-find #"(?iu)σ" "Σ")
;=> "Σ"
(re-find #"(?u)(?i)é+" "ÉéÉ")
;=> "ÉéÉ"
(re-find #"(?i)Straße" "STRASSE STRAẞE STRAßE")
;=> "STRAßE"
(re-find #"(?i)\u03c3" "Σσ")
;=> "σ"
(re-find #"(?i)k" "\u212aK")
;=> "K"
(re-find #"(?iu)k" "\u212aK")
;=> "K"
(re-find #"(?i)(x(?u:é))" "XÉ")
;=> ["XÉ" "XÉ"]
(re-find #"(?iu)a(?-u:é)" "AÉ Aé")
;=> "Aé"
(re-find #"(?i)(?-i:a)b" "Ab aB")
;=> "aB"
(re-find #"(?i)😀+x" "😀😀X")
;=> "😀😀X"
(re-find #"(?i)[σ]" "Σσ")
;=> "σ"
(re-find #"(?i)[^σ]" "σΣ")
;=> "Σ"
(re-find #"(?i)[a-z]+" "\u212aAbc")
;=> "Abc"
(re-find #"(?i)[^a-c]+" "ABCdDk")
;=> "dDk"
(re-find #"(?i)[α-ω]+" "ΑΒγδ")
;=> "γδ"
(re-find #"(?iu)[α-ω]+" "ΑΒγδ")
;=> "ΑΒγδ"
(re-find #"(?i)[x-]+" "X-x")
;=> "X-x"
(re-find #"(?i:[é]+)" "ÉÉé")
;=> "é"
; Escapes too, in a class or not: \w is [a-zA-Z_0-9] (no long s, no Kelvin sign), and a
; character written \xhh, \x{h...} or \uhhhh folds only if it is an ASCII letter.
[(re-find #"(?i)\w" "\u017f\u212a") (re-find #"(?i)[\w]" "\u017f\u212a") (re-find #"(?i)[\w.-]+" "\u212aAb-c.") (re-find #"(?iu)\w+" "\u017fab")]
;=> [nil nil "Ab-c." "ab"]
[(re-find #"(?i)\x{e0}" "\u00c0") (re-find #"(?i)\xe0" "\u00c0\u00e0") (re-find #"(?i)[\x{e0}]" "\u00c0") (re-find #"(?i)[\u00e0-\u00e5]+" "\u00c0\u00e1")]
;=> [nil "à" nil "á"]
[(re-find #"(?i)[\x41-\x43]+" "abcd") (re-find #"(?i)\x6b+" "\u212akK") (re-find #"(?i)[\.k]+" "\u212a.kK") (re-find #"(?i)[^\d\x{e0}]+" "\u00e0\u00c0\u212a1")]
;=> ["abc" "kK" ".kK" "ÀK"]
;; \Q...\E quotes in a class too, and its letters fold as others do.
[(re-find #"[\Q]\E]+" "a]]b") (re-find #"[\Q^a-\E]+" "x-^a-b") (re-find #"(?i)\Qé\E" "Éé") (re-find #"(?i)\Qa.k\E" "A.\u212a A.K") (re-find #"\Q(?i)\E" "(?i)")]
;=> ["]]" "-^a-" "é" "A.K" "(?i)"]
; A flag group inside a group holds to that group's end.
(re-find #"(a(?s).)." "a\nb")
;=> ["a\nb" "a\n"]
(count (re-seq #"\w+" "the quick brown fox"))
;=> 4
(->> (str/split "the cat the dog the end" #" ") frequencies (sort-by val >) first key)
;=> "the"
(->> "Hello World" (filter #(re-matches #"[A-Z]" %)) (apply str))
;=> "HW"
(->> "hello world" (re-seq #"\w+") (map str/capitalize) (str/join " "))
;=> "Hello World"
(str/join "," (map #(format "%s=%s" (name (key %)) (val %)) {:a 1 :b 2}))
;=> "a=1,b=2"
(seq "abc")
;=> ["a" "b" "c"]
(first "abc")
;=> "a"
(vec "ab")
;=> ["a" "b"]
(set "aab")
;=> #{"a" "b"}
(frequencies (str/lower-case "AaB"))
;=> {"a" 2 "b" 1}
(let [s "2024-01-15"] (map parse-long (str/split s #"-")))
;=> [2024 1 15]
(let [[_ y m d] (re-matches #"(\d{4})-(\d{2})-(\d{2})" "2024-01-15")] [y m d])
;=> ["2024" "01" "15"]
(let [line "name: Ann, age: 31"] (into {} (map (fn [kv] (let [[k v] (str/split kv #": ")] [(keyword k) v])) (str/split line #", "))))
;=> {:name "Ann" :age "31"}
(str/includes? (str/lower-case "Error: Disk Full") "error")
;=> true
(filter #(str/includes? % "an") ["banana" "apple" "mango"])
;=> ["banana" "mango"]
(str/join "\n" ["a" "b"])
;=> "a\nb"
(str (subs "abcdefghij" 0 5) "...")
;=> "abcde..."
(subs "abc" 0 10)
;=> "abc"
(apply str (take 5 "abcdefgh"))
;=> "abcde"
(.toUpperCase "abc")
;=> "ABC"
(.length "abc")
;=> 3
(.contains "abc" "b")
;=> true
(.split "a,b" ",")
;=> ["a" "b"]
(.substring "hello" 1 3)
;=> "el"
(.indexOf "hello" "l")
;=> 2
(.startsWith "hello" "h")
;=> true
(.trim " x ")
;=> "x"
(.charAt "abc" 1)
;=> "b"
(.toLowerCase "ABC")
;=> "abc"
(.endsWith "abc" "c")
;=> true
(str/upper-case nil)
;!! type_error
(str/trim nil)
;!! type_error
(str/split nil #",")
;!! type_error
(int "5")
;!! type_error
(re-find #"(\d+)" "no digits")
;=> nil
(second (re-find #"id=(\d+)" "x id=42 y"))
;=> "42"
(some-> (re-find #"id=(\d+)" "x id=42") second parse-long)
;=> 42
(some-> (re-find #"id=(\d+)" "nothing") second parse-long)
;=> nil
(let [words (str/split "a bb ccc" #" ")] (apply max-key count words))
;=> "ccc"
(str/join ", " (sort (map name #{:b :a})))
;=> "a, b"
(str "count: " (count data/orders))
;=> "count: 2"
(str 1.0)
;=> "1.0"
(str (/ 10 4))
;=> "2.5"
(str (/ 10 2))
;=> "5.0"
(str 'sym)
;!! parse_error: quote
(str/starts-with? nil "a")
;!! type_error
(char? \a)
;=> true
(= \a "a")
;=> true
(str \a \b)
;=> "ab"
(compare "apple" "banana")
;=> -1
(sort-by str/lower-case ["b" "A" "c"])
;=> ["A" "b" "c"]
(str/join " " (map str/trim (str/split " a , b " #",")))
;=> "a b"
(format "%d%%" 50)
;=> "50%"
(format "%s" nil)
;=> "nil"
(format "%s" [1 2])
;=> "[1 2]"
(format "%d" 3.5)
;!! value_error: %.2f
(format "%.1f" 2)
;=> "2.0"
;; Java's Formatter refuses a directive its value or its flags do not fit; so does format,
;; rather than print something else. A float with an integer's value passes %d ((/ 10 2) is
;; 5.0), but past ±2^53 or not finite it is no integer: no "1e+300" or "Infinity" for %d.
(format "%d" 1e300)
;!! value_error: %d expects an integer, got float
(format "%d" ##Inf)
;!! value_error: %d expects an integer, got float
(format "%x" -1e20)
;!! value_error: %x expects an integer, got float
[(format "%d" 9007199254740991.0) (format "%d|%x" (/ 10 2) 255.0) (format "%-5d|%05d|%5%|%-3%|" 5 -4)]
;=> ["9007199254740991" "5|ff" "5    |-0004|    %|%  |"]
(format "%-d" 5)
;!! value_error: the flag - in "%-d" needs a width
(format "%0d" 5)
;!! value_error: the flag 0 in "%0d" needs a width
(format "%-s" "a")
;!! value_error: needs a width
(format "%-05d" 5)
;!! value_error: the flags - and 0
(format "%+ d" 5)
;!! value_error: the flags + and space
(format "%--5d" 5)
;!! value_error: the flag - appears twice
(format "%.2d" 5)
;!! value_error: a precision does not apply to %d (in "%.2d")
(format "%.1x" 5)
;!! value_error: precision
(format "%+s" "a")
;!! value_error: the flag + does not apply to %s
(format "%05s" "a")
;!! value_error: the flag 0 does not apply to %s
(format "%,x" 255)
;!! value_error: the flag , does not apply to %x
(format "%,e" 1.5)
;!! value_error: the flag , does not apply to %e
(format "%5n")
;!! value_error: %n takes no width
(format "%8.3f|" 3.14159)
;=> "   3.142|"
(Double/parseDouble "1.5")
;=> 1.5
(map #(try (Double/parseDouble %) (catch NumberFormatException e 0.0)) ["2" "n/a"])
;=> [2.0 0.0]
(Double/parseDouble "n/a")
;!! value_error: parse-double returns nil
