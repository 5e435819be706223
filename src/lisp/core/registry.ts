// The one registry of builtins. Each builtin declares its name, namespace, area, arity,
// docstring and examples here; the analyzer resolves names through it, the prompt's
// language reference is generated from it, and its examples run as tests.
import { LispError } from "../errors.js";
import { Fn, type Value } from "../values.js";

/** Areas group builtins in docs and in "did you mean" listings. */
export type Area =
  | "arithmetic"
  | "comparison"
  | "logic"
  | "predicates"
  | "collections"
  | "sequences"
  | "maps"
  | "sets"
  | "strings"
  | "regex"
  | "functions"
  | "aggregates"
  | "trees"
  | "io"
  | "interop"
  | "parallel";

/** Clojure namespaces a builtin can be reached through by a qualified name. */
export type Namespace = "clojure.core" | "clojure.string" | "clojure.set" | "clojure.walk" | "Math" | "Double" | "Integer" | "Long" | "System";

export interface BuiltinDef {
  name: string;
  area: Area;
  /** [min, max] argument counts; max may be Infinity. */
  arity: readonly [number, number];
  /** Parameter list(s) as shown in docs, e.g. "[f coll]" or "[s] [s n]". */
  params: string;
  /** One line for the prompt reference; more lines for the full doc. */
  doc: string;
  /** [source, expected EDN] pairs; each runs as a test. */
  examples?: ReadonlyArray<readonly [string, string]>;
  /** Namespaces it is reachable through besides clojure.core (e.g. clojure.string/join). */
  ns?: readonly Namespace[];
  /** False for variants only reachable qualified (clojure.string/reverse). Default true. */
  unqualified?: boolean;
  /** Other unqualified names for the same builtin (upper-case for upcase). */
  aliases?: readonly string[];
  fn: (args: Value[]) => Value;
  /** Optional fast paths the compiler uses for fixed-argument calls. */
  f1?: (a: Value) => Value;
  f2?: (a: Value, b: Value) => Value;
  /**
   * The builtin as a suspendable program calls it, for builtins that call functions back and
   * must not wait for them one at a time (pmap): a value, or a promise while tools are pending.
   */
  suspendable?: (args: Value[]) => Value | Promise<Value>;
}

export class Builtin extends Fn {
  readonly name: string;
  constructor(readonly def: BuiltinDef) {
    super();
    this.name = def.name;
  }
  call(args: Value[]): Value {
    checkArity(this.def, args.length);
    return this.def.fn(args);
  }
  override paramLists(): string | undefined {
    return this.def.params;
  }
  override call1(a: Value): Value {
    const d = this.def;
    if (d.f1 !== undefined) return d.f1(a);
    checkArity(d, 1);
    return d.fn([a]);
  }
  override call2(a: Value, b: Value): Value {
    const d = this.def;
    if (d.f2 !== undefined) return d.f2(a, b);
    checkArity(d, 2);
    return d.fn([a, b]);
  }
}

export function arityText(arity: readonly [number, number]): string {
  const [min, max] = arity;
  if (min === max) return `${min} argument${min === 1 ? "" : "s"}`;
  if (max === Infinity) return `at least ${min} argument${min === 1 ? "" : "s"}`;
  if (max === min + 1) return `${min} or ${max} arguments`;
  return `${min} to ${max} arguments`;
}

export function arityError(name: string, arity: readonly [number, number], got: number): LispError {
  return new LispError("arity_error", `${name} expects ${arityText(arity)}, got ${got}`);
}

function checkArity(def: BuiltinDef, n: number): void {
  if (n < def.arity[0] || n > def.arity[1]) throw arityError(def.name, def.arity, n);
}

interface Entry {
  def: BuiltinDef;
  value: Builtin;
}

const byName = new Map<string, Entry>();
const byNamespace = new Map<Namespace, Map<string, Entry>>();
const ordered: Entry[] = [];

/** Registers a group of builtins. Names must be unique; a clash is a programming error. */
export function defineBuiltins(defs: readonly BuiltinDef[]): void {
  for (const def of defs) {
    const entry: Entry = { def, value: new Builtin(def) };
    ordered.push(entry);
    if (def.unqualified !== false) {
      for (const n of [def.name, ...(def.aliases ?? [])]) {
        if (byName.has(n)) throw new Error(`builtin ${n} registered twice`);
        byName.set(n, entry);
      }
    }
    for (const ns of ["clojure.core" as const, ...(def.ns ?? [])]) {
      if (ns === "clojure.core" && def.unqualified === false) continue;
      let table = byNamespace.get(ns);
      if (!table) byNamespace.set(ns, (table = new Map()));
      for (const n of [def.name, ...(def.aliases ?? [])]) table.set(n, entry);
    }
  }
}

export function lookupBuiltin(name: string): Builtin | undefined {
  return byName.get(name)?.value;
}

export function isBuiltinName(name: string): boolean {
  return byName.has(name);
}

/** Clojure namespace aliases LLMs use, mapped to the namespace they mean. */
export const NAMESPACE_ALIASES: Readonly<Record<string, Namespace>> = {
  "clojure.core": "clojure.core",
  core: "clojure.core",
  "clojure.string": "clojure.string",
  str: "clojure.string",
  string: "clojure.string",
  s: "clojure.string",
  "clojure.set": "clojure.set",
  set: "clojure.set",
  "clojure.walk": "clojure.walk",
  walk: "clojure.walk",
  Math: "Math",
  math: "Math",
  "java.lang.Math": "Math",
  Double: "Double",
  Integer: "Integer",
  Long: "Long",
  System: "System",
};

export function lookupQualified(ns: Namespace, name: string): Builtin | undefined {
  return byNamespace.get(ns)?.get(name)?.value;
}

export function namespaceNames(ns: Namespace): string[] {
  return [...(byNamespace.get(ns)?.keys() ?? [])].sort();
}

export function allBuiltins(): readonly BuiltinDef[] {
  return ordered.map((e) => e.def);
}
