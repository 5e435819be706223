// Regex builtins on RE2: match shapes (string or [whole groups...]), pattern strings,
// invalid patterns, the pattern and input limits, and extract / extract-int.
import { describe, expect, it } from "vitest";
import { edn as value, errorOf as failure, cases, virtualClock } from "../support/run.js";
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { RE2JS } from "re2js";
import { regexFromString } from "../../src/lisp/regex.js";

describe("re-find, re-matches, re-seq", () => {
  cases([
    ['(re-find (re-pattern "\\\\d+") "v12")', '"12"'],
    ['(re-find #"\\d+" "none")', "nil"],
    ['(re-find #"(\\d+)-(\\d+)" "10-20")', '["10-20" "10" "20"]'],
    ['(re-find #"(a)|(b)" "b")', '["b" nil "b"]'],
    ['(re-find "\\\\w+" "  hi")', '"hi"'],
    ['(re-find #"(?i)abc" "xABC")', '"ABC"'],
    ['(re-find #"\\p{L}+" "héllo wörld")', '"héllo"'],
    ['(re-find #"b" "🍎b")', '"b"'],
    ['(re-matches #"\\d+" "123")', '"123"'],
    ['(re-matches #"\\d+" "123a")', "nil"],
    ['(re-matches #"(\\w+)@(\\w+)" "me@host")', '["me@host" "me" "host"]'],
    ['(re-seq #"\\d+" "a1b22c333")', '["1" "22" "333"]'],
    ['(re-seq #"\\d+" "abc")', "nil"],
    ['(re-seq #"(\\d)(\\w)" "1a2b")', '[["1a" "1" "a"] ["2b" "2" "b"]]'],
    ['(re-seq #"" "ab")', '["" "" ""]'],
    ['(re-split #"\\s*,\\s*" "a , b,c")', '["a" "b" "c"]'],
    ['(re-split (re-pattern "\\\\r?\\\\n") "l1\\nl2\\r\\nl3")', '["l1" "l2" "l3"]'],
    ['(re-split #"," "a,,b,")', '["a" "" "b" ""]'],
    ['(re-split #"," "a,b,c" 2)', '["a" "b,c"]'],
    ['(re-split #"x" "")', '[""]'],
    ['(regex? #"a")', "true"],
    ['(regex? (re-pattern "a"))', "true"],
    ['(regex? "a")', "false"],
    ['(re-find (re-pattern #"a+") "baa")', '"aa"'],
  ]);

  it("reads $ as Java does: also before a last line terminator, and (?m)$ before any (\\r\\n too)", async () => {
    // Text from a tool or a file ends with a newline: RE2's $ matched only at the very end.
    expect(await value('[(re-find #"\\d+$" "total 123\n") (re-find #"(\\d+)$" "x 12\r\n") (re-find #"a$" "a\n\n") (re-find #"^$" "\n") (re-find #"a$|(b)" "xa\n") (re-find #"(?s).*$" "ab\n")]')).toBe('["123" ["12" "12"] nil "" ["a" nil] "ab\\n"]');
    expect(await value('[(re-seq #"(?m)^\\w+$" "ab\r\ncd\r\nef") (re-find #"(?m)^b$" "a\r\nb\r\n") (re-seq #"(?m)\\w+$" "a\u2028b\rc")]')).toBe('[["ab" "cd" "ef"] "b" ["a" "b" "c"]]');
    // Replacing, splitting and counting matches see the same places Java's $ does.
    expect(await value('[(clojure.string/replace "a\nb\n" #"$" "X") (clojure.string/replace "a\r\nb" #"(?m)$" "X") (re-split #"\\d$" "a1\n") (re-seq #"$" "🍎\n") (clojure.string/replace "v1\n" #"(?<d>\\d)$" "[${d}]")]')).toBe('["a\\nbX\\nX" "aX\\r\\nbX" ["a" "\\n"] ["" ""] "v[1]\\n"]');
    // A whole match still ends at the end: the terminator is not part of "a".
    expect(await value('[(re-matches #"a$" "a\n") (re-matches #"a\n$" "a\n") (re-find #"[$]" "a$") (re-find #"a$b|a$" "ab\n")]')).toBe('[nil "a\\n" "$" nil]');
  });

  it("reads (?m)^ as Java does: never at the very end, even after a last newline", async () => {
    // Prefixing each line, or taking each line, saw one more empty line after the last newline.
    expect(await value('[(re-seq #"(?m)^.*$" "a\nb\n") (clojure.string/replace "a\nb\n" #"(?m)^" "> ") (re-find #"(?m)^" "") (re-seq #"(?m)^" "a\n") (re-seq #"(?m)^\\s*$" "a\n\nb\n")]')).toBe('[["a" "b"] "> a\\n> b\\n" nil [""] [""]]');
    // Before the end it is as before; a match that reaches ^ only at the end is no match.
    expect(await value('[(re-find #"(?m)x\n^" "x\n") (re-seq #"(?m)^(\\w)" "ab\ncd") (clojure.string/split "a\nb\n" #"(?m)^") (re-find #"(?m)(^|b)$" "ab\n") (re-seq #"[^a]" "ba\n")]')).toBe('[nil [["a" "a"] ["c" "c"]] ["a\\n" "b\\n"] ["b" "b"] ["b" "\\n"]]');
  });

  it("reads (?m)^ as Java does after each line terminator: \\r, \\u0085, \\u2028 and \\u2029 too, not inside \\r\\n", async () => {
    // Text with old Mac line ends or Unicode line separators was one line to RE2's ^.
    expect(await value('[(re-seq #"(?m)^\\w" "a\rb\u2028c\u2029d\u0085e\r\nf") (clojure.string/replace "a\rb" #"(?m)^" "> ") (re-seq #"(?m)^(\\w+)$" "ab\rcd") (re-seq #"(?m)^" "a\rb") (re-find #"(?m)^" "a\r")]')).toBe('[["a" "b" "c" "d" "e" "f"] "> a\\r> b" [["ab" "ab"] ["cd" "cd"]] ["" ""] ""]');
    // A group around the ^ holds no terminator; between \r and \n is no line start.
    expect(await value('[(re-find #"(?m)(^b)" "a\u2028b") (re-find #"(?m)^\n" "a\r\nb") (re-find #"(?m)x^b" "x\rb") (re-seq #"(?m)^\\w+$" "ab\u2029cd\u0085")]')).toBe('[["b" "b"] nil nil ["ab" "cd"]]');
  });

  it("reads (?m)^ as Java does right after a terminator the last match ended before or took", async () => {
    // After an empty match the search went on one character later, past the \r a ^ there follows.
    expect(await value('[(re-seq #"(?m)^" "a\r\rb") (clojure.string/replace "a\r\rb" #"(?m)^" "> ") (re-seq #"(?m)^\\w*" "a\u2028\u2028b") (re-seq #"(?m)^$" "a\r\r\rb")]')).toBe('[["" "" ""] "> a\\r> \\r> b" ["a" "" "b"] ["" ""]]');
    // After a match that took the terminator, the ^ after it is true.
    expect(await value('[(re-seq #"(?m)\r\r|^\\w" "a\r\rb") (clojure.string/split "a\u0085\u0085b" #"(?m)^") (re-seq #"(?m)^" "a\r\n\r\nb")]')).toBe('[["a" "\\r\\r" "b"] ["a\u0085" "\u0085" "b"] ["" "" ""]]');
  });

  it("reads . as Java does: any character but a line terminator (\\r, \\u0085, \\u2028, \\u2029 too), unless (?s)", async () => {
    // CRLF text: a capture up to the end of the line kept the \r RE2's . matches.
    expect(await value('[(re-find #"Name: (.*)" "Name: Bo\r\nAge: 3") (re-seq #"a.b" "a\rb a\u2028b a\u0085b a\u2029b axb") (re-find #"a[.]b" "a.b") (re-find #"a\\.b" "a.b axb")]')).toBe('[["Name: Bo" "Bo"] ["axb"] "a.b" "a.b"]');
    // (?s) and (?s:...) make . match every character, for the rest of the group or inside it; (?-s) undoes it.
    expect(await value('[(re-find #"(?s)a.b" "a\rb") (re-find #"(?s:a.)b" "a\nb") (re-find #"(?s:a).b" "a\rb") (re-find #"((?s)a.)(.)" "a\r\r") (re-find #"(?s)(?-s:a.)" "a\r") (re-find #"(?is)A.B" "a\rb")]')).toBe('["a\\rb" "a\\nb" nil nil nil "a\\rb"]');
    // An error quotes the pattern as written, not as rewritten for RE2.
    expect((await failure('(re-pattern "a.(b")')).message).toContain('"a.(b"');
  });

  it("reads Java's \\uXXXX escapes and POSIX classes \\p{Alpha}, which RE2 spells \\x{...} and [[:alpha:]]", async () => {
    // A surrogate pair written as two escapes is one character, as Java reads it.
    expect(await value('[(re-find #"[\\u4e00-\\u9fff]+" "ab中文c") (re-find #"\\uD83D\\uDE00" "x😀") (re-find #"\\u0041" "A") (re-find (re-pattern "\\\\u0041+") "xAA")]')).toBe('["中文" "😀" "A" "AA"]');
    expect(await value('[(str/replace "a, b! c?" #"\\p{Punct}" "") (re-find #"\\p{Alpha}+" "12abc3") (re-find #"[\\p{Upper}\\p{Digit}]+" "abC1D") (re-find #"\\P{Alnum}+" "ab -c") (re-find #"[^\\P{Lower}]+" "ABcd")]')).toBe('["a b c" "abc" "C1D" " -" "cd"]');
    // Quoted and escaped text stays literal; an unknown class is still RE2's error.
    expect(await value('[(re-find #"\\Q\\u0041\\E" "\\\\u0041") (re-find #"\\\\u0041" "\\\\u0041") (re-find #"\\p{L}" "é")]')).toBe('["\\\\u0041" "\\\\u0041" "é"]');
    // A class RE2 does not know is named in the hint, not blamed on backreferences.
    for (const src of ['(re-find #"\\p{IsAlphabetic}+" "a")', '(re-find #"[\\P{javaLowerCase}]" "a")', '(re-find #"\\p{Nope}" "a")']) {
      const e = await failure(src);
      expect(e.kind, src).toBe("regex_error");
      expect(e.hint, src).toContain("\\p{Lu}");
    }
  });

  it("refuses Java's (?U) flag, which RE2 would read as making every repetition lazy", async () => {
    // In Java (?U) widens \\w and \\d to Unicode; RE2's U made (re-seq #"(?U)\\d+" "123 45") ["1" "2" "3" "4" "5"].
    for (const src of ['(re-seq #"(?U)\\d+" "123 45")', '(re-find #"(?iU)a+" "AAA")', '(re-find #"(?U:a+)b" "aab")', '(re-pattern "(?-U)a+")']) {
      const e = await failure(src);
      expect(e.kind, src).toBe("regex_error");
      expect(e.message, src).toContain("(?U)");
      expect(e.hint, src).toContain("\\p{L}");
    }
    // U elsewhere (a named group, a class, an escape) is not a flag.
    expect(await value('[(re-find #"(?<U>a)" "a") (re-find #"[(?U)]+" "U?") (re-find #"\\Q(?U)\\E" "(?U)") (re-find #"(?i)u+" "UU")]')).toBe('[["a" "a"] "U?" "(?U)" "UU"]');
  });

  it("under (?i), a Unicode class's name and a group's name are names, not letters to fold", async () => {
    // Java's (?i) folds ASCII only, so the k and s of a pattern were given their other case for
    // RE2 (which would add the Kelvin sign and the long s): inside \\p{Greek} or (?<sk>...) too,
    // which RE2 then refused (`\\p{Gree(?-i:[kK])}`).
    expect(
      await value('[(re-find #"(?i)\\p{S}" "a+") (re-find #"(?i)\\p{Greek}+" "abγδ") (re-find #"(?i)\\pS" "a+") (re-find #"(?i)\\P{Sk}+" "ab") (re-find #"(?i)(?<sk>k)" "K") (re-find #"(?i)(?P<ks>s)" "S") (re-find #"(?i)k\\p{Ps}" "K(")]'),
    ).toBe('["+" "γδ" "+" "ab" ["K" "K"] ["S" "S"] "K("]');
    // The letters around them still fold as Java's do: k but not the Kelvin sign.
    expect(await value('[(re-find #"(?i)\\p{Greek}k" "γK") (re-find #"(?i)(?<s>k)" "\u212A")]')).toBe('["γK" nil]');
  });

  it("runs pathological patterns in linear time", async () => {
    const r = await evaluate('(re-find #"(a+)+$" data/s)', { ctx: { s: "a".repeat(50_000) + "b" } });
    expect(r.ok).toBe(true);
    if (r.ok) expect(print(r.lisp)).toBe("nil");
  });

  it("rejects invalid patterns with the RE2 hint", async () => {
    for (const src of ['(re-pattern "(a")', '(re-pattern "(?=a)b")', '(re-find "(a)\\\\1" "aa")', '(extract "[" "x")']) {
      const e = await failure(src);
      expect(e.kind, src).toBe("regex_error");
      expect(e.hint, src).toContain("RE2");
    }
  });

  it("rejects Java's nested classes and && intersections, which RE2 would read as literal text", async () => {
    // [a-z&&[^b]] is a-z without b in Java; RE2 reads it as a class of a-z & [ ^ b, then a literal ].
    for (const src of ['(re-find #"[a-z&&[^b]]+" "abc")', '(re-find #"[a-c[x-z]]" "y")', '(re-pattern "[\\\\w&&[^_]]")']) {
      const e = await failure(src);
      expect(e.kind, src).toBe("regex_error");
      expect(e.message, src).toMatch(/nested character classes and && intersections are not supported/);
    }
    // A bracket or & that is escaped, a POSIX class, or a ] first in a class are all fine.
    expect(await value('[(re-find #"[\\[&]+" "x[&&y") (re-find #"[[:alpha:]&]+" "ab&c1") (re-find #"[]a]+" "]a]") (re-find #"a&&b" "a&&b") (re-find #"[^]]+" "ab]") (re-find #"\\Q[a&&b]\\E" "[a&&b]")]')).toBe('["[&&" "ab&c" "]a]" "a&&b" "ab" "[a&&b]"]');
  });

  it("rejects non-regex patterns and non-string inputs, naming the function", async () => {
    const e = await failure('(re-find 1 "a")');
    expect(e.kind).toBe("type_error");
    expect(e.message).toMatch(/^re-find expects a regex/);
    const n = await failure('(re-seq #"a" nil)');
    expect(n.kind).toBe("type_error");
    expect(n.message).toMatch(/^re-seq expects a string/);
    expect(n.hint).toContain("nil");
    expect((await failure('(re-matches #"a" [1])')).kind).toBe("type_error");
    expect((await failure('(re-split #"a" "b" "2")')).kind).toBe("type_error");
  });
});

describe("limits", () => {
  it("limits the length of patterns built at run time", async () => {
    const opts = { ctx: { p: "a".repeat(30) }, limits: { maxRegexPatternLength: 20 } };
    for (const src of ["(re-pattern data/p)", '(re-find data/p "aaa")', '(extract data/p "a")', '(.split "a" data/p)']) {
      const e = await failure(src, opts);
      expect(e.kind, src).toBe("regex_limit_exceeded");
    }
    expect(await value('(re-find (re-pattern (subs data/p 0 20)) "x")', opts)).toBe("nil");
  });

  it("limits the input a regex scans", async () => {
    const opts = { ctx: { s: "b".repeat(100) }, limits: { maxRegexInputLength: 50 } };
    for (const src of ['(re-find #"a" data/s)', '(re-seq #"a" data/s)', '(re-matches #"b+" data/s)', '(split data/s #"a")', '(replace data/s #"b" "c")', '(extract-int #"(\\d)" data/s)', '(.split data/s "a")']) {
      const e = await failure(src, opts);
      expect(e.kind, src).toBe("regex_limit_exceeded");
      expect(e.message, src).toContain("50");
    }
    expect(await value('(re-find #"b+" (subs data/s 0 50))', opts)).toBe(`"${"b".repeat(50)}"`);
  });

  it("limits the number of matches collected", async () => {
    const opts = { ctx: { s: "a".repeat(200) }, limits: { maxCollectionSize: 100 } };
    expect((await failure('(re-seq #"a" data/s)', opts)).kind).toBe("collection_too_large");
    expect((await failure('(re-split #"a" data/s)', opts)).kind).toBe("collection_too_large");
  });

  it("charges fuel for scanning", async () => {
    const e = await failure('(dotimes [_ 1000] (re-find #"x" data/s))', { ctx: { s: "a".repeat(10_000) }, limits: { maxFuel: 1_000_000 } });
    expect(e.kind).toBe("fuel_exhausted");
  });

  it("charges a scan for its characters times the compiled program's size, before it starts", async () => {
    // 13 characters of pattern compile to about 2,000 instructions, and RE2 may step each of them at
    // every character: 1,000 characters cost about 2M steps (minutes for a longer pattern over a
    // longer text, all inside one call, where the clock is not read).
    const opts = { ctx: { s: "a".repeat(1_000) }, limits: { maxFuel: 1_000_000 } };
    for (const src of ['(re-find #"(?:a?){999}b" data/s)', '(re-seq #"(?:a?){999}" data/s)', '(re-matches #"(?:a?){999}" data/s)', '(split data/s #"(?:a?){999}b")', '(replace data/s #"(?:a?){999}b" "")', '(extract #"(?:a?){999}(b)" data/s)', '(.split data/s "(?:a?){999}b")']) {
      const e = await failure(src, opts);
      expect(e.kind, src).toBe("fuel_exhausted");
      expect(e.message, src).toMatch(/regex of \d+ instructions over 1001 characters/);
      expect(e.line, src).toBe(1);
    }
    const r = await evaluate('(re-find #"(?:a?){999}" data/s)', { ctx: opts.ctx, limits: { maxFuel: 3_000_000 } });
    expect(r.ok && r.stats.fuelUsed).toBeGreaterThan(2_000_000);
    expect(await value('(re-find #"\\d+" data/s)', opts)).toBe("nil");
  });

  it("caches compiled pattern strings", () => {
    const a = regexFromString("id=(\\d+)", 100, "test");
    expect(regexFromString("id=(\\d+)", 100, "test")).toBe(a);
    expect(regexFromString("id=(\\d*)", 100, "test")).not.toBe(a);
  });

  it("charges compiling a pattern string its program's size, so a loop of compiles reaches the clock", async () => {
    // Each distinct pattern compiles (6,000 instructions, some milliseconds); 1,000 characters of
    // them compile to 180,000 (half a second), and a loop of 20 took 14 s under a 1 s limit.
    const src = '(let [p (apply str (repeat 3 "(?:a?){999}"))] (dotimes [i 200] (re-pattern (str i p))))';
    const r = await evaluate(src, { clock: virtualClock(100).now, limits: { timeoutMs: 1_000 } });
    expect(r.ok || r.error.kind).toBe("timeout");
    expect(r.stats.fuelUsed).toBeLessThan(200 * 6_000);
    const done = await evaluate('(let [p (apply str (repeat 3 "(?:a?){999}"))] (dotimes [i 3] (re-pattern (str "y" i p))))');
    expect(done.ok && done.stats.fuelUsed).toBeGreaterThan(3 * 6_000);
  });

  it("reads the clock while searches scan past their matches", async () => {
    // Each "\r" found makes RE2 try the rest of the text for an X: every search scans to the end,
    // so a scan charged once for the text took 44.6 s over 40,000 characters, and the clock was
    // read once per 4,096 matches. Counted here: the searches run before a 5 ms limit stops them.
    const matcher = RE2JS.compile("a").matcher("");
    const proto = Object.getPrototypeOf(matcher) as { find: (...args: unknown[]) => boolean };
    const find = proto.find;
    let finds = 0;
    proto.find = function (this: unknown, ...args: unknown[]) {
      finds++;
      return find.apply(this, args);
    };
    try {
      const text = "b\r".repeat(10_000);
      for (const pattern of ["\\r(?:[^!]*X)?|b", "b\\r|\\r[^!]*X|(?m)^q"]) {
        finds = 0;
        const r = await evaluate(`(count (re-seq (re-pattern data/p) data/text))`, { ctx: { text, p: pattern }, clock: virtualClock(1).now, limits: { timeoutMs: 5 } });
        expect(r.ok || r.error.kind).toBe("timeout");
        expect(finds).toBeLessThan(4_096);
      }
    } finally {
      proto.find = find;
    }
  });

  it("caches patterns by the size of their compiled programs, not only their number", () => {
    // 15 x (?:a?){999} is 165 characters and 30,000 instructions, about 5 MB compiled: 256 such
    // patterns (one per run is enough) kept the host's heap over a gigabyte until it ran out.
    const big = (tag: string): string => tag + "(?:a?){999}".repeat(15);
    const first = regexFromString(big("a"), 1_000, "test");
    expect(regexFromString(big("a"), 1_000, "test")).toBe(first);
    regexFromString(big("b"), 1_000, "test");
    regexFromString(big("c"), 1_000, "test");
    expect(regexFromString(big("a"), 1_000, "test")).not.toBe(first);
    // One bigger than the whole cache is compiled each time, never kept.
    const huge = "(?:a?){999}".repeat(35);
    expect(regexFromString(huge, 1_000, "test")).not.toBe(regexFromString(huge, 1_000, "test"));
    const small = regexFromString("id=(\\d+)", 100, "test");
    expect(regexFromString("id=(\\d+)", 100, "test")).toBe(small);
  });
});

describe("extract and extract-int", () => {
  cases([
    ['(extract "ID:(\\\\d+)" "ID:42")', '"42"'],
    ['(extract "ID:(\\\\d+)" "ID:42" 0)', '"ID:42"'],
    ['(extract #"x=(\\d+)\\s+y=(\\d+)" "x=10 y=20" 2)', '"20"'],
    ['(extract #"ID:(\\d+)" "no match")', "nil"],
    ['(extract #"ID:(\\d+)" "ID:42" 5)', "nil"],
    ['(extract #"ID:(\\d+)" "ID:42" -1)', "nil"],
    ['(extract #"ID:\\d+" "ID:42")', "nil"],
    ['(extract #"(a)|(b)" "b" 1)', "nil"],
    ['(->> "Profile ID:99" (extract "ID:(\\\\d+)"))', '"99"'],
    ['(extract-int "age=(\\\\d+)" "age=25")', "25"],
    ['(extract-int #"age=(\\d+)" "none")', "nil"],
    ['(extract-int #"age=(\\d+)" "none" 1 0)', "0"],
    ['(extract-int #"x=(\\d+) y=(\\d+)" "x=10 y=20" 2 0)', "20"],
    ['(extract-int #"x=(\\d+)" "x=10" 5 -1)', "-1"],
    ['(extract-int #"v=(\\w+)" "v=abc" 1 0)', "0"],
    ['(extract-int #"v=(-?\\d+)" "v=-7")', "-7"],
    ['(extract-int #"v=(\\d+)" "v=99999999999999999999" 1 0)', "0"],
    ['(map #(extract-int "ID:(\\\\d+)" %) ["ID:1" "ID:2"])', "[1 2]"],
  ]);

  it("rejects a non-integer group", async () => {
    const e = await failure('(extract #"(a)" "a" "1")');
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("extract expects a group number");
  });
});
