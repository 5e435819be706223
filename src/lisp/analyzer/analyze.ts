// The analyzer (resolver): forms to nodes. Resolves every symbol (local slot, capture,
// global, builtin, context key, tool), expands special forms, checks arity and tail
// position, and performs every sandbox check before anything runs.
import { allBuiltins, arityText, Builtin, lookupBuiltin, lookupQualified, NAMESPACE_ALIASES, namespaceNames, type Namespace } from "../core/registry.js";
import { aboutSource, LispError, type ErrorKind, type SourceLoc } from "../errors.js";
import { describeForm, type Form } from "../forms.js";
import { keyword, LFloat, LMap, LSet, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { noteLiteral } from "../literals.js";
import { compileRegex, sizeOf } from "../regex.js";
import { isSymbolName } from "../reader.js";
import { suggest } from "./suggest.js";
import { shownName } from "../cuts.js";
import type { LocalRef, Node } from "./nodes.js";
import { FnScope, Scope } from "./scope.js";
import { SPECIAL_FORMS } from "./specials/index.js";
import { CLOJURE_HABITS, CLOJURE_ONLY, SYNONYMS } from "./habits.js";

export type ListForm = Extract<Form, { type: "list" }>;

export interface RecurTarget {
  readonly targets: LocalRef[];
  /** A try or a for/doseq body stands between a recur and its loop or fn: recur is refused. */
  readonly what: "loop" | "fn" | "try" | "for" | "doseq";
  used: boolean;
}

/** The recur target inside a form recur cannot jump out of (null stays null: there is no loop). */
export function recurBlockedBy(ctx: Ctx, what: "try" | "for" | "doseq"): RecurTarget | null {
  return ctx.recur === null ? null : { targets: [], what, used: false };
}

/** Where a form is being analyzed: its lexical scope, whether it is in tail position, and the recur target. */
export interface Ctx {
  readonly scope: Scope;
  readonly tail: boolean;
  readonly recur: RecurTarget | null;
}

/** What the analyzer may know about the host. */
export interface AnalyzeEnv {
  readonly source: string;
  /** Names defined in memory or anywhere in this program. */
  readonly globals: Set<string>;
  readonly tools: { has(name: string): boolean; names(): string[] } | null;
  readonly data: { has(key: string): boolean; keys(): string[] } | null;
  readonly maxRegexPatternLength: number;
  /** The nesting limit, for forms that nest when they run though flat in the source (for's clauses). */
  readonly maxNestingDepth: number;
  /** The builtin a program runs in place of each one it names (marking provenance); default: itself. */
  readonly builtins?: (b: Builtin) => Builtin;
  /**
   * Throws when the run's time is up: called after each regex literal is compiled, the one step
   * of analysis whose cost the source's size does not bound (a short pattern can compile to
   * 180,000 instructions, half a second).
   */
  readonly checkClock?: () => void;
}

/** Compiled regex instructions between two reads of the clock in analysis (2,000 compile in a few milliseconds). */
const REGEX_CHECK = 2_000;

const CONSTANTS: Record<string, Value> = {
  "Double/POSITIVE_INFINITY": Infinity,
  "Double/NEGATIVE_INFINITY": -Infinity,
  "Double/NaN": NaN,
  "Double/MAX_VALUE": Number.MAX_VALUE,
  "Double/MIN_VALUE": Number.MIN_VALUE,
  "Math/PI": Math.PI,
  "Math/E": Math.E,
  "Long/MAX_VALUE": Number.MAX_SAFE_INTEGER,
  "Long/MIN_VALUE": Number.MIN_SAFE_INTEGER,
  "Integer/MAX_VALUE": 2147483647,
  "Integer/MIN_VALUE": -2147483648,
};

// Names a hint lists: the hint is fed back to the model, so neither a host's thousands of
// context keys nor one key of a million characters may make it long.
const NAMES_LISTED = 30;

/** Up to NAMES_LISTED names, each as `write` shows it and cut by shownName, then how many more there are. */
function listNames(names: readonly string[], write: (name: string) => string): string {
  const shown = names.slice(0, NAMES_LISTED).map((n) => shownName(n, write)).join(", ");
  return names.length > NAMES_LISTED ? `${shown} (+${names.length - NAMES_LISTED} more)` : shown;
}

export class Analyzer {
  constructor(readonly env: AnalyzeEnv) {}

  isSpecial(name: string): boolean {
    return Object.hasOwn(SPECIAL_FORMS, name) && !name.startsWith("#");
  }

  /** A builtin the analyzer's expansions call (seq, first, some?, ...). */
  builtin(name: string): Builtin {
    const b = lookupBuiltin(name);
    if (!b) throw new LispError("internal_error", `missing builtin ${name}`);
    return this.env.builtins ? this.env.builtins(b) : b;
  }

  error(kind: ErrorKind, message: string, at: Form | SourceLoc, hint?: string): LispError {
    const loc = "loc" in at ? at.loc : at;
    return new LispError(kind, aboutSource(message), loc, hint, "analysis");
  }

  /** Analyzes one top-level form in a fresh function scope (the top-level frame). */
  analyzeTop(form: Form): { node: Node; scope: FnScope } {
    const fn = new FnScope(null);
    const node = this.analyze(form, { scope: new Scope(null, fn), tail: false, recur: null });
    return { node, scope: fn };
  }

  analyze(form: Form, ctx: Ctx): Node {
    const loc = form.loc;
    switch (form.type) {
      case "nil":
        return { op: "const", value: null, loc };
      case "boolean":
        return { op: "const", value: form.value, loc };
      case "int":
        return { op: "const", value: form.value, loc };
      case "float":
        return { op: "const", value: Number.isInteger(form.value) ? new LFloat(form.value) : form.value, loc };
      case "string":
      case "char":
        return { op: "const", value: form.value, loc };
      case "keyword":
        return { op: "const", value: keyword(form.name), loc };
      case "regex":
        return { op: "const", value: this.regex(form.source, loc), loc };
      case "symbol":
        return this.symbol(form.name, loc, ctx);
      case "vector":
        return this.collection("vector", form.items, loc, ctx);
      case "set":
        return this.collection("set", form.items, loc, ctx);
      case "map":
        return this.collection("map", form.items, loc, ctx);
      case "fnlit":
        return SPECIAL_FORMS["#fn"].analyze(this, { type: "list", items: form.items, loc }, ctx);
      case "list":
        return this.list(form, ctx);
    }
  }

  /** Analyzes `forms` as an implicit do; the last form inherits the tail position. */
  body(forms: Form[], ctx: Ctx, loc: SourceLoc): Node {
    if (forms.length === 0) return { op: "const", value: null, loc };
    if (forms.length === 1) return this.analyze(forms[0], ctx);
    const inner = notTail(ctx);
    const body = forms.map((f, i) => this.analyze(f, i === forms.length - 1 ? ctx : inner));
    return { op: "do", body, loc };
  }

  /** Work of the regex literals compiled since the clock was last read. */
  private regexWork = 0;

  private spendOnRegex(work: number): void {
    this.regexWork += work;
    if (this.regexWork >= REGEX_CHECK) {
      this.regexWork = 0;
      this.env.checkClock?.();
    }
  }

  private regex(source: string, loc: SourceLoc): Value {
    if (source.length > this.env.maxRegexPatternLength) {
      throw new LispError("regex_limit_exceeded", `regex pattern of ${source.length} characters exceeds the limit of ${this.env.maxRegexPatternLength}`, loc, undefined, "analysis");
    }
    try {
      // The clock is read once per REGEX_CHECK units of work compiled (instructions, and before
      // RE2 starts, the classes it folds and the Unicode tables it builds): the literals of
      // ordinary programs (tens of instructions each) read it never, a few huge ones at each.
      const re = compileRegex(source, (work) => this.spendOnRegex(work));
      this.spendOnRegex(sizeOf(re));
      return re;
    } catch (e) {
      if (e instanceof LispError) {
        e.loc = loc;
        e.phase = "analysis";
      }
      throw e;
    }
  }

  private collection(kind: "vector" | "set" | "map", items: Form[], loc: SourceLoc, ctx: Ctx): Node {
    const inner = notTail(ctx);
    const nodes = items.map((f) => this.analyze(f, inner));
    if (kind === "map" || kind === "set") this.checkDuplicateKeys(kind, items, nodes);
    if (nodes.every((n) => n.op === "const")) {
      const values = nodes.map((n) => (n as { value: Value }).value);
      if (kind === "vector") return { op: "const", value: noteLiteral(Vec.fromArray(values)), loc };
      if (kind === "set") return { op: "const", value: noteLiteral(LSet<Value>(values)), loc };
      return {
        op: "const",
        value: noteLiteral(
          LMap<Value, Value>().withMutations((m) => {
            for (let i = 0; i < values.length; i += 2) m.set(values[i], values[i + 1]);
          }),
        ),
        loc,
      };
    }
    return { op: kind, items: nodes, loc };
  }

  private checkDuplicateKeys(kind: "map" | "set", forms: Form[], nodes: Node[]): void {
    // Keys are compared as the map or set itself will compare them.
    const seen = LSet<Value>().asMutable();
    const step = kind === "map" ? 2 : 1;
    for (let i = 0; i < nodes.length; i += step) {
      const n = nodes[i];
      if (n.op !== "const") continue;
      if (seen.has(n.value)) {
        throw this.error("invalid_form", `duplicate ${kind === "map" ? "key" : "element"} ${describeForm(forms[i])} in ${kind} literal`, forms[i], "each key may appear only once");
      }
      seen.add(n.value);
    }
  }

  symbol(name: string, loc: SourceLoc, ctx: Ctx): Node {
    const local = ctx.scope.find(name);
    if (local) return { op: "local", ref: ctx.scope.fn.refTo(local), name, loc };
    const slash = name.indexOf("/");
    if (slash > 0 && slash < name.length - 1) return this.qualified(name.slice(0, slash), name.slice(slash + 1), loc);
    if (this.env.globals.has(name)) return { op: "global", name, loc };
    const b = lookupBuiltin(name);
    if (b) return { op: "const", value: this.env.builtins ? this.env.builtins(b) : b, loc };
    if (this.isSpecial(name)) {
      throw this.error("invalid_form", `${name} is a special form and cannot be used as a value`, loc, `call it directly, e.g. (${name} ...), or wrap it in a fn`);
    }
    throw this.unbound(name, loc, ctx);
  }

  unbound(name: string, loc: SourceLoc, ctx: Ctx): LispError {
    const habit = Object.hasOwn(CLOJURE_HABITS, name) ? CLOJURE_HABITS[name] : undefined;
    if (habit) return this.error("unbound_var", `${name} is not available in PTC-Lisp`, loc, habit);
    const clojure = Object.hasOwn(CLOJURE_ONLY, name) ? CLOJURE_ONLY[name] : undefined;
    if (clojure) return this.error("unbound_var", `${name} is Clojure, not available in PTC-Lisp`, loc, clojure);
    if (name.startsWith(".")) {
      const methods = namespaceNamesDot();
      return this.error("unbound_var", `unknown method ${name}`, loc, `supported interop methods: ${methods.join(", ")}`);
    }
    for (const [alias, ns] of QUALIFIED_HOMES) {
      if (lookupQualified(ns, name)) return this.error("unbound_var", `${name} is only available qualified`, loc, `write ${alias}/${name}`);
    }
    const candidates = [...ctx.scope.visibleNames(), ...this.env.globals, ...allUnqualified()];
    // A builtin near in meaning (mean → avg) wins over names near in spelling.
    const meant = Object.hasOwn(SYNONYMS, name) ? SYNONYMS[name].filter((n) => lookupBuiltin(n) !== undefined || this.isSpecial(n)) : [];
    const near = meant.length > 0 ? meant : suggest(name, candidates);
    if (near.length === 0) return this.error("unbound_var", `undefined symbol: ${name}`, loc, "define it first with def or let");
    // When the nearest name is a builtin, list its whole area: the LLM may want a sibling.
    const area = lookupBuiltin(near[0])?.def.area;
    const siblings = area ? areaNames(area) : [];
    const listing = siblings.length > 1 ? ` ${area} functions: ${siblings.join(", ")}` : "";
    return this.error("unbound_var", `undefined symbol: ${name}`, loc, `did you mean ${near.map((n) => "`" + n + "`").join(" or ")}?${listing}`);
  }

  private qualified(ns: string, name: string, loc: SourceLoc): Node {
    if (ns === "data" || ns === "ctx") {
      const data = this.env.data;
      if (!data) throw this.error("unbound_var", `data/${name} is not available`, loc, "no context data was given to this program");
      if (!data.has(name)) {
        const all = data.keys();
        // A key that is not a symbol name (say "a b") cannot be written after data/: never offer it as if it could.
        const keys = all.filter(isSymbolName);
        const unnamable = all.filter((k) => !isSymbolName(k));
        const near = suggest(name, keys);
        const listed = keys.length === 0 ? "" : `available: ${listNames(keys, (k) => "data/" + k)}`;
        const others = unnamable.length === 0 ? "" : `${listed ? "; " : ""}keys no program can name (the host must rename them): ${listNames(unnamable, JSON.stringify)}`;
        throw this.error(
          "unbound_var",
          `data/${name} is not in the context`,
          loc,
          all.length === 0 ? "no context data was provided" : `${near.length ? `did you mean ${shownName("data/" + near[0])}? ` : ""}${listed}${others}`,
        );
      }
      return { op: "data", key: name, loc };
    }
    if (ns === "tool") {
      this.checkTool(name, loc);
      return { op: "tool-ref", name, loc };
    }
    const full = `${ns}/${name}`;
    if (Object.hasOwn(CONSTANTS, full)) return { op: "const", value: CONSTANTS[full], loc };
    const target = Object.hasOwn(NAMESPACE_ALIASES, ns) ? NAMESPACE_ALIASES[ns] : undefined;
    if (target === undefined) {
      throw this.error("unbound_var", `unknown namespace ${ns} in ${full}`, loc, `PTC-Lisp has no namespaces of its own; known aliases: clojure.string (str), clojure.set (set), clojure.core, clojure.walk, Math`);
    }
    const b = lookupQualified(target, name);
    if (b) return { op: "const", value: this.env.builtins ? this.env.builtins(b) : b, loc };
    throw this.error("unbound_var", `${full} is not available`, loc, `${target} functions: ${namespaceNames(target).join(", ")}`);
  }

  checkTool(name: string, loc: SourceLoc): void {
    const tools = this.env.tools;
    if (tools && tools.has(name)) return;
    const names = tools ? tools.names() : [];
    const near = suggest(name, names);
    throw this.error(
      "unknown_tool",
      `unknown tool: tool/${name}`,
      loc,
      names.length === 0 ? "no tools are available to this program" : `${near.length ? `did you mean ${shownName("tool/" + near[0])}? ` : ""}available tools: ${listNames(names, (n) => "tool/" + n)}`,
    );
  }

  private list(form: ListForm, ctx: Ctx): Node {
    const loc = form.loc;
    if (form.items.length === 0) throw this.error("invalid_form", "an empty list () is not a valid expression", loc, "use [] for an empty vector");
    const head = form.items[0];
    const args = form.items.slice(1);
    if (head.type === "symbol" && !ctx.scope.find(head.name)) {
      const special = this.isSpecial(head.name) ? SPECIAL_FORMS[head.name] : undefined;
      if (special) return special.analyze(this, form, ctx);
      // (Math/PI) is the static field in Clojure, as Math/PI is.
      if (args.length === 0 && Object.hasOwn(CONSTANTS, head.name)) return { op: "const", value: CONSTANTS[head.name], loc };
      if (head.name.startsWith("tool/") && head.name.length > 5) {
        const name = head.name.slice(5);
        this.checkTool(name, head.loc);
        const inner = notTail(ctx);
        return { op: "tool", name, args: args.map((a) => this.analyze(a, inner)), loc };
      }
    }
    if (head.type === "int" || head.type === "float" || head.type === "string" || head.type === "nil" || head.type === "boolean" || head.type === "char") {
      throw this.error("not_callable", `${describeForm(head)} is not a function and cannot be called`, head, "the first element of a list is called as a function; use a vector [..] for data");
    }
    const inner = notTail(ctx);
    const fn = this.analyze(head, inner);
    const argNodes = args.map((a) => this.analyze(a, inner));
    if (fn.op === "const" && fn.value instanceof Builtin) {
      const b = fn.value;
      const [min, max] = b.def.arity;
      if (argNodes.length < min || argNodes.length > max) {
        throw this.error("arity_error", `${b.name} expects ${arityText(b.def.arity)}, got ${argNodes.length}`, loc, `usage: (${b.name} ${b.def.params.split("] [")[0].replace(/^\[|\]$/g, "")})`);
      }
      return { op: "builtin-call", builtin: b, args: argNodes, loc };
    }
    return { op: "call", fn, args: argNodes, loc };
  }
}

export function notTail(ctx: Ctx): Ctx {
  return ctx.tail ? { scope: ctx.scope, tail: false, recur: ctx.recur } : ctx;
}


/** Where a name that is not unqualified may live, with the alias to suggest. */
const QUALIFIED_HOMES: ReadonlyArray<readonly [string, Namespace]> = [
  ["str", "clojure.string"],
  ["set", "clojure.set"],
  ["walk", "clojure.walk"],
  ["Math", "Math"],
];

function areaNames(area: string): string[] {
  return allBuiltins()
    .filter((d) => d.area === area && d.unqualified !== false && !d.name.startsWith("%"))
    .map((d) => d.name);
}

function allUnqualified(): string[] {
  return [...Object.keys(SPECIAL_FORMS).filter((k) => !k.startsWith("#")), ...namespaceNames("clojure.core")];
}

function namespaceNamesDot(): string[] {
  return namespaceNames("clojure.core").filter((n) => n.startsWith(".") || n.endsWith("."));
}

