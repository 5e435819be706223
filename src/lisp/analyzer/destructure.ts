// Destructuring: a binding pattern becomes plain slot assignments. `[a b & r :as all]`
// and `{:keys [x] :strs [y] :or {x 0} :as m, renamed :key}` work in let, loop, fn
// parameters, for, doseq and if-let/when-let.
import type { SourceLoc } from "../errors.js";
import { describeForm, isSym, type Form } from "../forms.js";
import { keyword, LFloat, type Value } from "../values.js";
import type { Analyzer, Ctx } from "./analyze.js";
import type { Bind, LocalRef, Node } from "./nodes.js";
import type { Scope } from "./scope.js";

let hiddenCounter = 0;

/** A local name program code cannot write (it contains a space). */
export function hiddenName(tag: string): string {
  return ` ${tag}${hiddenCounter++}`;
}

// Destructuring happens within one function, so the source is always a plain slot.
function local(ref: LocalRef, loc: SourceLoc): Node {
  return { op: "local", ref, name: "", loc };
}

/**
 * Declares the names in `pattern` in `scope`, appending assignments from `init` to `out`.
 * `restArgs` marks a pattern bound to rest arguments, where a map pattern takes keyword
 * arguments: [a & {:keys [k]}] accepts (f 1 :k 2) and (f 1 {:k 2}).
 */
export function bindPattern(a: Analyzer, pattern: Form, init: Node, scope: Scope, out: Bind[], restArgs = false): void {
  switch (pattern.type) {
    case "symbol": {
      if (pattern.name === "&") throw a.error("invalid_form", "& must be followed by one binding for the rest", pattern);
      if (pattern.name.includes("/") && pattern.name !== "/") {
        throw a.error("invalid_form", `cannot bind a qualified name: ${pattern.name}`, pattern, "use a plain name");
      }
      out.push({ target: scope.declare(pattern.name), init });
      return;
    }
    case "vector":
      bindVector(a, pattern.items, pattern.loc, init, scope, out);
      return;
    case "map":
      bindMap(a, pattern.items, pattern.loc, init, scope, out, restArgs);
      return;
    default:
      throw a.error(
        "invalid_form",
        `invalid binding form ${describeForm(pattern)}: expected a name, a vector pattern or a map pattern`,
        pattern,
        "bind names like [x 1], [[a b] pair] or [{:keys [k]} m]",
      );
  }
}

function bindVector(a: Analyzer, items: Form[], loc: SourceLoc, init: Node, scope: Scope, out: Bind[]): void {
  // :as names the value given (a string stays a string), not its elements: that value gets a
  // slot of its own, only when a pattern has :as.
  let given: LocalRef | null = null;
  if (items.some((f) => f.type === "keyword" && f.name === "as")) {
    const ref = scope.declare(hiddenName("as"));
    out.push({ target: ref, init });
    init = local(ref, loc);
    given = ref;
  }
  const src = scope.declare(hiddenName("v"));
  out.push({ target: src, init: { op: "destructure", kind: "seq", init, loc } });
  let index = 0;
  for (let k = 0; k < items.length; k++) {
    const item = items[k];
    if (isSym(item, "&")) {
      const rest = items[k + 1];
      if (!rest || (rest.type === "keyword" && rest.name === "as")) throw a.error("invalid_form", "& must be followed by a binding for the rest", item);
      bindPattern(a, rest, { op: "destructure", kind: "rest", src, index, loc: rest.loc }, scope, out, true);
      k++;
      // A name after the rest would bind an element from the front, not what follows the rest.
      const after = items[k + 1];
      if (after !== undefined && !(after.type === "keyword" && after.name === "as")) {
        throw a.error("invalid_form", "only :as can follow the & binding", after, "[a & more] binds the rest; take the last element with (last more)");
      }
      continue;
    }
    if (item.type === "keyword" && item.name === "as") {
      const name = items[k + 1];
      if (!isSym(name)) throw a.error("invalid_form", ":as must be followed by a name", item);
      bindPattern(a, name, local(given ?? src, name.loc), scope, out);
      k++;
      continue;
    }
    bindPattern(a, item, { op: "destructure", kind: "nth", src, index, loc: item.loc }, scope, out);
    index++;
  }
}

function keyValue(a: Analyzer, f: Form): Value {
  switch (f.type) {
    case "keyword":
      return keyword(f.name);
    case "string":
      return f.value;
    case "int":
      return f.value;
    case "float":
      return Number.isInteger(f.value) ? new LFloat(f.value) : f.value;
    case "boolean":
      return f.value;
    case "nil":
      return null;
    default:
      throw a.error("invalid_form", `map destructuring keys must be literals (keywords, strings, numbers), got ${describeForm(f)}`, f);
  }
}

function bindMap(a: Analyzer, items: Form[], loc: SourceLoc, init: Node, scope: Scope, out: Bind[], restArgs: boolean): void {
  const src = scope.declare(hiddenName("m"));
  out.push({ target: src, init: { op: "destructure", kind: "map", init, restArgs, loc } });
  const defaults = new Map<string, Form>();
  // Clojure binds :as first, so an :or default can read it and a key of the same name wins.
  for (let k = 0; k < items.length; k += 2) {
    const key = items[k];
    if (key.type === "keyword" && key.name === "as") {
      const val = items[k + 1];
      if (!isSym(val)) throw a.error("invalid_form", ":as must be followed by a name", key);
      bindPattern(a, val, local(src, val.loc), scope, out);
    } else if (key.type === "keyword" && key.name === "or") {
      const m = items[k + 1];
      if (m.type !== "map") throw a.error("invalid_form", ":or must be followed by a map of defaults, e.g. {:or {x 0}}", key);
      for (let j = 0; j < m.items.length; j += 2) {
        const name = m.items[j];
        if (!isSym(name)) throw a.error("invalid_form", ":or defaults are keyed by the bound names (symbols)", name);
        defaults.set(name.name, m.items[j + 1]);
      }
    }
  }
  const ctx: Ctx = { scope, tail: false, recur: null };
  const fromKey = (target: Form, key: Value, at: Form): void => {
    const dflt = isSym(target) && defaults.has(target.name) ? a.analyze(defaults.get(target.name) as Form, ctx) : null;
    bindPattern(a, target, { op: "destructure", kind: "key", src, key, dflt, loc: at.loc }, scope, out);
  };
  for (let k = 0; k < items.length; k += 2) {
    const key = items[k];
    const val = items[k + 1];
    // {:keys [a]}, and Clojure's {:ns/keys [a]}, which reads :ns/a (a name with its own namespace keeps it).
    const ns = key.type === "keyword" && /^[^/]+\/(keys|syms)$/.test(key.name) ? key.name.slice(0, key.name.lastIndexOf("/")) : null;
    if (key.type === "keyword" && (key.name === "keys" || key.name === "strs" || key.name === "syms" || ns !== null)) {
      if (val.type !== "vector") throw a.error("invalid_form", `:${key.name} must be followed by a vector of names`, key, `e.g. {:${key.name} [a b]}`);
      for (const n of val.items) {
        const name = n.type === "keyword" ? n.name : isSym(n) ? n.name : null;
        if (name === null) throw a.error("invalid_form", `:${key.name} names must be symbols`, n);
        const bare = name.includes("/") ? name.slice(name.indexOf("/") + 1) : name;
        const target: Form = { type: "symbol", name: bare, loc: n.loc };
        fromKey(target, key.name === "strs" ? bare : keyword(ns === null || name.includes("/") ? name : `${ns}/${name}`), n);
      }
      continue;
    }
    if (key.type === "keyword" && (key.name === "or" || key.name === "as")) continue;
    if (key.type === "symbol" || key.type === "vector" || key.type === "map") {
      fromKey(key, keyValue(a, val), val);
      continue;
    }
    throw a.error("invalid_form", `unexpected ${describeForm(key)} in a map binding pattern`, key, "use {:keys [a b]}, {name :key}, :or {...} or :as m");
  }
}
