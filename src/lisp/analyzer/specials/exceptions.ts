// try / catch / finally. Ordinary errors (type errors, tool errors, throw) can be caught;
// sandbox limit errors cannot, and a finally block never runs while one propagates.
import { isSym, type Form } from "../../forms.js";
import type { Node } from "../nodes.js";
import { Scope } from "../scope.js";
import type { SpecialForm } from "./types.js";

export const try_: SpecialForm = {
  syntax: "(try body... (catch e handler...) (finally cleanup...))",
  doc: "Evaluates body; on an error, binds e to {:kind :message :data} and evaluates the handler. Limit errors cannot be caught.",
  examples: [["(try (/ 1 0) (catch e (:kind e)))", ":arithmetic_error"]],
  analyze: (a, form, ctx) => {
    const items = form.items.slice(1);
    const isClause = (f: Form, name: string): boolean => f.type === "list" && isSym(f.items[0], name);
    const body = items.filter((f) => !isClause(f, "catch") && !isClause(f, "finally"));
    const catches = items.filter((f) => isClause(f, "catch"));
    const finallies = items.filter((f) => isClause(f, "finally"));
    if (catches.length > 1) throw a.error("invalid_form", "only one catch clause is supported", catches[1], "(catch e ...) catches every catchable error; dispatch on (:kind e)");
    if (finallies.length > 1) throw a.error("invalid_form", "only one finally clause is allowed", finallies[1]);
    const bodyCtx = { scope: ctx.scope, tail: false, recur: null };
    const bodyNode = a.body(body, bodyCtx, form.loc);
    let handler: Node | null = null;
    let slot = null;
    if (catches.length === 1) {
      const c = catches[0] as Extract<Form, { type: "list" }>;
      // (catch e ...) or Clojure's (catch Exception e ...) / (catch :default e ...).
      const rest = c.items.slice(1);
      const first = rest[0];
      const isClass = first !== undefined && ((first.type === "symbol" && /^[A-Z]|\./.test(first.name)) || first.type === "keyword");
      const nameIdx = isClass && isSym(rest[1]) ? 1 : 0;
      const name = rest[nameIdx];
      if (!isSym(name)) throw a.error("invalid_form", "expected (catch e handler...)", c);
      const scope = new Scope(ctx.scope, ctx.scope.fn);
      slot = scope.declare(name.name);
      handler = a.body(rest.slice(nameIdx + 1), { scope, tail: false, recur: null }, c.loc);
    }
    const fin = finallies.length === 1 ? a.body((finallies[0] as Extract<Form, { type: "list" }>).items.slice(1), bodyCtx, finallies[0].loc) : null;
    return { op: "try", body: bodyNode, slot, handler, finally: fin, loc: form.loc };
  },
};
