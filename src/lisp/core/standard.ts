// Builtins that behave as the clojure.core (or clojure.string/set/walk) function of the same
// name, apart from the language-wide rules (eager, vectors instead of seqs). The generated
// prompt lists these by name only, since a model already knows them, and spends its words
// on everything that is PTC-Lisp's own. A test checks every name here is registered.
export const STANDARD_CLOJURE: ReadonlySet<string> = new Set([
  // arithmetic and comparison
  "+", "-", "*", "quot", "rem", "mod", "inc", "dec", "abs", "max", "min", "int", "long", "double", "float",
  "zero?", "pos?", "neg?", "even?", "odd?", "=", "not=", "==", "<", ">", "<=", ">=", "compare", "not", "boolean",
  "bit-and", "bit-or", "bit-xor", "bit-not", "bit-and-not", "bit-shift-left", "bit-shift-right", "unsigned-bit-shift-right",
  "bit-test", "bit-set", "bit-clear", "bit-flip",
  // collections and sequences
  "count", "empty?", "not-empty", "seq", "first", "second", "last", "nth", "rest", "next", "butlast", "ffirst", "fnext",
  "nfirst", "nnext", "nthrest", "nthnext", "peek", "pop", "conj", "cons", "list*", "into", "vec", "vector", "empty", "subvec", "contains?",
  "map", "mapv", "map-indexed", "mapcat", "filter", "filterv", "remove", "keep", "keep-indexed", "reduce", "reduce-kv",
  "reductions", "take", "drop", "take-while", "drop-while", "take-last", "drop-last", "split-at", "split-with", "take-nth",
  "distinct", "dedupe", "concat", "flatten", "interleave", "interpose", "partition", "partition-all", "partition-by",
  "reverse", "sort", "sort-by", "group-by", "frequencies", "some", "every?", "not-any?", "not-every?", "doall", "dorun", "run!",
  "rseq", "subseq", "rsubseq", "transduce", "sequence", "eduction", "completing", "cat", "reduced", "reduced?", "unreduced", "ensure-reduced",
  // maps and sets
  "get", "get-in", "assoc", "assoc-in", "update", "update-in", "dissoc", "merge", "merge-with", "select-keys", "keys", "vals",
  "key", "val", "update-vals", "update-keys", "zipmap", "hash-map", "rename-keys", "map-invert", "set", "hash-set", "disj",
  "union", "intersection", "difference", "subset?", "superset?", "select", "index", "project", "rename", "sorted-map", "sorted-map-by", "sorted-set",
  "sorted-set-by", "array-map",
  // strings and regex
  "str", "subs", "join", "split", "split-lines", "upper-case", "lower-case", "trim", "triml", "trimr", "trim-newline", "char", "replace-first", "capitalize", "starts-with?", "ends-with?",
  "includes?", "index-of", "last-index-of", "blank?", "name", "namespace", "keyword", "parse-long", "parse-double", "parse-boolean", "escape",
  "re-pattern", "re-find", "re-matches", "re-seq",
  // functions and predicates
  "identity", "constantly", "comp", "partial", "juxt", "complement", "fnil", "some-fn", "every-pred", "apply", "memoize",
  "ex-info", "ex-message", "ex-data", "nil?", "some?", "true?", "false?", "boolean?", "number?", "integer?", "float?",
  "string?", "keyword?", "simple-keyword?", "qualified-keyword?", "vector?", "map?", "set?", "coll?", "sequential?", "fn?", "ifn?", "any?", "distinct?", "identical?",
  "NaN?", "pos-int?", "neg-int?", "nat-int?", "repeatedly", "assert",
  "max-key", "min-key",
  // trees and output
  "walk", "prewalk", "postwalk", "keywordize-keys", "stringify-keys", "prewalk-replace", "postwalk-replace", "tree-seq",
  "println", "print", "prn", "pr", "pr-str", "prn-str",
]);

/** Special forms that work as in Clojure (for and doseq are eager; both take :let :when :while). */
export const STANDARD_FORMS: ReadonlySet<string> = new Set([
  "def", "defn", "defonce", "fn", "#fn", "let", "if", "if-not", "when", "when-not", "cond", "condp", "case", "do", "and", "or",
  "if-let", "when-let", "if-some", "when-some", "when-first", "loop", "recur", "for", "doseq", "dotimes", "letfn", "with-out-str",
  "->", "->>", "as->", "cond->", "cond->>", "some->", "some->>",
]);
