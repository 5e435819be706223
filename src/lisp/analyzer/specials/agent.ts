// Forms specific to PTC-Lisp programs: return, fail, and the where predicate builder.
import { describeForm, type Form } from "../../forms.js";
import { keyword, type Value } from "../../values.js";
import { notTail, type Analyzer, type ListForm } from "../analyze.js";
import type { Node } from "../nodes.js";
import type { SpecialForm } from "./types.js";

function oneArg(op: "return" | "fail"): SpecialForm["analyze"] {
  return (a, form, ctx) => {
    if (form.items.length !== 2) throw a.error("invalid_form", `expected (${op} value), got ${form.items.length - 1} arguments`, form, op === "return" ? "(return {:answer ...})" : '(fail "why it cannot be done")');
    return { op, value: a.analyze(form.items[1], notTail(ctx)), loc: form.loc };
  };
}

export const return_: SpecialForm = {
  syntax: "(return value)",
  doc: "Ends the mission with value as the answer.",
  analyze: oneArg("return"),
};

export const fail: SpecialForm = {
  syntax: "(fail reason)",
  doc: "Ends the mission as failed, with reason (a string or map).",
  analyze: oneArg("fail"),
};

export const WHERE_OPS = ["=", "not=", ">", "<", ">=", "<=", "includes", "in"] as const;

function fieldPath(a: Analyzer, f: Form): Value[] {
  if (f.type === "keyword") return [keyword(f.name)];
  if (f.type === "string") return [f.value];
  if (f.type === "vector" && f.items.length > 0) return f.items.flatMap((x) => fieldPath(a, x));
  throw a.error("invalid_form", `where field must be a keyword, a string or a vector path, got ${describeForm(f)}`, f);
}

export const where: SpecialForm = {
  syntax: "(where :field) | (where :field op value) | (where [:a :b] op value)",
  doc: `A predicate on maps for filter/remove/find: ops ${WHERE_OPS.join(" ")}; (where :field) tests truthiness.`,
  examples: [["(filter (where :age > 30) [{:age 25} {:age 40}])", "[{:age 40}]"]],
  analyze: (a, form: ListForm, ctx): Node => {
    const args = form.items.slice(1);
    if (args.length !== 1 && args.length !== 3) {
      throw a.error("invalid_form", "expected (where field) or (where field op value)", form, "e.g. (where :status = \"active\")");
    }
    const path = fieldPath(a, args[0]);
    if (args.length === 1) return { op: "where", path, cmp: null, value: null, loc: form.loc };
    const opForm = args[1];
    if (opForm.type !== "symbol" || !(WHERE_OPS as readonly string[]).includes(opForm.name)) {
      throw a.error("invalid_form", `unknown where operator ${describeForm(opForm)}`, opForm, `use one of: ${WHERE_OPS.join(" ")}`);
    }
    return { op: "where", path, cmp: opForm.name, value: a.analyze(args[2], notTail(ctx)), loc: form.loc };
  },
};
