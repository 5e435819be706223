// The suspendable compile mode, used for programs that can reach a tool. Each node becomes a
// closure returning a value or, while a tool call below it is pending, a promise of the value;
// a node chains on a child's result only when it is a promise, and goes on from where it was
// (the loop index, the clause, the argument), so nothing runs twice. Subtrees that cannot wait
// (no call of a function, tool or builtin that calls back) keep the synchronous closures.
import type { Bind, FnArityNode, ForClause, Node } from "./analyzer/nodes.js";
import { asMap, asSeq, caseChose, CATCHABLE, dotimesCount, forItems, compile, compileBinds, compileFn, errorValue, letfnPatches, mapLiteral, runsFinally, setLiteral, slot, startTool, whereMaker } from "./compile.js";
import { LispError, withLoc, type SourceLoc } from "./errors.js";
import type { BuiltinDef } from "./core/registry.js";
import { callAsync, callAsync1, callAsync2, Closure, RECUR, type AsyncCode, type Frame } from "./fn.js";
import { hasKey, lookup } from "./lookup.js";
import { capturedText, chargeLoop, checkCollectionSize, run, type Captured } from "./runtime.js";
import { FailSignal, ReturnSignal } from "./signals.js";
import { after, andThen, isPending, located, syncCall, type Maybe } from "./suspend.js";
import { Keyword, truthy, typeName, Var, type Value } from "./values.js";
import { Vec } from "./vector.js";

type Binder = (fr: Frame) => void | Promise<Value>;

const safe = new WeakMap<Node, boolean>();

/** The nodes directly below `node`, for the analyses here. */
export function children(node: Node): Node[] {
  switch (node.op) {
    case "const":
    case "local":
    case "global":
    case "data":
    case "tool-ref":
      return [];
    case "if":
      return [node.test, node.then, node.else];
    case "do":
      return node.body;
    case "with-out-str":
    case "return":
    case "fail":
      return node.op === "with-out-str" ? [node.body] : [node.value];
    case "letfn":
      return [...node.fns, node.body];
    case "let":
      return [...node.binds.map((b) => b.init), node.body];
    case "loop":
      return [...node.inits, ...node.preludes.flat().map((b) => b.init), node.body];
    case "recur":
      return node.args;
    case "fn":
      return node.arities.flatMap((a) => [...a.prelude.map((b) => b.init), a.body]);
    case "call":
      return [node.fn, ...node.args];
    case "builtin-call":
    case "tool":
      return node.args;
    case "def":
      return [node.init];
    case "vector":
    case "set":
    case "map":
    case "and":
    case "or":
      return node.items;
    case "case":
      return [node.test, ...node.branches, ...(node.dflt ? [node.dflt] : [])];
    case "for":
      return [...node.clauses.flatMap(clauseNodes), node.body];
    case "dotimes":
      return [node.count, node.body];
    case "where":
      return node.value ? [node.value] : [];
    case "try":
      return [node.body, ...node.catches.map((c) => c.handler), ...(node.finally ? [node.finally] : [])];
    case "destructure":
      return node.kind === "seq" || node.kind === "map" ? [node.init] : node.kind === "key" && node.dflt ? [node.dflt] : [];
  }
}

function clauseNodes(c: ForClause): Node[] {
  switch (c.kind) {
    case "bind":
      return [c.coll, ...c.prelude.map((b) => b.init)];
    case "let":
      return c.binds.map((b) => b.init);
    default:
      return [c.test];
  }
}

// Builtins the compiler turns into inline arithmetic and comparisons: they never call back.
const FIRST_ORDER = new Set(["+", "-", "*", "<", ">", "<=", ">=", "=", "inc", "dec", "zero?"]);

/**
 * Whether a node can never wait on a tool: it calls no function value, no tool and no builtin
 * that could call one back. A function literal only makes a closure, so it is safe too.
 */
export function syncSafe(node: Node): boolean {
  let v = safe.get(node);
  if (v !== undefined) return v;
  switch (node.op) {
    case "call":
    case "tool":
      v = false;
      break;
    case "fn":
      v = true;
      break;
    case "builtin-call":
      v = FIRST_ORDER.has(node.builtin.def.name) && node.args.every(syncSafe);
      break;
    default:
      v = children(node).every(syncSafe);
  }
  safe.set(node, v);
  return v;
}

/** Whether a program reaches a tool by itself: a tool call or a tool passed as a value. */
export function usesTools(node: Node): boolean {
  return node.op === "tool" || node.op === "tool-ref" || children(node).some(usesTools);
}

/** An arity's body in the suspendable mode (made when a suspendable program first calls it). */
export function compileArityAsync(a: FnArityNode): AsyncCode {
  const body = compileAsync(a.body);
  if (a.prelude.length === 0) return body;
  const prelude = bindsAsync(a.prelude);
  return (fr) => {
    const p = prelude(fr);
    return p === undefined ? body(fr) : after(p, () => body(fr));
  };
}

export function compileAsync(node: Node): AsyncCode {
  if (syncSafe(node)) return compile(node);
  switch (node.op) {
    case "if": {
      const test = compileAsync(node.test);
      const yes = compileAsync(node.then);
      const no = compileAsync(node.else);
      return (fr) => {
        const t = test(fr);
        if (isPending(t)) return after(t, (x) => (x !== null && x !== false ? yes(fr) : no(fr)));
        return t !== null && t !== false ? yes(fr) : no(fr);
      };
    }
    case "do": {
      const body = node.body.map(compileAsync);
      return (fr) => sequence(body, fr, 0);
    }
    case "with-out-str": {
      const body = compileAsync(node.body);
      return (fr) => {
        const r = run;
        const outer = r.captured;
        const mine: Captured = { text: "", hidden: null };
        r.captured = mine;
        let v: Maybe;
        try {
          v = body(fr);
        } finally {
          r.captured = outer;
        }
        return isPending(v) ? after(v, () => capturedText(mine)) : capturedText(mine);
      };
    }
    case "letfn": {
      const targets = node.slots.map(slot);
      const makers = node.fns.map(compileFn);
      const body = compileAsync(node.body);
      const patches = letfnPatches(node);
      return (fr) => {
        const made = makers.map((m) => m(fr) as Closure);
        made.forEach((c, i) => (fr[targets[i]] = c));
        made.forEach((c, i) => {
          for (const [j, k] of patches[i]) c.env[j] = made[k];
        });
        return body(fr);
      };
    }
    case "let": {
      const bind = bindsAsync(node.binds);
      const body = compileAsync(node.body);
      return (fr) => {
        const p = bind(fr);
        return p === undefined ? body(fr) : after(p, () => body(fr));
      };
    }
    case "loop":
      return loopAsync(node);
    case "recur": {
      const slots = node.targets.map(slot);
      const args = node.args.map(compileAsync);
      return (fr) =>
        all(args, fr, (vals) => {
          for (let i = 0; i < vals.length; i++) fr[slots[i]] = vals[i];
          return RECUR;
        });
    }
    case "call":
      return callNode(node.fn, node.args, node.loc);
    case "builtin-call":
      return builtinCallNode(node.builtin.def, node.args.map(compileAsync), node.loc);
    case "def": {
      const { name, doc, source, onlyIfUnbound } = node;
      const init = compileAsync(node.init);
      const v = new Var(name);
      return (fr) => {
        if (onlyIfUnbound && run.env.cell(name).bound) return v;
        return andThen(init(fr), (x) => {
          run.env.define(name, x, doc, source);
          return v;
        });
      };
    }
    case "vector": {
      const items = node.items.map(compileAsync);
      return (fr) => all(items, fr, (vals) => Vec.fromArray(vals));
    }
    case "set": {
      const items = node.items.map(compileAsync);
      const loc = node.loc;
      return (fr) => all(items, fr, (vals) => setLiteral(vals, loc));
    }
    case "map": {
      const items = node.items.map(compileAsync);
      const loc = node.loc;
      return (fr) => all(items, fr, (vals) => mapLiteral(vals, loc));
    }
    case "and":
    case "or": {
      const items = node.items.map(compileAsync);
      const isAnd = node.op === "and";
      const from = (fr: Frame, i: number, last: Value): Maybe => {
        let v = last;
        for (; i < items.length; i++) {
          const x = items[i](fr);
          if (isPending(x)) return after(x, (y) => (truthy(y) !== isAnd ? y : from(fr, i + 1, y)));
          v = x;
          if (truthy(v) !== isAnd) return v;
        }
        return v;
      };
      return (fr) => from(fr, 0, isAnd ? true : null);
    }
    case "case": {
      const test = compileAsync(node.test);
      const branches = node.branches.map(compileAsync);
      const dflt = node.dflt ? compileAsync(node.dflt) : null;
      const { table, loc } = node;
      const constant = node.branches.map((b) => b.op === "const");
      const dfltConstant = node.dflt?.op === "const";
      return (fr) =>
        andThen(test(fr), (v) => {
          const i = table.get(v);
          // A constant branch never waits.
          if (i !== undefined) return constant[i as number] ? caseChose(table, v, branches[i as number](fr) as Value) : branches[i as number](fr);
          if (dflt) return dfltConstant ? caseChose(table, v, dflt(fr) as Value) : dflt(fr);
          throw new LispError("value_error", `case: no clause matches ${typeName(v)}`, loc, "add a default expression as the last form of case");
        });
    }
    case "tool": {
      const args = node.args.map(compileAsync);
      const { name, loc } = node;
      return (fr) => all(args, fr, (vals) => startTool(name, vals, loc));
    }
    case "return": {
      const { loc } = node;
      const value = compileAsync(node.value);
      return (fr) =>
        andThen(value(fr), (v) => {
          throw new ReturnSignal(v, loc);
        });
    }
    case "fail": {
      const { loc } = node;
      const value = compileAsync(node.value);
      return (fr) =>
        andThen(value(fr), (v) => {
          throw new FailSignal(v, loc);
        });
    }
    case "for":
      return forAsync(node.clauses, compileAsync(node.body), node.collect);
    case "dotimes":
      return dotimesAsync(slot(node.slot), compileAsync(node.count), compileAsync(node.body), node.loc);
    case "where": {
      const make = whereMaker(node.path, node.cmp);
      const value = compileAsync(node.value as Node);
      return (fr) => andThen(value(fr), make);
    }
    case "try":
      return tryAsync(node);
    case "destructure":
      return destructureAsync(node);
    default:
      return compile(node);
  }
}

/** Runs `codes` in order from `i`, the last one's value. */
function sequence(codes: AsyncCode[], fr: Frame, i: number): Maybe {
  const last = codes.length - 1;
  for (; i < last; i++) {
    const v = codes[i](fr);
    if (isPending(v)) return after(v, () => sequence(codes, fr, i + 1));
  }
  return codes[last](fr);
}

/** Evaluates `codes` left to right, then `k` of their values. */
function all(codes: AsyncCode[], fr: Frame, k: (vals: Value[]) => Maybe): Maybe {
  return allFrom(codes, fr, new Array<Value>(codes.length), 0, k);
}

function allFrom(codes: AsyncCode[], fr: Frame, out: Value[], i: number, k: (vals: Value[]) => Maybe): Maybe {
  for (; i < codes.length; i++) {
    const v = codes[i](fr);
    if (isPending(v)) {
      const at = i;
      return after(v, (x) => {
        out[at] = x;
        return allFrom(codes, fr, out, at + 1, k);
      });
    }
    out[i] = v;
  }
  return k(out);
}

/** Bindings in order; undefined when all were made at once, a promise while one waits. */
function bindsAsync(binds: Bind[]): Binder {
  if (binds.every((b) => syncSafe(b.init))) {
    const sync = compileBinds(binds);
    return (fr) => {
      sync(fr);
      return undefined;
    };
  }
  const targets = binds.map((b) => slot(b.target));
  const inits = binds.map((b) => compileAsync(b.init));
  const from = (fr: Frame, i: number): void | Promise<Value> => {
    for (; i < inits.length; i++) {
      const v = inits[i](fr);
      if (isPending(v)) {
        const at = i;
        return after(v, (x) => {
          fr[targets[at]] = x;
          return from(fr, at + 1) ?? null;
        });
      }
      fr[targets[i]] = v;
    }
    return undefined;
  };
  return (fr) => from(fr, 0);
}

/** A call of a builtin: its arguments, then the builtin, which may wait only if it calls back. */
function builtinCallNode(d: BuiltinDef, args: AsyncCode[], loc: SourceLoc): AsyncCode {
  const suspendable = d.suspendable;
  let apply: (vals: Value[]) => Maybe;
  if (suspendable !== undefined) {
    apply = (vals) => {
      try {
        const v = suspendable(vals);
        return isPending(v) ? located(v, loc) : v;
      } catch (e) {
        throw withLoc(e, loc);
      }
    };
  } else if (FIRST_ORDER.has(d.name)) {
    const f2 = d.f2;
    if (args.length === 2 && f2 !== undefined) {
      const [a0, a1] = args;
      const apply2 = (x: Value, y: Value): Value => {
        try {
          return f2(x, y);
        } catch (e) {
          throw withLoc(e, loc);
        }
      };
      return (fr) => {
        const x = a0(fr);
        if (isPending(x)) return after(x, (v) => andThen(a1(fr), (w) => apply2(v, w)));
        const y = a1(fr);
        return isPending(y) ? after(y, (w) => apply2(x, w)) : apply2(x, y);
      };
    }
    const fn = d.fn;
    apply = (vals) => {
      try {
        return fn(vals);
      } catch (e) {
        throw withLoc(e, loc);
      }
    };
  } else {
    const fn = d.fn;
    apply = (vals) => syncCall(fn, vals, loc);
  }
  return argsThen(args, apply);
}

/**
 * Evaluates `codes` and gives their values to `k`; one and two arguments are read into the
 * array only once known, so a call whose arguments do not wait allocates no continuation.
 */
function argsThen(codes: AsyncCode[], k: (vals: Value[]) => Maybe): AsyncCode {
  switch (codes.length) {
    case 1: {
      const [a0] = codes;
      return (fr) => {
        const x = a0(fr);
        return isPending(x) ? after(x, (v) => k([v])) : k([x]);
      };
    }
    case 2: {
      const [a0, a1] = codes;
      return (fr) => {
        const x = a0(fr);
        if (isPending(x)) return after(x, (v) => andThen(a1(fr), (w) => k([v, w])));
        const y = a1(fr);
        return isPending(y) ? after(y, (w) => k([x, w])) : k([x, y]);
      };
    }
    default:
      return (fr) => all(codes, fr, k);
  }
}

function callNode(fnNode: Node, argNodes: Node[], loc: SourceLoc): AsyncCode {
  const args = argNodes.map(compileAsync);
  if (fnNode.op === "const" && fnNode.value instanceof Keyword && (args.length === 1 || args.length === 2)) {
    const k = fnNode.value;
    return argsThen(args, (vals) => lookup(vals[0], k, vals.length === 2 ? vals[1] : null));
  }
  const f = compileAsync(fnNode);
  const invoke = (fv: Value, vals: Value[]): Maybe => {
    try {
      const v = vals.length === 1 ? callAsync1(fv, vals[0]) : vals.length === 2 ? callAsync2(fv, vals[0], vals[1]) : callAsync(fv, vals, loc);
      return isPending(v) ? located(v, loc) : v;
    } catch (e) {
      throw withLoc(e, loc);
    }
  };
  if (args.length === 1) {
    const [a0] = args;
    return (fr) => {
      const fv = f(fr);
      if (isPending(fv)) return after(fv, (g) => andThen(a0(fr), (x) => invoke(g, [x])));
      const x = a0(fr);
      if (isPending(x)) return after(x, (v) => invoke(fv, [v]));
      try {
        const v = callAsync1(fv, x);
        return isPending(v) ? located(v, loc) : v;
      } catch (e) {
        throw withLoc(e, loc);
      }
    };
  }
  if (args.length === 2) {
    const [a0, a1] = args;
    return (fr) => {
      const fv = f(fr);
      if (isPending(fv)) return after(fv, (g) => all(args, fr, (vals) => invoke(g, vals)));
      const x = a0(fr);
      if (isPending(x)) return after(x, (v) => andThen(a1(fr), (w) => invoke(fv, [v, w])));
      const y = a1(fr);
      if (isPending(y)) return after(y, (w) => invoke(fv, [x, w]));
      try {
        const v = callAsync2(fv, x, y);
        return isPending(v) ? located(v, loc) : v;
      } catch (e) {
        throw withLoc(e, loc);
      }
    };
  }
  return (fr) => andThen(f(fr), (fv) => all(args, fr, (vals) => invoke(fv, vals)));
}

function loopAsync(node: Extract<Node, { op: "loop" }>): AsyncCode {
  const loc = node.loc;
  const binds: Bind[] = [];
  node.raws.forEach((raw, i) => {
    binds.push({ target: raw, init: node.inits[i] });
    binds.push(...node.preludes[i]);
  });
  const init = bindsAsync(binds);
  const preludes = node.preludes.flat();
  const again = preludes.length > 0 ? bindsAsync(preludes) : null;
  const body = compileAsync(node.body);
  const spin = (fr: Frame): Maybe => {
    for (;;) {
      const v = body(fr);
      if (isPending(v)) return after(v, (x) => (x === RECUR ? next(fr) : x));
      if (v !== RECUR) return v;
      chargeLoop(loc);
      if (again !== null) {
        const p = again(fr);
        if (p !== undefined) return after(p, () => spin(fr));
      }
    }
  };
  const next = (fr: Frame): Maybe => {
    chargeLoop(loc);
    const p = again === null ? undefined : again(fr);
    return p === undefined ? spin(fr) : after(p, () => spin(fr));
  };
  return (fr) => {
    const p = init(fr);
    return p === undefined ? spin(fr) : after(p, () => spin(fr));
  };
}

function dotimesAsync(i: number, count: AsyncCode, body: AsyncCode, loc: SourceLoc): AsyncCode {
  const from = (fr: Frame, k: number, limit: number): Maybe => {
    for (; k < limit; k++) {
      chargeLoop(loc);
      fr[i] = k;
      const v = body(fr);
      if (isPending(v)) {
        const at = k;
        return after(v, () => from(fr, at + 1, limit));
      }
    }
    return null;
  };
  return (fr) =>
    andThen(count(fr), (n) => from(fr, 0, dotimesCount(n, loc)));
}

type AsyncClause =
  | { kind: "bind"; coll: AsyncCode; raw: number; prelude: Binder | null; loc: SourceLoc }
  | { kind: "let"; binds: Binder }
  | { kind: "when" | "while"; test: AsyncCode };

/** for and doseq: each clause goes on from the element it had reached when a body waits. */
function forAsync(clauseNodes: ForClause[], body: AsyncCode, collect: boolean): AsyncCode {
  const clauses: AsyncClause[] = clauseNodes.map((c) => {
    switch (c.kind) {
      case "bind":
        return { kind: "bind", coll: compileAsync(c.coll), raw: slot(c.raw), prelude: c.prelude.length ? bindsAsync(c.prelude) : null, loc: c.loc };
      case "let":
        return { kind: "let", binds: bindsAsync(c.binds) };
      default:
        return { kind: c.kind, test: compileAsync(c.test) };
    }
  });
  const n = clauses.length;
  const who = collect ? "for" : "doseq";
  // true to go on, false when a :while ended the innermost binding's iteration.
  const step = (fr: Frame, i: number, out: Value[] | null): Maybe => {
    if (i === n) return andThen(body(fr), (v) => keep(out, v));
    const c = clauses[i];
    switch (c.kind) {
      case "bind": {
        const coll = c.coll(fr);
        if (isPending(coll)) return after(located(coll, c.loc), (v) => each(fr, i, c, items(v, c.loc), 0, out));
        return each(fr, i, c, items(coll, c.loc), 0, out);
      }
      case "let": {
        const p = c.binds(fr);
        return p === undefined ? step(fr, i + 1, out) : after(p, () => step(fr, i + 1, out));
      }
      case "when":
      case "while": {
        const go = (x: Value): Maybe => (truthy(x) ? step(fr, i + 1, out) : c.kind === "when");
        return andThen(c.test(fr), go);
      }
    }
  };
  const items = (v: Value, loc: SourceLoc): Value[] => {
    try {
      return forItems(v, who);
    } catch (e) {
      throw withLoc(e, loc);
    }
  };
  type BindClause = Extract<AsyncClause, { kind: "bind" }>;
  // The elements of one binding clause from the k-th on.
  const each = (fr: Frame, i: number, c: BindClause, xs: Value[], k: number, out: Value[] | null): Maybe => {
    for (; k < xs.length; k++) {
      chargeLoop(c.loc);
      fr[c.raw] = xs[k];
      const at = k;
      const p = c.prelude === null ? undefined : c.prelude(fr);
      if (p !== undefined) return after(p, () => inner(fr, i, c, xs, at, out));
      const r = step(fr, i + 1, out);
      if (isPending(r)) return after(r, (go) => (go ? each(fr, i, c, xs, at + 1, out) : true));
      if (r === false) break;
    }
    return true;
  };
  const inner = (fr: Frame, i: number, c: BindClause, xs: Value[], k: number, out: Value[] | null): Maybe =>
    andThen(step(fr, i + 1, out), (go) => (go ? each(fr, i, c, xs, k + 1, out) : true));
  const keep = (out: Value[] | null, v: Value): boolean => {
    if (out !== null) {
      out.push(v);
      if (out.length > run.limits.maxCollectionSize) checkCollectionSize(out.length);
    }
    return true;
  };
  if (!collect) return (fr) => andThen(step(fr, 0, null), () => null);
  return (fr) => {
    const out: Value[] = [];
    return andThen(step(fr, 0, out), () => Vec.fromArray(out));
  };
}

function tryAsync(node: Extract<Node, { op: "try" }>): AsyncCode {
  const body = compileAsync(node.body);
  const catches = node.catches.map((c) => ({ kinds: c.kinds, slot: slot(c.slot), handler: compileAsync(c.handler) }));
  const fin = node.finally ? compileAsync(node.finally) : null;
  const finish = (fr: Frame, v: Value): Maybe => (fin === null ? v : andThen(fin(fr), () => v));
  const rethrow = (fr: Frame, e: unknown): Maybe => {
    if (fin === null || !runsFinally(e)) throw e;
    return andThen(fin(fr), () => {
      throw e;
    });
  };
  const handle = (fr: Frame, e: unknown, depth: number): Maybe => {
    const c = CATCHABLE(e) ? catches.find((k) => k.kinds === null || k.kinds.includes(e.kind)) : undefined;
    run.depth = depth;
    if (c === undefined) return rethrow(fr, e);
    fr[c.slot] = errorValue(e as LispError);
    let v: Maybe;
    try {
      v = c.handler(fr);
    } catch (inner) {
      return rethrow(fr, inner);
    }
    return isPending(v) ? after(v, (x) => finish(fr, x), (inner) => rethrow(fr, inner)) : finish(fr, v);
  };
  return (fr) => {
    const depth = run.depth;
    let v: Maybe;
    try {
      v = body(fr);
    } catch (e) {
      return handle(fr, e, depth);
    }
    return isPending(v) ? after(v, (x) => finish(fr, x), (e) => handle(fr, e, depth)) : finish(fr, v);
  };
}

function destructureAsync(node: Extract<Node, { op: "destructure" }>): AsyncCode {
  const loc = node.loc;
  switch (node.kind) {
    case "seq": {
      const init = compileAsync(node.init);
      return (fr) => andThen(init(fr), (v) => asSeq(v, loc));
    }
    case "map": {
      const init = compileAsync(node.init);
      const restArgs = node.restArgs;
      return (fr) => andThen(init(fr), (v) => asMap(v, restArgs, loc));
    }
    case "key": {
      const src = slot(node.src);
      const key = node.key;
      const dflt = compileAsync(node.dflt as Node);
      return (fr) => {
        const m = fr[src];
        return hasKey(m, key) ? lookup(m, key, null) : dflt(fr);
      };
    }
    default:
      return compile(node);
  }
}
