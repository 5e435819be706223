// The compiler: analyzed nodes to closures. Each node becomes one JS closure over a flat
// frame, chosen once here, so evaluation never inspects node kinds. Errors thrown by a
// call get that call's source position unless a deeper one was already attached.
import { Map as IMap, Set as ISet } from "ptc-immutable";
import type { Bind, ForClause, LocalRef, Node } from "./analyzer/nodes.js";
import type { Builtin } from "./core/registry.js";
import { equals } from "./equality.js";
import { LispError, withLoc, type SourceLoc } from "./errors.js";
import { callValue, Closure, NativeFn, RECUR, type Arity, type Code, type Frame, type FnTemplate } from "./fn.js";
import { describe } from "./core/args.js";
import { intrinsic1, intrinsic2 } from "./intrinsics.js";
import { hasKey, lookup } from "./lookup.js";
import { capturedText, chargeLoop, checkCollectionSize, run, shownMessage, took, type Captured, type Cell, type GlobalEnv } from "./runtime.js";
import { located } from "./suspend.js";
import { entries, isSeqable, seqArray } from "./seq.js";
import { FailSignal, ReturnSignal } from "./signals.js";
import { chars } from "./text.js";
import { Fn, isNumber, Keyword, keyword, num, truthy, typeName, Var, type LMap, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

export function slot(ref: LocalRef): number {
  return ref.fn.frameIndex(ref);
}

export function compile(node: Node): Code {
  switch (node.op) {
    case "const": {
      const v = node.value;
      return () => v;
    }
    case "local": {
      const i = slot(node.ref);
      return (fr) => fr[i];
    }
    case "global":
      return compileGlobal(node.name, node.loc);
    case "data": {
      const key = node.key;
      const loc = node.loc;
      return () => {
        const d = run.data;
        if (d === null) throw new LispError("unbound_var", `data/${key} is not available: no context was provided`, loc);
        try {
          return d.get(key);
        } catch (e) {
          // A value refused when first read (a cycle, a getter that throws) fails here, at the read.
          throw withLoc(e, loc);
        }
      };
    }
    case "if": {
      const test = compile(node.test);
      const then = compile(node.then);
      const other = compile(node.else);
      return (fr) => {
        const t = test(fr);
        return t !== null && t !== false ? then(fr) : other(fr);
      };
    }
    case "do": {
      const body = node.body.map(compile);
      const last = body.pop() as Code;
      const n = body.length;
      return (fr) => {
        for (let i = 0; i < n; i++) body[i](fr);
        return last(fr);
      };
    }
    case "letfn":
      return compileLetfn(node);
    case "with-out-str": {
      const body = compile(node.body);
      return (fr) => {
        const r = run;
        const outer = r.captured;
        const mine: Captured = { text: "", hidden: null };
        r.captured = mine;
        try {
          body(fr);
        } finally {
          r.captured = outer;
        }
        return capturedText(mine);
      };
    }
    case "let": {
      const bind = compileBinds(node.binds);
      const body = compile(node.body);
      return (fr) => {
        bind(fr);
        return body(fr);
      };
    }
    case "loop":
      return compileLoop(node);
    case "recur":
      return compileRecur(node.targets, node.args);
    case "fn":
      return compileFn(node);
    case "call":
      return compileCall(node.fn, node.args, node.loc);
    case "builtin-call":
      return compileBuiltinCall(node.builtin, node.args.map(compile), node.loc);
    case "def":
      return compileDef(node);
    case "vector": {
      const items = node.items.map(compile);
      return (fr) => Vec.fromArray(items.map((c) => c(fr)));
    }
    case "set": {
      const items = node.items.map(compile);
      const loc = node.loc;
      return (fr) => setLiteral(items.map((c) => c(fr)), loc);
    }
    case "map": {
      const items = node.items.map(compile);
      const loc = node.loc;
      return (fr) => mapLiteral(items.map((c) => c(fr)), loc);
    }
    case "and": {
      const items = node.items.map(compile);
      return (fr) => {
        let v: Value = true;
        for (let i = 0; i < items.length; i++) {
          v = items[i](fr);
          if (v === null || v === false) return v;
        }
        return v;
      };
    }
    case "or": {
      const items = node.items.map(compile);
      return (fr) => {
        let v: Value = null;
        for (let i = 0; i < items.length; i++) {
          v = items[i](fr);
          if (v !== null && v !== false) return v;
        }
        return v;
      };
    }
    case "case":
      return compileCase(node.test, node.table, node.branches, node.dflt, node.loc);
    case "tool": {
      const args = node.args.map(compile);
      const name = node.name;
      const loc = node.loc;
      return (fr) => callTool(name, args.map((c) => c(fr)), loc);
    }
    case "tool-ref": {
      const name = node.name;
      const loc = node.loc;
      const fn = new NativeFn(
        `tool/${name}`,
        (args) => callTool(name, args, loc),
        (args) => startTool(name, args, loc),
      );
      return () => fn;
    }
    case "return": {
      const { loc } = node;
      const value = compile(node.value);
      return (fr) => {
        throw new ReturnSignal(value(fr), loc);
      };
    }
    case "fail": {
      const { loc } = node;
      const value = compile(node.value);
      return (fr) => {
        throw new FailSignal(value(fr), loc);
      };
    }
    case "for":
      return compileFor(node.clauses, compile(node.body), node.collect);
    case "dotimes":
      return compileDotimes(slot(node.slot), compile(node.count), compile(node.body), node.loc);
    case "where":
      return compileWhere(node.path, node.cmp, node.value ? compile(node.value) : null);
    case "try":
      return compileTry(node);
    case "destructure":
      return compileDestructure(node);
  }
}

// A literal's keys are hashed as it is built, which can fail (a key nested past the limit):
// the error is placed at the literal, as it is at a builtin call that hashes.
export function setLiteral(vals: Value[], loc: SourceLoc): Value {
  try {
    return ISet<Value>(vals);
  } catch (e) {
    throw withLoc(e, loc);
  }
}

/** A map literal of its evaluated keys and values, alternating; placed as setLiteral is. */
export function mapLiteral(vals: Value[], loc: SourceLoc): Value {
  try {
    return IMap<Value, Value>().withMutations((m) => {
      for (let i = 0; i < vals.length; i += 2) m.set(vals[i], vals[i + 1]);
    });
  } catch (e) {
    throw withLoc(e, loc);
  }
}

// Only a suspendable program can wait for a tool; evaluate compiles every program that can
// reach one that way, so this is reached only without tools (or by a wrong choice of mode).
function callTool(name: string, args: Value[], loc: SourceLoc): Value {
  if (run.tools === null) throw new LispError("unknown_tool", `tool/${name} is not available: no tools were provided`, loc);
  throw new LispError("internal_error", `internal error: tool/${name} was called from a program not compiled to wait for tools`, loc);
}

/** Calls a tool from suspendable code: a promise of its result. */
export function startTool(name: string, args: Value[], loc: SourceLoc): Promise<Value> {
  const tools = run.tools;
  if (tools === null) throw new LispError("unknown_tool", `tool/${name} is not available: no tools were provided`, loc);
  try {
    return located(tools.call(name, args.length === 1 ? args[0] : Vec.fromArray(args), loc), loc);
  } catch (e) {
    throw withLoc(e, loc);
  }
}

export function compileBinds(binds: Bind[]): (fr: Frame) => void {
  const targets = binds.map((b) => slot(b.target));
  const inits = binds.map((b) => compile(b.init));
  const n = binds.length;
  if (n === 1) {
    const t = targets[0];
    const init = inits[0];
    return (fr) => {
      fr[t] = init(fr);
    };
  }
  return (fr) => {
    for (let i = 0; i < n; i++) fr[targets[i]] = inits[i](fr);
  };
}

function compileGlobal(name: string, loc: SourceLoc): Code {
  let env: GlobalEnv | null = null;
  let cell: Cell | null = null;
  return () => {
    const e = run.env;
    if (e !== env) {
      env = e;
      cell = e.cell(name);
    }
    const c = cell as Cell;
    if (!c.bound) {
      throw new LispError("unbound_var", `${name} is used before it is defined`, loc, `move (def ${name} ...) above its first use`);
    }
    return c.value;
  };
}

function compileDef(node: Extract<Node, { op: "def" }>): Code {
  const { name, doc, source, onlyIfUnbound } = node;
  const init = compile(node.init);
  const v = new Var(name);
  return (fr) => {
    const env = run.env;
    if (onlyIfUnbound && env.cell(name).bound) return v;
    env.define(name, init(fr), doc, source);
    return v;
  };
}

function compileLoop(node: Extract<Node, { op: "loop" }>): Code {
  const loc = node.loc;
  const raws = node.raws.map(slot);
  const inits = node.inits.map(compile);
  const preludes = node.preludes.map((p) => (p.length === 0 ? null : compileBinds(p)));
  const hasPrelude = preludes.some((p) => p !== null);
  const body = compile(node.body);
  const n = raws.length;
  return (fr) => {
    for (let i = 0; i < n; i++) {
      fr[raws[i]] = inits[i](fr);
      const p = preludes[i];
      if (p !== null) p(fr);
    }
    for (;;) {
      const v = body(fr);
      if (v !== RECUR) return v;
      chargeLoop(loc);
      if (hasPrelude) {
        for (let i = 0; i < n; i++) {
          const p = preludes[i];
          if (p !== null) p(fr);
        }
      }
    }
  };
}

function compileRecur(targets: LocalRef[], argNodes: Node[]): Code {
  const slots = targets.map(slot);
  const args = argNodes.map(compile);
  switch (args.length) {
    case 0:
      return () => RECUR;
    case 1: {
      const [s0] = slots;
      const [a0] = args;
      return (fr) => {
        fr[s0] = a0(fr);
        return RECUR;
      };
    }
    case 2: {
      const [s0, s1] = slots;
      const [a0, a1] = args;
      return (fr) => {
        const v0 = a0(fr);
        const v1 = a1(fr);
        fr[s0] = v0;
        fr[s1] = v1;
        return RECUR;
      };
    }
    default: {
      const n = args.length;
      return (fr) => {
        const vals = new Array<Value>(n);
        for (let i = 0; i < n; i++) vals[i] = args[i](fr);
        for (let i = 0; i < n; i++) fr[slots[i]] = vals[i];
        return RECUR;
      };
    }
  }
}

export function compileFn(node: Extract<Node, { op: "fn" }>): Code {
  const scope = node.scope;
  const frameSize = scope.captures.length + scope.slotCount;
  const fixed: Array<Arity | undefined> = [];
  let variadic: Arity | null = null;
  for (const a of node.arities) {
    const prelude = a.prelude.length > 0 ? compileBinds(a.prelude) : null;
    const inner = compile(a.body);
    const body: Code = prelude
      ? (fr) => {
          prelude(fr);
          return inner(fr);
        }
      : inner;
    const arity: Arity = { required: a.required, variadic: a.variadic, frameSize, body, loops: a.loops, params: a.paramText, asyncBody: null, node: a };
    if (a.variadic) variadic = arity;
    else fixed[a.required] = arity;
  }
  const captures = node.captures;
  const selfIndex = captures.indexOf(null);
  const t: FnTemplate = { name: node.name, fixed, variadic, captures: captures.length, selfIndex, loc: node.loc };
  if (captures.length === 0) {
    const shared = new Closure(t, []);
    return () => shared;
  }
  const sources = captures.map((c) => (c === null ? null : slot(c)));
  const n = sources.length;
  return (fr) => {
    const env = new Array<Value>(n);
    for (let i = 0; i < n; i++) {
      const s = sources[i];
      if (s !== null) env[i] = fr[s];
    }
    const c = new Closure(t, env);
    if (selfIndex >= 0) env[selfIndex] = c;
    return c;
  };
}

/**
 * letfn: the functions are made first, then stored in their slots, then each one's captured
 * copies of its siblings (nil when it was made) are set to the siblings, so they can call each
 * other, recursively, like functions defined together.
 */
function compileLetfn(node: Extract<Node, { op: "letfn" }>): Code {
  const targets = node.slots.map(slot);
  const makers = node.fns.map(compileFn);
  const patches = letfnPatches(node);
  const body = compile(node.body);
  const n = makers.length;
  return (fr) => {
    const made = new Array<Closure>(n);
    for (let i = 0; i < n; i++) made[i] = makers[i](fr) as Closure;
    for (let i = 0; i < n; i++) fr[targets[i]] = made[i];
    for (let i = 0; i < n; i++) for (const [j, k] of patches[i]) made[i].env[j] = made[k];
    return body(fr);
  };
}

/** For each letfn function, which of its captures ([env index, sibling index]) are its siblings. */
export function letfnPatches(node: Extract<Node, { op: "letfn" }>): Array<Array<[env: number, sibling: number]>> {
  const targets = node.slots.map(slot);
  return node.fns.map((f) => {
    const out: Array<[env: number, sibling: number]> = [];
    f.captures.forEach((c, j) => {
      const k = c === null ? -1 : targets.indexOf(slot(c));
      if (k >= 0 && c !== null && c.fn === node.slots[k].fn) out.push([j, k]);
    });
    return out;
  });
}

function compileCall(fnNode: Node, argNodes: Node[], loc: SourceLoc): Code {
  const args = argNodes.map(compile);
  if (fnNode.op === "const" && fnNode.value instanceof Keyword) {
    const k = fnNode.value;
    if (args.length === 1) {
      const [a0] = args;
      return (fr) => lookup(a0(fr), k, null);
    }
    if (args.length === 2) {
      const [a0, a1] = args;
      return (fr) => lookup(a0(fr), k, a1(fr));
    }
  }
  const f = compile(fnNode);
  switch (args.length) {
    case 0:
      return (fr) => {
        const fv = f(fr);
        try {
          return fv instanceof Fn ? fv.call([]) : callValue(fv, []);
        } catch (e) {
          throw withLoc(e, loc);
        }
      };
    case 1: {
      const [a0] = args;
      return (fr) => {
        const fv = f(fr);
        const x = a0(fr);
        try {
          return fv instanceof Fn ? fv.call1(x) : callValue(fv, [x]);
        } catch (e) {
          throw withLoc(e, loc);
        }
      };
    }
    case 2: {
      const [a0, a1] = args;
      return (fr) => {
        const fv = f(fr);
        const x = a0(fr);
        const y = a1(fr);
        try {
          return fv instanceof Fn ? fv.call2(x, y) : callValue(fv, [x, y]);
        } catch (e) {
          throw withLoc(e, loc);
        }
      };
    }
    default: {
      const n = args.length;
      return (fr) => {
        const fv = f(fr);
        const vals = new Array<Value>(n);
        for (let i = 0; i < n; i++) vals[i] = args[i](fr);
        try {
          return callValue(fv, vals);
        } catch (e) {
          throw withLoc(e, loc);
        }
      };
    }
  }
}

function compileBuiltinCall(b: Builtin, args: Code[], loc: SourceLoc): Code {
  const d = b.def;
  if (args.length === 1 && d.f1) {
    const f1 = d.f1;
    const [a0] = args;
    const fast = intrinsic1(d.name, a0, f1, loc);
    if (fast) return fast;
    return (fr) => {
      const x = a0(fr);
      try {
        return f1(x);
      } catch (e) {
        throw withLoc(e, loc);
      }
    };
  }
  if (args.length === 2 && d.f2) {
    const f2 = d.f2;
    const [a0, a1] = args;
    const fast = intrinsic2(d.name, a0, a1, f2, loc);
    if (fast) return fast;
    return (fr) => {
      const x = a0(fr);
      const y = a1(fr);
      try {
        return f2(x, y);
      } catch (e) {
        throw withLoc(e, loc);
      }
    };
  }
  const fn = d.fn;
  const n = args.length;
  return (fr) => {
    const vals = new Array<Value>(n);
    for (let i = 0; i < n; i++) vals[i] = args[i](fr);
    try {
      return fn(vals);
    } catch (e) {
      throw withLoc(e, loc);
    }
  };
}

/**
 * A case's constant branch `v`, chosen by test value `key`: what a table holds under that key,
 * marked by it as a lookup's value is (`(case c "K" "kilo" ...)` spells a hidden string's
 * characters as `({"K" "kilo"} c)` does). A computed branch marks what it computes itself.
 */
export function caseChose(table: LMap, key: Value, v: Value): Value {
  return took(table, v, key);
}

function compileCase(testNode: Node, table: LMap, branchNodes: Node[], dfltNode: Node | null, loc: SourceLoc): Code {
  const test = compile(testNode);
  const branches = branchNodes.map(compile);
  const dflt = dfltNode ? compile(dfltNode) : null;
  const constant = branchNodes.map((b) => b.op === "const");
  const dfltConstant = dfltNode?.op === "const";
  return (fr) => {
    const v = test(fr);
    const i = table.get(v);
    if (i !== undefined) return constant[i as number] ? caseChose(table, v, branches[i as number](fr)) : branches[i as number](fr);
    if (dflt) return dfltConstant ? caseChose(table, v, dflt(fr)) : dflt(fr);
    throw new LispError("value_error", `case: no clause matches ${describe(v)}`, loc, "add a default expression as the last form of case");
  };
}

type CompiledClause =
  | { kind: "bind"; coll: Code; raw: number; prelude: ((fr: Frame) => void) | null; loc: SourceLoc }
  | { kind: "let"; binds: (fr: Frame) => void }
  | { kind: "when" | "while"; test: Code };

function compileFor(clauseNodes: ForClause[], body: Code, collect: boolean): Code {
  const clauses: CompiledClause[] = clauseNodes.map((c) => {
    switch (c.kind) {
      case "bind":
        return { kind: "bind", coll: compile(c.coll), raw: slot(c.raw), prelude: c.prelude.length ? compileBinds(c.prelude) : null, loc: c.loc };
      case "let":
        return { kind: "let", binds: compileBinds(c.binds) };
      default:
        return { kind: c.kind, test: compile(c.test) };
    }
  });
  const n = clauses.length;
  // Returns false when a :while ended the innermost enclosing binding's iteration.
  const step = (fr: Frame, i: number, out: Value[] | null): boolean => {
    if (i === n) {
      const v = body(fr);
      if (out !== null) {
        out.push(v);
        if (out.length > run.limits.maxCollectionSize) checkCollectionSize(out.length);
      }
      return true;
    }
    const c = clauses[i];
    switch (c.kind) {
      case "bind": {
        let items: Value[];
        try {
          items = forItems(c.coll(fr), collect ? "for" : "doseq");
        } catch (e) {
          throw withLoc(e, c.loc);
        }
        for (let k = 0; k < items.length; k++) {
          chargeLoop(c.loc);
          fr[c.raw] = items[k];
          if (c.prelude !== null) c.prelude(fr);
          if (!step(fr, i + 1, out)) break;
        }
        return true;
      }
      case "let":
        c.binds(fr);
        return step(fr, i + 1, out);
      case "when":
        return truthy(c.test(fr)) ? step(fr, i + 1, out) : true;
      case "while":
        return truthy(c.test(fr)) ? step(fr, i + 1, out) : false;
    }
  };
  if (!collect) {
    return (fr) => {
      step(fr, 0, null);
      return null;
    };
  }
  return (fr) => {
    const out: Value[] = [];
    step(fr, 0, out);
    return Vec.fromArray(out);
  };
}

/** How many times dotimes runs: Clojure's (long n), so (dotimes [i 2.5]) runs twice. */
export function dotimesCount(n: Value, loc: SourceLoc): number {
  if (!isNumber(n)) throw new LispError("type_error", `dotimes expects a number of times, got ${typeName(n)}`, loc);
  return Math.trunc(num(n));
}

function compileDotimes(i: number, count: Code, body: Code, loc: SourceLoc): Code {
  return (fr) => {
    const limit = dotimesCount(count(fr), loc);
    for (let k = 0; k < limit; k++) {
      chargeLoop(loc);
      fr[i] = k;
      body(fr);
    }
    return null;
  };
}

// Keywords and strings compare as equal names, so (where :status = "active") matches :active.
function looseEquals(a: Value, b: Value): boolean {
  if (a instanceof Keyword && typeof b === "string") return a.name === b;
  if (b instanceof Keyword && typeof a === "string") return b.name === a;
  return equals(a, b);
}

function ordered(a: Value, b: Value, op: string): boolean {
  let x: number | string;
  let y: number | string;
  if (isNumber(a) && isNumber(b)) {
    x = num(a);
    y = num(b);
  } else if (typeof a === "string" && typeof b === "string") {
    x = a;
    y = b;
  } else {
    return false;
  }
  switch (op) {
    case ">":
      return x > y;
    case "<":
      return x < y;
    case ">=":
      return x >= y;
    default:
      return x <= y;
  }
}

function compileWhere(path: Value[], cmp: string | null, valueCode: Code | null): Code {
  const make = whereMaker(path, cmp);
  return valueCode ? (fr) => make(valueCode(fr)) : () => make(null);
}

/** The predicate (where path cmp value) makes, for the value once evaluated. */
export function whereMaker(path: Value[], cmp: string | null): (target: Value) => Value {
  const get = (m: Value): Value => {
    let v = m;
    for (let i = 0; i < path.length; i++) v = lookup(v, path[i], null);
    return v;
  };
  const label = `where ${path.map((p) => (p instanceof Keyword ? ":" + p.name : String(p))).join(" ")}${cmp ? " " + cmp : ""}`;
  return (target) => {
    let test: (v: Value) => boolean;
    switch (cmp) {
      case null:
        test = truthy;
        break;
      case "=":
        test = (v) => looseEquals(v, target);
        break;
      case "not=":
        test = (v) => !looseEquals(v, target);
        break;
      case "includes":
        test = (v) => {
          if (typeof v === "string") return typeof target === "string" ? v.includes(target) : target instanceof Keyword && v.includes(target.name);
          // A field that is no collection has no match; a limit met while searching one stops the run.
          if (v === null || !isSeqable(v)) return false;
          return seqArray(v, "where").some((x) => looseEquals(x, target));
        };
        break;
      case "in":
        test = (v) => {
          if (isSet(target) && target.has(v)) return true;
          if (target === null || typeof target !== "object" || target instanceof Keyword) return false;
          return seqArray(target, "where in").some((x) => looseEquals(v, x));
        };
        break;
      default:
        test = (v) => ordered(v, target, cmp);
    }
    return new NativeFn(label, (args) => {
      if (args.length !== 1) throw new LispError("arity_error", `a where predicate takes 1 argument, got ${args.length}`);
      return test(get(args[0]));
    });
  };
}

export const CATCHABLE = (e: unknown): e is LispError => e instanceof LispError && !e.isLimit && e.kind !== "aborted" && e.kind !== "internal_error";

export function errorValue(e: LispError): Value {
  let m = IMap<Value, Value>().set(keyword("kind"), keyword(e.kind)).set(keyword("message"), shownMessage(e.message));
  if (e.data !== null && e.data !== undefined) m = m.set(keyword("data"), e.data as Value);
  return m;
}

function compileTry(node: Extract<Node, { op: "try" }>): Code {
  const body = compile(node.body);
  const catches = node.catches.map((c) => ({ kinds: c.kinds, slot: slot(c.slot), handler: compile(c.handler) }));
  const fin = node.finally ? compile(node.finally) : null;
  return (fr) => {
    const depth = run.depth;
    let result: Value;
    try {
      result = body(fr);
    } catch (e) {
      const c = CATCHABLE(e) ? catches.find((k) => k.kinds === null || k.kinds.includes(e.kind)) : undefined;
      if (c === undefined) {
        if (fin !== null && runsFinally(e)) {
          run.depth = depth;
          fin(fr);
        }
        throw e;
      }
      run.depth = depth;
      fr[c.slot] = errorValue(e as LispError);
      try {
        result = c.handler(fr);
      } catch (inner) {
        if (fin !== null && runsFinally(inner)) fin(fr);
        throw inner;
      }
    }
    if (fin !== null) fin(fr);
    return result;
  };
}

/** finally runs for values, catchable errors, return and fail; never while a limit error propagates (the program is being stopped). */
export function runsFinally(e: unknown): boolean {
  return CATCHABLE(e) || e instanceof ReturnSignal || e instanceof FailSignal;
}

function destructureError(what: string, v: Value, loc: SourceLoc): LispError {
  return new LispError("destructure_error", `cannot destructure ${typeName(v)} as ${what}`, loc, what === "a map" ? "map patterns ({:keys [..]}) need a map or nil" : "vector patterns ([a b]) need a vector, string or nil");
}

/** What a sequential pattern ([a b]) destructures a value as. */
export function asSeq(v: Value, loc: SourceLoc): Value {
  if (v === null) return v;
  if (v instanceof Vec) return took(v, v);
  if (typeof v === "string") return Vec.fromArray<Value>(partsOf(v, chars(v)));
  if (isMap(v)) return Vec.fromArray(entries(took(v, v) as LMap));
  throw destructureError("a sequence", v, loc);
}

/** The elements a for or doseq binding walks, told to the run's marks. */
export function forItems(coll: Value, who: string): Value[] {
  const items = seqArray(coll, who);
  return typeof coll === "string" ? partsOf(coll, items) : (took(coll, coll), items);
}

/** A string's characters as a program takes them, each told to the run's marks. */
function partsOf(s: string, cs: Value[]): Value[] {
  if (run.marks !== null) for (const c of cs) took(s, c);
  return cs;
}

/** What a map pattern ({:keys [..]}) destructures a value as. */
export function asMap(v: Value, restArgs: boolean, loc: SourceLoc): Value {
  if (v === null) return v;
  if (isMap(v)) return took(v, v);
  // Keyword arguments: (f 1 :k 2) or (f 1 {:k 2}) against [a & {:keys [k]}], as in Clojure 1.11.
  if (restArgs && v instanceof Vec) {
    if (v.size === 1 && isMap(v.get(0))) return v.get(0) as Value;
    const xs = v.toArray();
    // Pairs, then (Clojure 1.11) an optional trailing map whose entries are merged in.
    const trailing = xs.length % 2 === 1 ? xs[xs.length - 1] : null;
    if (trailing !== null && !isMap(trailing)) {
      throw new LispError("destructure_error", `keyword arguments come in key/value pairs: no value supplied for the key ${describe(trailing)}`, loc, "pass keyword arguments as key/value pairs, (f :k 1 :j 2), or as one map, (f {:k 1 :j 2})");
    }
    return IMap<Value, Value>().withMutations((m) => {
      for (let i = 0; i + 1 < xs.length; i += 2) m.set(xs[i], xs[i + 1]);
      if (trailing !== null) for (const [k, x] of trailing) m.set(k, x);
    });
  }
  throw destructureError("a map", v, loc);
}

function compileDestructure(node: Extract<Node, { op: "destructure" }>): Code {
  const loc = node.loc;
  switch (node.kind) {
    case "seq": {
      const init = compile(node.init);
      return (fr) => asSeq(init(fr), loc);
    }
    case "nth": {
      const src = slot(node.src);
      const index = node.index;
      return (fr) => {
        const v = fr[src];
        return v instanceof Vec ? ((v.get(index) as Value | undefined) ?? null) : null;
      };
    }
    case "rest": {
      const src = slot(node.src);
      const index = node.index;
      return (fr) => {
        const v = fr[src];
        if (!(v instanceof Vec) || v.size <= index) return null;
        return v.slice(index);
      };
    }
    case "map": {
      const init = compile(node.init);
      const restArgs = node.restArgs;
      return (fr) => asMap(init(fr), restArgs, loc);
    }
    case "key": {
      const src = slot(node.src);
      const key = node.key;
      const dflt = node.dflt ? compile(node.dflt) : null;
      if (dflt === null) return (fr) => lookup(fr[src], key, null);
      return (fr) => {
        const m = fr[src];
        return hasKey(m, key) ? lookup(m, key, null) : dflt(fr);
      };
    }
  }
}
