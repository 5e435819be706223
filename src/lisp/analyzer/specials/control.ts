// if, if-not, when, when-not, cond, condp, case, do, and, or, comment.
import { describeForm, type Form } from "../../forms.js";
import { keyword, LFloat, LMap, type Value } from "../../values.js";
import { Vec } from "../../vector.js";
import { notTail, type Analyzer, type Ctx, type ListForm } from "../analyze.js";
import { hiddenName } from "../destructure.js";
import type { Node } from "../nodes.js";
import { Scope } from "../scope.js";
import type { SpecialForm } from "./types.js";

const nil = (form: Form): Node => ({ op: "const", value: null, loc: form.loc });

function ifNode(a: Analyzer, form: ListForm, ctx: Ctx, negate: boolean): Node {
  const name = negate ? "if-not" : "if";
  const args = form.items.slice(1);
  if (args.length < 2 || args.length > 3) {
    throw a.error("invalid_form", `expected (${name} test then else?), got ${args.length} argument${args.length === 1 ? "" : "s"}`, form, args.length > 3 ? "use cond for several branches, or wrap several expressions in (do ...)" : undefined);
  }
  const test = a.analyze(args[0], notTail(ctx));
  const then = a.analyze(args[1], ctx);
  const other = args.length === 3 ? a.analyze(args[2], ctx) : nil(form);
  return negate ? { op: "if", test, then: other, else: then, loc: form.loc } : { op: "if", test, then, else: other, loc: form.loc };
}

export const if_: SpecialForm = {
  syntax: "(if test then else?)",
  doc: "Evaluates then when test is truthy (anything but nil and false), else otherwise (nil when omitted).",
  examples: [["(if (> 2 1) :yes :no)", ":yes"]],
  analyze: (a, form, ctx) => ifNode(a, form, ctx, false),
};

export const ifNot: SpecialForm = {
  syntax: "(if-not test then else?)",
  doc: "Like if with the test negated.",
  examples: [["(if-not false :a :b)", ":a"]],
  analyze: (a, form, ctx) => ifNode(a, form, ctx, true),
};

function whenNode(a: Analyzer, form: ListForm, ctx: Ctx, negate: boolean): Node {
  const name = negate ? "when-not" : "when";
  if (form.items.length < 2) throw a.error("invalid_form", `expected (${name} test body...)`, form);
  const test = a.analyze(form.items[1], notTail(ctx));
  const body = a.body(form.items.slice(2), ctx, form.loc);
  return negate ? { op: "if", test, then: nil(form), else: body, loc: form.loc } : { op: "if", test, then: body, else: nil(form), loc: form.loc };
}

export const when: SpecialForm = {
  syntax: "(when test body...)",
  doc: "Evaluates the body when test is truthy; nil otherwise.",
  examples: [["(when (pos? 1) :a :b)", ":b"]],
  analyze: (a, form, ctx) => whenNode(a, form, ctx, false),
};

export const whenNot: SpecialForm = {
  syntax: "(when-not test body...)",
  doc: "Evaluates the body when test is falsy; nil otherwise.",
  examples: [["(when-not (pos? 1) :a)", "nil"]],
  analyze: (a, form, ctx) => whenNode(a, form, ctx, true),
};

export const cond: SpecialForm = {
  syntax: "(cond test1 expr1 test2 expr2 ... :else default)",
  doc: "The expression of the first truthy test; nil when none matches.",
  examples: [["(cond (< 5 0) :neg (> 5 0) :pos :else :zero)", ":pos"]],
  analyze: (a, form, ctx) => {
    const args = form.items.slice(1);
    if (args.length % 2 !== 0) throw a.error("invalid_form", "cond needs test/expression pairs (an even number of forms)", form, "end with :else default");
    let node: Node = nil(form);
    for (let i = args.length - 2; i >= 0; i -= 2) {
      const test = args[i];
      const then = a.analyze(args[i + 1], ctx);
      if (test.type === "keyword" || (test.type === "boolean" && test.value)) {
        node = then;
        continue;
      }
      node = { op: "if", test: a.analyze(test, notTail(ctx)), then, else: node, loc: test.loc };
    }
    return node;
  },
};

export const condp: SpecialForm = {
  syntax: "(condp pred expr test1 result1 ... default?)",
  doc: "The result for the first test where (pred test expr) is truthy; test :>> f gives (f that truth); the default (or an error) otherwise.",
  examples: [["(condp = 2 1 :one 2 :two :many)", ":two"], ["(condp some [1 2] #{3} :>> inc #{2} :>> dec)", "1"]],
  analyze: (a, form, ctx) => {
    const args = form.items.slice(1);
    if (args.length < 2) throw a.error("invalid_form", "expected (condp pred expr test result ... default?)", form);
    const scope = new Scope(ctx.scope, ctx.scope.fn);
    const inner: Ctx = { scope, tail: false, recur: ctx.recur };
    const predRef = scope.declare(hiddenName("pred"));
    const exprRef = scope.declare(hiddenName("expr"));
    const pred = a.analyze(args[0], notTail(ctx));
    const expr = a.analyze(args[1], notTail(ctx));
    // Clauses read left to right as Clojure's do: test result, or test :>> f; one form left is the default.
    const clauses: Array<{ test: Form; result: Form; arrow: boolean }> = [];
    let rest = args.slice(2);
    while (rest.length >= 2) {
      const arrow = rest[1].type === "keyword" && rest[1].name === ">>";
      if (arrow && rest.length < 3) throw a.error("invalid_form", "condp :>> must be followed by a function", rest[1], "(condp pred expr test :>> f ...)");
      clauses.push({ test: rest[0], result: rest[arrow ? 2 : 1], arrow });
      rest = rest.slice(arrow ? 3 : 2);
    }
    const bodyCtx: Ctx = { scope, tail: ctx.tail, recur: ctx.recur };
    let node: Node;
    if (rest.length === 1) {
      node = a.analyze(rest[0], bodyCtx);
    } else {
      node = { op: "builtin-call", builtin: a.builtin("%no-match"), args: [{ op: "const", value: "condp", loc: form.loc }, { op: "local", ref: exprRef, name: "", loc: form.loc }], loc: form.loc };
    }
    for (let i = clauses.length - 1; i >= 0; i--) {
      const { test: testForm, result, arrow } = clauses[i];
      const loc = testForm.loc;
      const test: Node = {
        op: "call",
        fn: { op: "local", ref: predRef, name: "", loc },
        args: [a.analyze(testForm, inner), { op: "local", ref: exprRef, name: "", loc }],
        loc,
      };
      if (!arrow) {
        node = { op: "if", test, then: a.analyze(result, bodyCtx), else: node, loc };
        continue;
      }
      const hitRef = scope.declare(hiddenName("hit"));
      const hit: Node = { op: "local", ref: hitRef, name: "", loc };
      const then: Node = { op: "call", fn: a.analyze(result, inner), args: [hit], loc: result.loc };
      node = { op: "let", binds: [{ target: hitRef, init: test }], body: { op: "if", test: hit, then, else: node, loc }, loc };
    }
    return { op: "let", binds: [{ target: predRef, init: pred }, { target: exprRef, init: expr }], body: node, loc: form.loc };
  },
};

function caseKey(a: Analyzer, f: Form): Value {
  switch (f.type) {
    case "nil":
      return null;
    case "boolean":
      return f.value;
    case "int":
      return f.value;
    case "float":
      return Number.isInteger(f.value) ? new LFloat(f.value) : f.value;
    case "string":
    case "char":
      return f.value;
    case "keyword":
      return keyword(f.name);
    case "symbol":
      throw a.error("invalid_form", `case keys must be literals; ${f.name} is a symbol`, f, "use keywords, strings or numbers, e.g. (case x :a 1 :b 2 :default)");
    case "vector":
      // A vector of literals matches an equal vector, as in Clojure.
      return Vec.fromArray(f.items.map((item) => caseKey(a, item)));
    default:
      throw a.error("invalid_form", `unsupported case key ${describeForm(f)}`, f, "use keywords, strings, numbers or vectors of them; group several keys in a list: (case x (1 2) :low :high)");
  }
}

export const case_: SpecialForm = {
  syntax: "(case expr key1 result1 (key2 key3) result2 ... default?)",
  doc: "Constant-time dispatch on literal keys (a vector of literals matches an equal vector); a list groups several keys. Without a default, no match is an error.",
  examples: [['(case :b :a 1 :b 2 3)', "2"]],
  analyze: (a, form, ctx) => {
    const args = form.items.slice(1);
    if (args.length < 1) throw a.error("invalid_form", "expected (case expr key result ... default?)", form);
    const test = a.analyze(args[0], notTail(ctx));
    const clauses = args.slice(1);
    const dflt = clauses.length % 2 === 1 ? a.analyze(clauses[clauses.length - 1], ctx) : null;
    const branches: Node[] = [];
    const table = LMap<Value, Value>().asMutable();
    for (let i = 0; i + 1 < clauses.length; i += 2) {
      const keys = clauses[i].type === "list" ? (clauses[i] as ListForm).items : [clauses[i]];
      for (const k of keys) {
        const v = caseKey(a, k);
        if (table.has(v)) throw a.error("invalid_form", `duplicate case key ${describeForm(k)}`, k);
        table.set(v, branches.length);
      }
      branches.push(a.analyze(clauses[i + 1], ctx));
    }
    return { op: "case", test, table: table.asImmutable(), branches, dflt, loc: form.loc };
  },
};

export const withOutStr: SpecialForm = {
  syntax: "(with-out-str body...)",
  doc: "Evaluates the body and returns what it printed (println, print, prn) as a string, instead of printing it.",
  examples: [['(with-out-str (println "a" 1) (print "b"))', '"a 1\\nb"']],
  analyze: (a, form, ctx) => ({ op: "with-out-str", body: a.body(form.items.slice(1), { scope: ctx.scope, tail: false, recur: null }, form.loc), loc: form.loc }),
};

export const do_: SpecialForm = {
  syntax: "(do expr...)",
  doc: "Evaluates the expressions in order and returns the last.",
  examples: [["(do 1 2 3)", "3"]],
  analyze: (a, form, ctx) => a.body(form.items.slice(1), ctx, form.loc),
};

function logic(op: "and" | "or"): SpecialForm["analyze"] {
  return (a, form, ctx) => {
    const args = form.items.slice(1);
    if (args.length === 0) return op === "and" ? { op: "const", value: true, loc: form.loc } : nil(form);
    if (args.length === 1) return a.analyze(args[0], ctx);
    const items = args.map((f, i) => a.analyze(f, i === args.length - 1 ? ctx : notTail(ctx)));
    return { op, items, loc: form.loc };
  };
}

export const and: SpecialForm = {
  syntax: "(and expr...)",
  doc: "The first falsy value, or the last value; (and) is true.",
  examples: [["(and 1 nil 3)", "nil"]],
  analyze: logic("and"),
};

export const or: SpecialForm = {
  syntax: "(or expr...)",
  doc: "The first truthy value, or the last value; (or) is nil.",
  examples: [["(or nil false 3)", "3"]],
  analyze: logic("or"),
};

export const comment: SpecialForm = {
  syntax: "(comment ...)",
  doc: "Ignores its body and returns nil.",
  analyze: (_a, form) => nil(form),
};

