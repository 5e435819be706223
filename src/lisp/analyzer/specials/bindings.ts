// let, loop, recur, if-let, when-let, if-some, when-some, when-first, dotimes.
import { isSym, type Form } from "../../forms.js";
import { notTail, type Analyzer, type ListForm, type RecurTarget } from "../analyze.js";
import { bindPattern, hiddenName } from "../destructure.js";
import type { Bind, LocalRef, Node } from "../nodes.js";
import { Scope } from "../scope.js";
import type { SpecialForm } from "./types.js";

/** The binding vector of a let-like form, checked for shape. */
export function bindingPairs(a: Analyzer, form: ListForm, what: string): Array<[Form, Form]> {
  const v = form.items[1];
  if (!v || v.type !== "vector") throw a.error("invalid_form", `expected (${what} [name value ...] body...)`, v ?? form, `bindings go in a vector: (${what} [x 1 y 2] ...)`);
  if (v.items.length % 2 !== 0) {
    throw a.error("invalid_form", `${what} bindings need name/value pairs, got ${v.items.length} form${v.items.length === 1 ? "" : "s"}`, v, `(${what} [x 1 y 2] ...)`);
  }
  const pairs: Array<[Form, Form]> = [];
  for (let i = 0; i < v.items.length; i += 2) pairs.push([v.items[i], v.items[i + 1]]);
  return pairs;
}

export const let_: SpecialForm = {
  syntax: "(let [name value ...] body...)",
  doc: "Binds names (or destructuring patterns) in order, each visible to the next, then evaluates the body.",
  examples: [["(let [x 2 y (* x 3)] (+ x y))", "8"], ["(let [{:keys [a b]} {:a 1 :b 2}] (+ a b))", "3"]],
  analyze: (a, form, ctx) => {
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const binds: Bind[] = [];
    for (const [pattern, value] of bindingPairs(a, form, "let")) {
      const init = a.analyze(value, { scope, tail: false, recur: ctx.recur });
      bindPattern(a, pattern, init, scope, binds);
    }
    const body = a.body(form.items.slice(2), { scope, tail: ctx.tail, recur: ctx.recur }, form.loc);
    return binds.length === 0 ? body : { op: "let", binds, body, loc: form.loc };
  },
};

export const letfn: SpecialForm = {
  syntax: "(letfn [(name [params] body...) ...] body...)",
  doc: "Local functions that can call themselves and each other, visible in the body.",
  examples: [["(letfn [(ev? [n] (if (zero? n) true (od? (dec n)))) (od? [n] (if (zero? n) false (ev? (dec n))))] (ev? 10))", "true"]],
  analyze: (a, form, ctx) => {
    const specs = form.items[1];
    if (specs === undefined || specs.type !== "vector") throw a.error("invalid_form", "letfn expects a vector of function specs: (letfn [(f [x] ...)] body...)", specs ?? form);
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const named: Array<{ name: string; spec: Extract<Form, { type: "list" }> }> = [];
    for (const spec of specs.items) {
      if (spec.type !== "list" || !isSym(spec.items[0]) || spec.items.length < 2) {
        throw a.error("invalid_form", "each letfn spec is (name [params] body...)", spec);
      }
      named.push({ name: spec.items[0].name, spec });
    }
    const slots = named.map(({ name }) => scope.declare(name));
    const inner = { scope, tail: false, recur: null };
    const fns = named.map(({ spec }) => {
      const node = a.analyze({ type: "list", items: [{ type: "symbol", name: "fn", loc: spec.loc }, ...spec.items], loc: spec.loc }, inner);
      if (node.op !== "fn") throw a.error("invalid_form", "each letfn spec is (name [params] body...)", spec);
      return node;
    });
    const body = a.body(form.items.slice(2), { scope, tail: ctx.tail, recur: ctx.recur }, form.loc);
    return { op: "letfn", slots, fns, body, loc: form.loc };
  },
};

export const loop: SpecialForm = {
  syntax: "(loop [name init ...] body... (recur new-values...))",
  doc: "A loop: recur (in tail position) jumps back with new values for the bindings.",
  examples: [["(loop [i 0 acc 0] (if (< i 5) (recur (inc i) (+ acc i)) acc))", "10"]],
  analyze: (a, form, ctx) => {
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const raws: LocalRef[] = [];
    const inits: Node[] = [];
    const preludes: Bind[][] = [];
    for (const [pattern, value] of bindingPairs(a, form, "loop")) {
      inits.push(a.analyze(value, { scope, tail: false, recur: ctx.recur }));
      if (isSym(pattern)) {
        raws.push(scope.declare(pattern.name));
        preludes.push([]);
      } else {
        const raw = scope.declare(hiddenName("loop"));
        const prelude: Bind[] = [];
        bindPattern(a, pattern, { op: "local", ref: raw, name: "", loc: pattern.loc }, scope, prelude);
        raws.push(raw);
        preludes.push(prelude);
      }
    }
    const recur: RecurTarget = { targets: raws, what: "loop", used: false };
    const body = a.body(form.items.slice(2), { scope, tail: true, recur }, form.loc);
    if (!recur.used) return { op: "let", binds: raws.map((target, i) => ({ target, init: inits[i] })).flatMap((b, i) => [b, ...preludes[i]]), body, loc: form.loc };
    return { op: "loop", raws, inits, preludes, body, loc: form.loc };
  },
};

export const recur: SpecialForm = {
  syntax: "(recur values...)",
  doc: "Jumps back to the nearest loop or fn with new values; only allowed in tail position.",
  analyze: (a, form, ctx) => {
    const target = ctx.recur;
    if (!target) throw a.error("invalid_form", "recur outside of a loop or function", form, "use (loop [x init] ... (recur (next-value x)))");
    if (target.what !== "loop" && target.what !== "fn") {
      const hint = target.what === "try" ? "let the try return a value and decide after it, e.g. (loop [n 0] (let [r (try (work) (catch Exception e nil))] (if (or r (> n 2)) r (recur (inc n)))))" : "recur goes around the loop or fn, so call it after the body, not inside it";
      throw a.error("invalid_form", `recur cannot jump out of a ${target.what === "try" ? "try" : `${target.what} body`} to the loop or fn around it`, form, hint);
    }
    if (!ctx.tail) {
      throw a.error("invalid_form", "recur must be in tail position", form, "recur must be the last thing evaluated in its loop or fn (not inside another call, and not in a for/doseq body)");
    }
    const args = form.items.slice(1);
    if (args.length !== target.targets.length) {
      throw a.error("arity_error", `recur expects ${target.targets.length} value${target.targets.length === 1 ? "" : "s"} (one per ${target.what === "loop" ? "loop binding" : "parameter"}), got ${args.length}`, form);
    }
    target.used = true;
    const inner = notTail(ctx);
    return { op: "recur", targets: target.targets, args: args.map((f) => a.analyze(f, inner)), loc: form.loc };
  },
};

function conditionalBinding(name: string, some: boolean, withElse: boolean): SpecialForm["analyze"] {
  return (a, form, ctx) => {
    const pairs = bindingPairs(a, form, name);
    if (pairs.length !== 1) throw a.error("invalid_form", `${name} takes exactly one binding: (${name} [x test] ...)`, form.items[1] ?? form);
    const rest = form.items.slice(2);
    // As in Clojure, when-let and when-some may have an empty body (then they give nil).
    if (withElse && (rest.length < 1 || rest.length > 2)) {
      throw a.error("invalid_form", withElse ? `expected (${name} [x test] then else?)` : `expected (${name} [x test] body...)`, form);
    }
    const [pattern, testForm] = pairs[0];
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const tmp = scope.declare(hiddenName("test"));
    const init = a.analyze(testForm, notTail(ctx));
    const inner = new Scope(scope, ctx.scope.fn);
    const binds: Bind[] = [];
    bindPattern(a, pattern, { op: "local", ref: tmp, name: "", loc: pattern.loc }, inner, binds);
    const thenBody = withElse ? a.analyze(rest[0], { scope: inner, tail: ctx.tail, recur: ctx.recur }) : a.body(rest, { scope: inner, tail: ctx.tail, recur: ctx.recur }, form.loc);
    const elseNode: Node = withElse && rest.length === 2 ? a.analyze(rest[1], ctx) : { op: "const", value: null, loc: form.loc };
    const tmpNode: Node = { op: "local", ref: tmp, name: "", loc: form.loc };
    const test: Node = some ? { op: "builtin-call", builtin: a.builtin("some?"), args: [tmpNode], loc: form.loc } : tmpNode;
    return {
      op: "let",
      binds: [{ target: tmp, init }],
      body: { op: "if", test, then: { op: "let", binds, body: thenBody, loc: form.loc }, else: elseNode, loc: form.loc },
      loc: form.loc,
    };
  };
}

export const ifLet: SpecialForm = {
  syntax: "(if-let [name test] then else?)",
  doc: "Binds name to test and evaluates then when it is truthy, else otherwise.",
  examples: [["(if-let [x (get {:a 1} :a)] (inc x) :none)", "2"]],
  analyze: conditionalBinding("if-let", false, true),
};

export const whenLet: SpecialForm = {
  syntax: "(when-let [name test] body...)",
  doc: "Binds name to test and evaluates the body when it is truthy; nil otherwise.",
  examples: [["(when-let [x (first [])] x)", "nil"]],
  analyze: conditionalBinding("when-let", false, false),
};

export const ifSome: SpecialForm = {
  syntax: "(if-some [name test] then else?)",
  doc: "Like if-let, but only nil counts as missing (false binds).",
  examples: [["(if-some [x false] :bound :none)", ":bound"]],
  analyze: conditionalBinding("if-some", true, true),
};

export const whenSome: SpecialForm = {
  syntax: "(when-some [name test] body...)",
  doc: "Like when-let, but only nil counts as missing.",
  analyze: conditionalBinding("when-some", true, false),
};

export const whenFirst: SpecialForm = {
  syntax: "(when-first [name coll] body...)",
  doc: "Binds name to the first element of coll and evaluates the body when coll is not empty.",
  examples: [["(when-first [x [3 4]] (* x 2))", "6"]],
  analyze: (a, form, ctx) => {
    const pairs = bindingPairs(a, form, "when-first");
    if (pairs.length !== 1) throw a.error("invalid_form", "when-first takes exactly one binding", form);
    const [pattern, collForm] = pairs[0];
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const coll = scope.declare(hiddenName("coll"));
    const collNode: Node = { op: "local", ref: coll, name: "", loc: form.loc };
    const binds: Bind[] = [];
    bindPattern(a, pattern, { op: "builtin-call", builtin: a.builtin("first"), args: [collNode], loc: form.loc }, scope, binds);
    const body = a.body(form.items.slice(2), { scope, tail: ctx.tail, recur: ctx.recur }, form.loc);
    return {
      op: "let",
      binds: [{ target: coll, init: a.analyze(collForm, notTail(ctx)) }],
      body: {
        op: "if",
        test: { op: "builtin-call", builtin: a.builtin("seq"), args: [collNode], loc: form.loc },
        then: { op: "let", binds, body, loc: form.loc },
        else: { op: "const", value: null, loc: form.loc },
        loc: form.loc,
      },
      loc: form.loc,
    };
  },
};

export const dotimes: SpecialForm = {
  syntax: "(dotimes [i n] body...)",
  doc: "Evaluates the body n times with i bound to 0 .. n-1; returns nil.",
  examples: [["(dotimes [i 3] (println i))", "nil"]],
  analyze: (a, form, ctx) => {
    const pairs = bindingPairs(a, form, "dotimes");
    const [name, count] = pairs[0] ?? [];
    if (pairs.length !== 1 || !isSym(name)) throw a.error("invalid_form", "expected (dotimes [i n] body...)", form);
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const countNode = a.analyze(count, notTail(ctx));
    const slot = scope.declare(name.name);
    const body = a.body(form.items.slice(2), { scope, tail: false, recur: null }, form.loc);
    return { op: "dotimes", slot, count: countNode, body, loc: form.loc };
  },
};

