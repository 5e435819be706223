// for (an eager list comprehension returning a vector) and doseq (the same walk for
// side effects, returning nil). Both take several bindings (nested loops), destructuring,
// and the :let, :when and :while modifiers.
import { describeForm, isSym, type Form } from "../../forms.js";
import { recurBlockedBy, type Analyzer, type Ctx, type ListForm } from "../analyze.js";
import { bindPattern, hiddenName } from "../destructure.js";
import type { Bind, ForClause, Node } from "../nodes.js";
import { Scope } from "../scope.js";
import type { SpecialForm } from "./types.js";

function comprehension(collect: boolean): SpecialForm["analyze"] {
  const name = collect ? "for" : "doseq";
  return (a: Analyzer, form: ListForm, ctx: Ctx): Node => {
    const v = form.items[1];
    if (!v || v.type !== "vector") throw a.error("invalid_form", `expected (${name} [x coll ...] body...)`, v ?? form, `(${name} [x [1 2 3]] ...)`);
    if (form.items.length < 3) throw a.error("invalid_form", `${name} needs a body after the bindings`, form, `(${name} [x coll] (f x))`);
    // Each clause nests the next one inside it when the loop runs, as deep as written nesting would.
    const max = a.env.maxNestingDepth;
    if (v.items.length / 2 > max) {
      throw a.error("nesting_too_deep", `${name} has ${Math.ceil(v.items.length / 2)} clauses, each nested in the one before: more than the nesting limit of ${max}`, v, "loop over fewer collections at once: combine them first, e.g. with map or concat");
    }
    let scope = new Scope(ctx.scope, ctx.scope.fn);
    const clauses: ForClause[] = [];
    const items = v.items;
    for (let i = 0; i < items.length; i += 2) {
      const key = items[i];
      const val: Form | undefined = items[i + 1];
      if (val === undefined) throw a.error("invalid_form", `${name} bindings need pairs of [binding collection], got ${describeForm(key)} alone`, key, `(${name} [x coll] ...)`);
      const inner: Ctx = { scope, tail: false, recur: null };
      if (key.type === "keyword") {
        if (clauses.length === 0) throw a.error("invalid_form", `${name} modifier :${key.name} must follow a binding`, key);
        if (key.name === "let") {
          if (val.type !== "vector" || val.items.length % 2 !== 0) throw a.error("invalid_form", ":let needs a binding vector [name value ...]", val);
          scope = new Scope(scope, scope.fn);
          const binds: Bind[] = [];
          for (let j = 0; j < val.items.length; j += 2) {
            const init = a.analyze(val.items[j + 1], { scope, tail: false, recur: null });
            bindPattern(a, val.items[j], init, scope, binds);
          }
          clauses.push({ kind: "let", binds });
        } else if (key.name === "when" || key.name === "while") {
          clauses.push({ kind: key.name, test: a.analyze(val, inner) });
        } else {
          throw a.error("invalid_form", `unknown ${name} modifier :${key.name}`, key, "supported modifiers: :let, :when, :while");
        }
        continue;
      }
      if (val.type === "int" || val.type === "float" || val.type === "keyword" || val.type === "boolean") {
        throw a.error("invalid_form", `${name} binding ${describeForm(key)} expects a collection, got ${describeForm(val)}`, val, `(${name} [x [1 2 3]] ...)`);
      }
      const coll = a.analyze(val, inner);
      scope = new Scope(scope, scope.fn);
      const prelude: Bind[] = [];
      let raw;
      if (isSym(key)) {
        raw = scope.declare(key.name);
      } else {
        raw = scope.declare(hiddenName("x"));
        bindPattern(a, key, { op: "local", ref: raw, name: "", loc: key.loc }, scope, prelude);
      }
      clauses.push({ kind: "bind", coll, raw, prelude, loc: val.loc });
    }
    if (clauses.length === 0) throw a.error("invalid_form", `${name} needs at least one binding`, v);
    const body = a.body(form.items.slice(2), { scope, tail: false, recur: recurBlockedBy(ctx, name) }, form.loc);
    return { op: "for", clauses, body, collect, loc: form.loc };
  };
}

export const for_: SpecialForm = {
  syntax: "(for [x coll y coll2 :let [...] :when test :while test] body)",
  doc: "Eager list comprehension: a vector of body values for every combination of bindings.",
  examples: [
    ["(for [x [1 2] y [:a :b]] [x y])", "[[1 :a] [1 :b] [2 :a] [2 :b]]"],
    ["(for [x (range 6) :when (even? x)] (* x x))", "[0 4 16]"],
  ],
  analyze: comprehension(true),
};

export const doseq: SpecialForm = {
  syntax: "(doseq [x coll ...] body...)",
  doc: "Evaluates the body for every combination of bindings (for side effects such as println); returns nil.",
  examples: [["(doseq [x [1 2]] (println x))", "nil"]],
  analyze: comprehension(false),
};
