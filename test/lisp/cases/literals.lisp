;; Reader: literals and their printed forms.
nil
;=> nil
true
;=> true
42
;=> 42
-17
;=> -17
3.14
;=> 3.14
5.0
;=> 5.0
1e3
;=> 1000.0
0x1F
;=> 31
;; Radix integers, as Clojure reads them: radix 2 to 36, r or R, digits of either case.
[2r101 16rFF -16rff 36rZz 8R17 +2r0]
;=> [5 255 -255 1295 15 0]
2r102
;!! parse_error: invalid number 2r102: 2 is not a digit in radix 2
;@ 1:1
[1 37r1]
;!! parse_error: invalid number 37r1: the radix must be from 2 to 36
;@ 1:4
;; The radix is one or two digits without a leading zero (Clojure refuses 02r101 and 123r1).
02r101
;!! parse_error: invalid number 02r101
;@ 1:1
123r1
;!! parse_error: invalid number 123r1
;@ 1:1
36rZZZZZZZZZZZZZZZZ
;!! parse_error: is out of range
##Inf
;=> ##Inf
##-Inf
;=> ##-Inf
##NaN
;=> ##NaN
"line\nbreak \"quoted\" \\ \u0041"
;=> "line\nbreak \"quoted\" \\ A"
"multi
line"
;=> "multi\nline"
\a
;=> "a"
\newline
;=> "\n"
;; A character literal is one token, as in Clojure: \a1 is not \a followed by 1.
[\a\b \( \) \1 \u0041 \o101 \o \u \space]
;=> ["a" "b" "(" ")" "1" "A" "A" "o" "u" " "]
[\a1]
;!! parse_error: unsupported character literal \a1
;@ 1:2
(str \spce)
;!! parse_error: unsupported character literal \spce
;@ 1:6
[\u00411 \o400]
;!! parse_error: unsupported character literal \u00411
:keyword
;=> :keyword
[1 "two" :three [4]]
;=> [1 "two" :three [4]]
{:a 1, :b 2}
;=> {:a 1 :b 2}
#{1}
;=> #{1}
#"\d+"
;=> #"\d+"
[1 #_ 2 3]
;=> [1 3]
[#_ #_ 1 2 3]
;=> [3]
[#_ #_ 1 #_ 2 3 4]
;=> [4]
[1 #_ 2]
;=> [1]
; a comment
7 ; trailing comment
;=> 7
,,, 8 ,,,
;=> 8
'(1 2 3)
;!! parse_error: use a vector
@x
;!! parse_error: no atoms
1/2
;!! parse_error: (/ 1 2)
::kw
;!! parse_error: plain keyword
#inst "2024"
;!! parse_error: tagged literal
[1 #_]
;!! parse_error: no form follows it
^String x
;!! parse_error: metadata
"bad \q escape"
;!! parse_error: unsupported string escape
99999999999999999999
;!! parse_error: out of range
{:a 1 :b}
;!! parse_error: even number
{:a 1 :a 2}
;!! invalid_form: duplicate key
#{1 1}
;!! invalid_form: duplicate element
#(+ % #(inc %))
;!! parse_error: nested
(inc 41)
;=> 42
(dec 1.5)
;=> 0.5
