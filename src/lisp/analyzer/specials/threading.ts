// Threading forms, expanded into nested calls before analysis:
// ->, ->>, as->, cond->, cond->>, some->, some->>.
import type { SourceLoc } from "../../errors.js";
import { isSym, type Form } from "../../forms.js";
import type { Analyzer, Ctx, ListForm } from "../analyze.js";
import { hiddenName } from "../destructure.js";
import type { SpecialForm } from "./types.js";

const sym = (name: string, loc: SourceLoc): Form => ({ type: "symbol", name, loc });
const list = (items: Form[], loc: SourceLoc): ListForm => ({ type: "list", items, loc });

/** Inserts `x` into `step` as the first (or last) argument. */
function thread(x: Form, step: Form, last: boolean): Form {
  if (step.type === "list" && step.items.length > 0 && !(step.items.length > 0 && isSym(step.items[0], "fn"))) {
    const [head, ...args] = step.items;
    return list(last ? [head, ...args, x] : [head, x, ...args], step.loc);
  }
  return list([step, x], step.loc);
}

function threadAll(a: Analyzer, form: ListForm, last: boolean): Form {
  const [, first, ...steps] = form.items;
  if (!first) throw a.error("invalid_form", `expected (${last ? "->>" : "->"} x forms...)`, form);
  return steps.reduce((acc, step) => thread(acc, step, last), first);
}

export const threadFirst: SpecialForm = {
  syntax: "(-> x (f a) g ...)",
  doc: "Threads x through the forms as their first argument: (-> x (f a) g) is (g (f x a)).",
  examples: [["(-> {:a {:b 5}} :a :b inc)", "6"]],
  analyze: (a, form, ctx) => a.analyze(threadAll(a, form, false), ctx),
};

export const threadLast: SpecialForm = {
  syntax: "(->> coll (f a) g ...)",
  doc: "Threads x through the forms as their last argument: (->> xs (map f) (filter p)).",
  examples: [["(->> [1 2 3 4] (filter even?) (map inc))", "[3 5]"]],
  analyze: (a, form, ctx) => a.analyze(threadAll(a, form, true), ctx),
};

export const threadAs: SpecialForm = {
  syntax: "(as-> x name forms...)",
  doc: "Binds name to x, then to each form's result in turn; any argument position.",
  examples: [["(as-> 5 v (* v 2) (- 100 v))", "90"]],
  analyze: (a, form, ctx) => {
    const [, init, name, ...steps] = form.items;
    if (!init || !isSym(name)) throw a.error("invalid_form", "expected (as-> x name forms...)", form);
    const bindings: Form[] = [name, init];
    for (const s of steps) bindings.push(name, s);
    return a.analyze(list([sym("let", form.loc), { type: "vector", items: bindings, loc: form.loc }, name], form.loc), ctx);
  },
};

function condThread(last: boolean): SpecialForm["analyze"] {
  return (a, form, ctx: Ctx) => {
    const [, init, ...clauses] = form.items;
    const name = last ? "cond->>" : "cond->";
    if (!init || clauses.length % 2 !== 0) throw a.error("invalid_form", `expected (${name} x test form ...) with test/form pairs`, form);
    const g = sym(hiddenName("g"), form.loc);
    const bindings: Form[] = [g, init];
    for (let i = 0; i < clauses.length; i += 2) {
      bindings.push(g, list([sym("if", clauses[i].loc), clauses[i], thread(g, clauses[i + 1], last), g], clauses[i].loc));
    }
    return a.analyze(list([sym("let", form.loc), { type: "vector", items: bindings, loc: form.loc }, g], form.loc), ctx);
  };
}

export const condThreadFirst: SpecialForm = {
  syntax: "(cond-> x test1 form1 test2 form2 ...)",
  doc: "Threads x (first argument) through each form whose test is truthy.",
  examples: [["(cond-> 1 true inc false (* 100))", "2"]],
  analyze: condThread(false),
};

export const condThreadLast: SpecialForm = {
  syntax: "(cond->> x test1 form1 ...)",
  doc: "Threads x (last argument) through each form whose test is truthy.",
  analyze: condThread(true),
};

function someThread(last: boolean): SpecialForm["analyze"] {
  return (a, form, ctx) => {
    const [, init, ...steps] = form.items;
    if (!init) throw a.error("invalid_form", `expected (${last ? "some->>" : "some->"} x forms...)`, form);
    const g = sym(hiddenName("g"), form.loc);
    let body: Form = g;
    for (let i = steps.length - 1; i >= 0; i--) {
      body = list(
        [sym("let", steps[i].loc), { type: "vector", items: [g, thread(g, steps[i], last)], loc: steps[i].loc }, i === steps.length - 1 ? g : body],
        steps[i].loc,
      );
      body = list([sym("if", steps[i].loc), list([sym("nil?", steps[i].loc), g], steps[i].loc), { type: "nil", loc: steps[i].loc }, body], steps[i].loc);
    }
    return a.analyze(list([sym("let", form.loc), { type: "vector", items: [g, init], loc: form.loc }, body], form.loc), ctx);
  };
}

export const someThreadFirst: SpecialForm = {
  syntax: "(some-> x forms...)",
  doc: "Like -> but stops with nil as soon as a step gives nil.",
  examples: [["(some-> {:a 1} :b inc)", "nil"]],
  analyze: someThread(false),
};

export const someThreadLast: SpecialForm = {
  syntax: "(some->> x forms...)",
  doc: "Like ->> but stops with nil as soon as a step gives nil.",
  analyze: someThread(true),
};
