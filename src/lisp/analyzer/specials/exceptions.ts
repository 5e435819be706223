// try / catch / finally. Ordinary errors (type errors, tool errors, throw) can be caught;
// sandbox limit errors cannot, and a finally block never runs while one propagates.
// Several catch clauses may name Java exception classes, which map onto error kinds.
import { isSym, type Form } from "../../forms.js";
import { recurBlockedBy } from "../analyze.js";
import type { CatchClause } from "../nodes.js";
import { Scope } from "../scope.js";
import type { SpecialForm } from "./types.js";

type ListForm = Extract<Form, { type: "list" }>;

/**
 * Error kinds a Java exception class catches. Any other class (Exception, Throwable,
 * :default...) catches every catchable error.
 */
const CLASS_KINDS: Readonly<Record<string, readonly string[]>> = {
  ArithmeticException: ["arithmetic_error"],
  ExceptionInfo: ["exception"],
  "clojure.lang.ExceptionInfo": ["exception"],
  NumberFormatException: ["value_error", "type_error"],
  IllegalArgumentException: ["type_error", "value_error", "arity_error"],
  IllegalStateException: ["value_error"],
  ClassCastException: ["type_error"],
  NullPointerException: ["type_error"],
  IndexOutOfBoundsException: ["index_out_of_bounds"],
  ArrayIndexOutOfBoundsException: ["index_out_of_bounds"],
  StringIndexOutOfBoundsException: ["index_out_of_bounds"],
};

function kindsOf(cls: Form): readonly string[] | null {
  if (cls.type !== "symbol") return null;
  const name = cls.name.startsWith("java.lang.") ? cls.name.slice("java.lang.".length) : cls.name;
  return Object.hasOwn(CLASS_KINDS, name) ? CLASS_KINDS[name] : null;
}

export const try_: SpecialForm = {
  syntax: "(try body... (catch e handler...) (finally cleanup...))",
  doc: "On an error, binds e to {:kind :message :data} and runs the handler; (catch ArithmeticException e ...) and other Java classes catch their kinds. Limits cannot be caught.",
  examples: [
    ["(try (/ 1 0) (catch e (:kind e)))", ":arithmetic_error"],
    ["(try (/ 1 0) (catch ExceptionInfo e :info) (catch ArithmeticException e :math))", ":math"],
  ],
  analyze: (a, form, ctx) => {
    const items = form.items.slice(1);
    const isClause = (f: Form, name: string): boolean => f.type === "list" && isSym(f.items[0], name);
    const body = items.filter((f) => !isClause(f, "catch") && !isClause(f, "finally"));
    const finallies = items.filter((f) => isClause(f, "finally"));
    if (finallies.length > 1) throw a.error("invalid_form", "only one finally clause is allowed", finallies[1]);
    const bodyCtx = { scope: ctx.scope, tail: false, recur: recurBlockedBy(ctx, "try") };
    const catches: CatchClause[] = items
      .filter((f) => isClause(f, "catch"))
      .map((f) => {
        const c = f as ListForm;
        // (catch e ...) or Clojure's (catch Exception e ...) / (catch :default e ...).
        const rest = c.items.slice(1);
        const first = rest[0];
        const isClass = first !== undefined && ((first.type === "symbol" && /^[A-Z]|\./.test(first.name)) || first.type === "keyword");
        const nameIdx = isClass && isSym(rest[1]) ? 1 : 0;
        const name = rest[nameIdx];
        if (!isSym(name)) throw a.error("invalid_form", "expected (catch e handler...) or (catch ExceptionClass e handler...)", c);
        const scope = new Scope(ctx.scope, ctx.scope.fn);
        const slot = scope.declare(name.name);
        return { kinds: nameIdx === 1 ? kindsOf(first) : null, slot, handler: a.body(rest.slice(nameIdx + 1), { scope, tail: false, recur: bodyCtx.recur }, c.loc) };
      });
    const fin = finallies.length === 1 ? a.body((finallies[0] as ListForm).items.slice(1), bodyCtx, finallies[0].loc) : null;
    return { op: "try", body: a.body(body, bodyCtx, form.loc), catches, finally: fin, loc: form.loc };
  },
};
