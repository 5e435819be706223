// The language reference of the system prompt, generated from the special-form table and
// the builtin registry, so it cannot drift from the runtime: a builtin exists in the prompt
// exactly when it exists in the interpreter.
import { allBuiltins, type Area, type BuiltinDef, DOCUMENTED_SPECIAL_FORMS, type Namespace, STANDARD_CLOJURE, STANDARD_FORMS } from "../../lisp/index.js";

const AREA_TITLES: Readonly<Record<Area, string>> = {
  arithmetic: "Arithmetic",
  comparison: "Comparison",
  logic: "Logic",
  predicates: "Predicates",
  collections: "Collections",
  sequences: "Sequences",
  maps: "Maps",
  sets: "Sets",
  strings: "Strings",
  regex: "Regular expressions",
  functions: "Functions",
  aggregates: "Aggregates",
  trees: "Trees",
  io: "Output",
  interop: "Interop",
  parallel: "Parallel tool calls",
};

/** How a builtin reachable only through a namespace is written. */
const NS_PREFIX: Readonly<Record<Namespace, string>> = {
  "clojure.core": "",
  "clojure.string": "str/",
  "clojure.set": "set/",
  "clojure.walk": "walk/",
  Math: "Math/",
  Double: "Double/",
  Integer: "Integer/",
  Long: "Long/",
  System: "System/",
};

const firstLine = (s: string): string => {
  const i = s.indexOf("\n");
  return i < 0 ? s : s.slice(0, i);
};

/** Internal helpers the compiler calls (named with a leading %) are not part of the language. */
export const isDocumented = (d: BuiltinDef): boolean => !d.name.startsWith("%");

/** The name a program uses for a builtin: `upcase`, or `Math/exp` when only reachable qualified. */
export function referenceName(d: BuiltinDef): string {
  return d.unqualified === false ? NS_PREFIX[d.ns?.[0] ?? "clojure.core"] + d.name : d.name;
}

function builtinLine(d: BuiltinDef): string {
  const aliases = d.aliases && d.aliases.length > 0 ? ` (also ${d.aliases.join(", ")})` : "";
  return `${referenceName(d)} ${d.params}${aliases} - ${firstLine(d.doc)}`;
}

/** Namespaces of Java's static methods: their behaviour is Java's, so a name says enough. */
const JAVA_NAMESPACES: ReadonlySet<Namespace> = new Set(["Integer", "Long", "Double", "System"]);

/**
 * Java interop kept for habit (`.toUpperCase`, `Integer/parseInt`, `Math/exp`, `Exception.`):
 * a model knows what these do, so the reference names them on one line instead of a line
 * each (about 560 tokens of every prompt).
 */
export function isJavaInterop(d: BuiltinDef): boolean {
  const ns = d.ns?.[0];
  return d.area === "interop" || (d.unqualified === false && ns !== undefined && (JAVA_NAMESPACES.has(ns) || ns === "Math"));
}

function shortName(d: BuiltinDef): string {
  const aliases = d.aliases && d.aliases.length > 0 ? `/${d.aliases.join("/")}` : "";
  return referenceName(d) + aliases;
}

/**
 * Builtins that behave as in Clojure are listed by name only (a model knows them); forms
 * and functions that are PTC-Lisp's own, or differ from Clojure, get their parameters and
 * one-line doc. This keeps the static prompt small without hiding anything that exists.
 */
function generate(builtins: readonly BuiltinDef[]): string {
  const forms = Object.entries(DOCUMENTED_SPECIAL_FORMS);
  const out: string[] = [
    "## Special forms",
    `As in Clojure: ${forms.filter(([n]) => STANDARD_FORMS.has(n)).map(([n]) => (n === "#fn" ? "#(... % %2 %&)" : n)).join(" ")}`,
    "for and doseq are eager (:let :when :while); docstrings, multi-arity and & rest work.",
  ];
  for (const [name, form] of forms) if (!STANDARD_FORMS.has(name)) out.push(`${form.syntax} - ${firstLine(form.doc)}`);
  const byArea = new Map<Area, BuiltinDef[]>();
  for (const d of builtins) {
    if (!isDocumented(d)) continue;
    let list = byArea.get(d.area);
    if (list === undefined) byArea.set(d.area, (list = []));
    list.push(d);
  }
  out.push("", "## Functions as in Clojure (sequence results are vectors)");
  const special: BuiltinDef[] = [];
  for (const area of Object.keys(AREA_TITLES) as Area[]) {
    const list = byArea.get(area);
    if (list === undefined) continue;
    const standard = list.filter((d) => STANDARD_CLOJURE.has(d.name));
    if (standard.length > 0) out.push(`${AREA_TITLES[area]}: ${standard.map(shortName).join(" ")}`);
    special.push(...list.filter((d) => !STANDARD_CLOJURE.has(d.name)));
  }
  const java = special.filter(isJavaInterop);
  out.push(`Java interop (dates are ISO-8601 strings, the clock fixed per run; .indexOf also takes a vector; Exception. is ex-info): ${java.map(shortName).join(" ")}`);
  out.push("", "## PTC-Lisp's own, or differing from Clojure");
  // Neighbours sharing parameters and doc (floor ceil round trunc) share a line.
  const own = special.filter((d) => !isJavaInterop(d));
  for (let i = 0; i < own.length; ) {
    let j = i + 1;
    while (j < own.length && own[j].params === own[i].params && own[j].doc === own[i].doc) j++;
    out.push(j === i + 1 ? builtinLine(own[i]) : `${own.slice(i, j).map(referenceName).join(" ")} ${own[i].params} - ${firstLine(own[i].doc)}`);
    i = j;
  }
  return out.join("\n");
}

let cached: { count: number; text: string } | null = null;

/** The generated reference. The registry only grows, so its size identifies its content. */
export function languageReference(): string {
  const builtins = allBuiltins();
  if (cached === null || cached.count !== builtins.length) cached = { count: builtins.length, text: generate(builtins) };
  return cached.text;
}
