// def, defn, defonce, declare, fn and #(...) function literals.
import { isBuiltinName } from "../../core/registry.js";
import { describeForm, formText, isSym, type Form } from "../../forms.js";
import type { Analyzer, Ctx, ListForm, RecurTarget } from "../analyze.js";
import { bindPattern, hiddenName } from "../destructure.js";
import type { Bind, FnArityNode, LocalRef, Node } from "../nodes.js";
import { FnScope, Scope } from "../scope.js";
import type { SpecialForm } from "./types.js";

const RESERVED = new Set(["nil", "true", "false", "&"]);

function checkDefName(a: Analyzer, f: Form | undefined, what: string, form: ListForm, isSpecial: (n: string) => boolean): string {
  if (!isSym(f)) throw a.error("invalid_form", `${what} needs a name first, got ${f ? describeForm(f) : "nothing"}`, f ?? form, `(${what} name ...)`);
  const name = f.name;
  if (name.includes("/") && name !== "/") throw a.error("invalid_form", `cannot define a qualified name: ${name}`, f, "use a plain name");
  if (RESERVED.has(name) || isSpecial(name)) throw a.error("cannot_shadow_builtin", `cannot redefine ${name}: it is a special form`, f, "pick another name");
  if (isBuiltinName(name)) throw a.error("cannot_shadow_builtin", `cannot redefine the builtin ${name}`, f, `pick another name, e.g. my-${name}`);
  return name;
}

function defForm(onlyIfUnbound: boolean, what: string): SpecialForm["analyze"] {
  return (a, form, ctx) => {
    const [, nameForm, ...rest] = form.items;
    const name = checkDefName(a, nameForm, what, form, (n) => a.isSpecial(n));
    let doc: string | undefined;
    let valueForm: Form | undefined;
    if (rest.length === 2 && rest[0].type === "string") {
      doc = rest[0].value;
      valueForm = rest[1];
    } else if (rest.length === 1) {
      valueForm = rest[0];
    } else {
      throw a.error("invalid_form", `expected (${what} name value) or (${what} name "docstring" value), got ${rest.length} forms after the name`, form);
    }
    const inner: Ctx = { scope: ctx.scope, tail: false, recur: ctx.recur };
    const init =
      valueForm.type === "list" && isSym(valueForm.items[0], "fn") && !isSym(valueForm.items[1])
        ? analyzeFn(a, valueForm, inner, name)
        : a.analyze(valueForm, inner);
    return { op: "def", name, doc, init, source: formText(a.env.source, form), onlyIfUnbound, loc: form.loc };
  };
}

export const def: SpecialForm = {
  syntax: '(def name "doc"? value)',
  doc: "Defines a global that persists across turns; the docstring is kept and shown in summaries.",
  examples: [["(def x 10) (* x 2)", "20"]],
  analyze: defForm(false, "def"),
};

export const defonce: SpecialForm = {
  syntax: '(defonce name "doc"? value)',
  doc: "Like def, but only when the name is not defined yet.",
  examples: [["(defonce y 1) (defonce y 2) y", "1"]],
  analyze: defForm(true, "defonce"),
};

function analyzeDefn(a: Analyzer, form: ListForm, ctx: Ctx, what: string): Node {
  const [, nameForm, ...rest] = form.items;
  const name = checkDefName(a, nameForm, what, form, (n) => a.isSpecial(n));
  let doc: string | undefined;
  let i = 0;
  if (rest[i]?.type === "string" && rest.length > i + 1) doc = (rest[i++] as { value: string }).value;
  if (rest[i]?.type === "map" && rest.length > i + 1) i++;
  const clauses = rest.slice(i);
  if (clauses.length === 0) throw a.error("invalid_form", `${what} ${name} needs a parameter vector`, form, `(${what} ${name} [x] body)`);
  if (clauses[0].type !== "vector" && clauses[0].type !== "list") {
    throw a.error("invalid_form", `${what} ${name} needs a parameter vector, got ${describeForm(clauses[0])}`, clauses[0], `(${what} ${name} [x] body)`);
  }
  const fnForm: ListForm = { type: "list", items: [{ type: "symbol", name: "fn", loc: form.loc }, ...clauses], loc: form.loc };
  // A docstring written after the parameters (a common slip) is taken as the docstring.
  if (!doc && clauses[0].type === "vector" && clauses.length > 2 && clauses[1].type === "string") doc = clauses[1].value;
  const init = analyzeFn(a, fnForm, { scope: ctx.scope, tail: false, recur: null }, name);
  return { op: "def", name, doc, init, source: formText(a.env.source, form), onlyIfUnbound: false, loc: form.loc };
}

export const defn: SpecialForm = {
  syntax: '(defn name "doc"? [params] body...)',
  doc: "Defines a named function (multi-arity: (defn f ([x] ...) ([x y] ...))); the docstring is kept.",
  examples: [['(defn add "Adds two numbers" [a b] (+ a b)) (add 2 3)', "5"]],
  analyze: (a, form, ctx) => analyzeDefn(a, form, ctx, "defn"),
};

export const defnPrivate: SpecialForm = {
  syntax: "(defn- name [params] body...)",
  doc: "Same as defn (there are no namespaces, so nothing is private).",
  analyze: (a, form, ctx) => analyzeDefn(a, form, ctx, "defn-"),
};

export const declare: SpecialForm = {
  syntax: "(declare name...)",
  doc: "Accepted for compatibility: names defined anywhere in the program are already known.",
  analyze: (a, form) => {
    for (const f of form.items.slice(1)) if (!isSym(f)) throw a.error("invalid_form", "declare takes names", f);
    return { op: "const", value: null, loc: form.loc };
  },
};

interface Clause {
  params: Extract<Form, { type: "vector" }>;
  body: Form[];
}

function parseClauses(a: Analyzer, forms: Form[], form: ListForm): Clause[] {
  if (forms[0]?.type === "vector") return [{ params: forms[0], body: forms.slice(1) }];
  if (forms.length === 0) throw a.error("invalid_form", "fn needs a parameter vector", form, "(fn [x] body)");
  return forms.map((f) => {
    if (f.type !== "list" || f.items[0]?.type !== "vector") {
      throw a.error("invalid_form", `expected a parameter vector or arity clauses ([params] body), got ${describeForm(f)}`, f, "(fn [x] body) or (fn ([x] ...) ([x y] ...))");
    }
    return { params: f.items[0] as Clause["params"], body: f.items.slice(1) };
  });
}

function paramShape(a: Analyzer, params: Form[]): { fixed: Form[]; rest: Form | null } {
  const amp = params.findIndex((p) => isSym(p, "&"));
  if (amp < 0) return { fixed: params, rest: null };
  if (amp !== params.length - 2) throw a.error("invalid_form", "& must be followed by exactly one parameter", params[amp], "(fn [a & more] ...)");
  return { fixed: params.slice(0, amp), rest: params[amp + 1] };
}

/** Analyzes (fn name? [params] body...) or (fn name? ([params] body...)...). */
export function analyzeFn(a: Analyzer, form: ListForm, ctx: Ctx, defName?: string): Node {
  let items = form.items.slice(1);
  let selfName: string | null = null;
  if (isSym(items[0])) {
    selfName = items[0].name;
    items = items.slice(1);
  }
  const clauses = parseClauses(a, items, form);
  const fnScope = new FnScope(ctx.scope.fn);
  const outer = new Scope(ctx.scope, fnScope);
  if (selfName) outer.declareSelf(selfName);
  const shapes = clauses.map((c) => paramShape(a, c.params.items));
  fnScope.reserve(Math.max(...shapes.map((s) => s.fixed.length + (s.rest ? 1 : 0))));
  const seen = new Set<number>();
  let variadicCount = 0;
  const arities: FnArityNode[] = clauses.map((c, k) => {
    const { fixed, rest } = shapes[k];
    if (rest) {
      if (++variadicCount > 1) throw a.error("invalid_form", "a function can have only one variadic arity", c.params);
    } else if (seen.has(fixed.length)) {
      throw a.error("invalid_form", `two arities with ${fixed.length} parameters`, c.params);
    }
    seen.add(fixed.length);
    return analyzeArity(a, c, fixed, rest, outer);
  });
  const variadic = arities.find((x) => x.variadic);
  if (variadic && arities.some((x) => !x.variadic && x.required > variadic.required)) {
    throw a.error("invalid_form", "a fixed arity cannot have more parameters than the variadic one", form);
  }
  return { op: "fn", name: selfName ?? defName ?? null, scope: fnScope, arities, captures: fnScope.captures, loc: form.loc };
}

function analyzeArity(a: Analyzer, c: Clause, fixed: Form[], rest: Form | null, outer: Scope): FnArityNode {
  const scope = new Scope(outer, outer.fn);
  const params: LocalRef[] = [];
  const patterns: Array<[Form, LocalRef]> = [];
  const all = rest ? [...fixed, rest] : fixed;
  all.forEach((p, i) => {
    if (isSym(p)) {
      if (RESERVED.has(p.name) || p.name.includes("/")) throw a.error("invalid_form", `invalid parameter name ${p.name}`, p);
      params.push(scope.bindAt(p.name, i));
    } else if (p.type === "vector" || p.type === "map") {
      const ref = scope.bindAt(hiddenName("p"), i);
      params.push(ref);
      patterns.push([p, ref]);
    } else {
      throw a.error("invalid_form", `invalid parameter ${describeForm(p)}: expected a name or a destructuring pattern`, p, "(fn [x {:keys [k]} [a b]] ...)");
    }
  });
  const prelude: Bind[] = [];
  for (const [p, ref] of patterns) bindPattern(a, p, { op: "local", ref, name: "", loc: p.loc }, scope, prelude, p === rest);
  const recur: RecurTarget = { targets: params, what: "fn", used: false };
  if (c.body.length > 1 && c.body[0].type === "map" && c.body[0].items.some((k) => k.type === "keyword" && (k.name === "pre" || k.name === "post"))) {
    throw a.error("invalid_form", "pre/post condition maps are not supported", c.body[0], "check arguments in the body, e.g. (when-not (pos? x) (fail \"x must be positive\"))");
  }
  const body = a.body(c.body, { scope, tail: true, recur }, c.params.loc);
  return {
    required: fixed.length,
    variadic: rest !== null,
    params,
    prelude,
    body,
    loops: recur.used,
    paramText: formText(a.env.source, c.params),
  };
}

export const fn: SpecialForm = {
  syntax: "(fn name? [params] body...)",
  doc: "An anonymous function; destructuring and & rest parameters work; (fn ([x] ...) ([x y] ...)) for several arities.",
  examples: [["((fn [x] (* x x)) 4)", "16"]],
  analyze: (a, form, ctx) => analyzeFn(a, form, ctx),
};

function scanPercent(forms: Form[], acc: { max: number; rest: boolean }): void {
  for (const f of forms) {
    if (f.type === "symbol") {
      if (f.name === "%") acc.max = Math.max(acc.max, 1);
      else if (f.name === "%&") acc.rest = true;
      else if (/^%[1-9][0-9]?$/.test(f.name)) acc.max = Math.max(acc.max, Number(f.name.slice(1)));
    } else if ("items" in f) {
      scanPercent(f.items, acc);
    }
  }
}

export const fnLiteral: SpecialForm = {
  syntax: "#(body with % %1 %2 %&)",
  doc: "Short function literal: % (or %1) is the first argument, %2 the second, %& the rest.",
  examples: [["(map #(* % 2) [1 2 3])", "[2 4 6]"]],
  analyze: (a, form, ctx) => {
    const acc = { max: 0, rest: false };
    scanPercent(form.items, acc);
    const params: Form[] = [];
    for (let i = 1; i <= acc.max; i++) params.push({ type: "symbol", name: `%${i}`, loc: form.loc });
    if (acc.rest) params.push({ type: "symbol", name: "&", loc: form.loc }, { type: "symbol", name: "%&", loc: form.loc });
    const body: Form = form.items.length === 0 ? { type: "nil", loc: form.loc } : { type: "list", items: form.items, loc: form.loc };
    const fnForm: ListForm = {
      type: "list",
      items: [{ type: "symbol", name: "fn", loc: form.loc }, { type: "vector", items: params, loc: form.loc }, body],
      loc: form.loc,
    };
    const node = analyzeFnWithAlias(a, fnForm, ctx, acc.max >= 1);
    return node;
  },
};

// `%` is the same parameter as `%1`: bind both names to slot 0.
function analyzeFnWithAlias(a: Analyzer, form: ListForm, ctx: Ctx, alias: boolean): Node {
  if (!alias) return analyzeFn(a, form, ctx);
  const fnScope = new FnScope(ctx.scope.fn);
  const outer = new Scope(ctx.scope, fnScope);
  outer.bindAt("%", 0);
  const params = (form.items[1] as Clause["params"]).items;
  const shape = paramShape(a, params);
  fnScope.reserve(shape.fixed.length + (shape.rest ? 1 : 0));
  const arity = analyzeArity(a, { params: form.items[1] as Clause["params"], body: form.items.slice(2) }, shape.fixed, shape.rest, outer);
  return { op: "fn", name: null, scope: fnScope, arities: [arity], captures: fnScope.captures, loc: form.loc };
}
