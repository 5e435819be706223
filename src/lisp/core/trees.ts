// Walking nested data: clojure.walk's walk/prewalk/postwalk (and the key and replace helpers
// built on them) and tree-seq. Every walk charges fuel per node and stops at the nesting
// limit, so a function that keeps growing the tree (prewalk turning 1 into [1]) ends with
// nesting_too_deep instead of running the host out of stack. Map entries are walked as
// [key value] vectors, as in Clojure; they do not count as a nesting level.
import { typeErr } from "../errors.js";
import { call1 } from "../fn.js";
import { charge, checkCollectionSize, limitError, run, took } from "../runtime.js";
import { isSeqable, seqArray } from "../seq.js";
import { isColl, isMap, isSet, keyword, Keyword, LMap, LSet, truthy, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe } from "./args.js";
import { expectCallable } from "./functions.js";
import type { BuiltinDef } from "./registry.js";

type Step = (x: Value) => Value;

function tooDeep(who: string): never {
  throw limitError(
    "nesting_too_deep",
    `${who}: data nested deeper than the limit of ${run.limits.maxNestingDepth} levels`,
    who === "tree-seq"
      ? "the children function keeps returning deeper nodes; make branch? false for leaves"
      : "either the data is that deep, or the function keeps wrapping values in new collections (x into [x]); return leaves unchanged",
  );
}

function entryResult(who: string, entry: Vec<Value>, r: Value): Vec<Value> | null {
  if (r === null) return null;
  if (r instanceof Vec && r.size === 2) return r;
  throw typeErr(
    `${who}: a map entry ${describe(entry)} became ${describe(r)}, but entries must stay [key value] vectors`,
    "the function also sees each map entry as a [key value] vector: return those unchanged",
  );
}

/**
 * Applies `g` to each child of a collection and rebuilds a collection of the same kind
 * (map entries are given as [k v] vectors). Returns `form` itself when nothing changed.
 */
function walkChildren(who: string, form: Value, g: (child: Value, isEntry: boolean) => Value): Value {
  if (form instanceof Vec) {
    const xs = form.toArray();
    charge(xs.length);
    let changed = false;
    for (let i = 0; i < xs.length; i++) {
      const r = g(xs[i], false);
      if (r !== xs[i]) {
        xs[i] = r;
        changed = true;
      }
    }
    return changed ? Vec.fromArray(xs) : form;
  }
  if (isMap(form)) {
    charge(form.size);
    let changed = false;
    const pairs: Array<Vec<Value> | null> = [];
    for (const [k, v] of form) {
      const entry = Vec.fromArray<Value>([k, v]);
      const r = entryResult(who, entry, g(entry, true));
      if (r === null || r.get(0) !== k || r.get(1) !== v) changed = true;
      pairs.push(r);
    }
    if (!changed) return form;
    return LMap<Value, Value>().withMutations((m) => {
      for (const p of pairs) if (p !== null) m.set(p.get(0) as Value, p.get(1) as Value);
    });
  }
  if (isSet(form)) {
    charge(form.size);
    let changed = false;
    const out: Value[] = [];
    for (const x of form) {
      const r = g(x, false);
      if (r !== x) changed = true;
      out.push(r);
    }
    return changed ? LSet<Value>(out) : form;
  }
  return form;
}

/** Post-order: children first, then `step` on the rebuilt node. */
function postwalkWith(who: string, form: Value, step: Step, depth: number): Value {
  if (depth > run.limits.maxNestingDepth) tooDeep(who);
  charge(1);
  const walked = isColl(form) ? walkChildren(who, form, (c, isEntry) => postwalkWith(who, c, step, isEntry ? depth : depth + 1)) : form;
  return step(walked);
}

/** Pre-order: `step` on the node first, then into the children of what it returned. */
function prewalkWith(who: string, form: Value, step: Step, depth: number): Value {
  if (depth > run.limits.maxNestingDepth) tooDeep(who);
  charge(1);
  const x = step(form);
  return isColl(x) ? walkChildren(who, x, (c, isEntry) => prewalkWith(who, c, step, isEntry ? depth : depth + 1)) : x;
}

function walk(inner: Value, outer: Value, form: Value): Value {
  expectCallable("walk", inner, 1);
  expectCallable("walk", outer, 2);
  return call1(outer, walkChildren("walk", form, (c) => call1(inner, c)));
}

function postwalk(f: Value, form: Value): Value {
  expectCallable("postwalk", f, 1);
  return postwalkWith("postwalk", form, (x) => call1(f, x), 0);
}

function prewalk(f: Value, form: Value): Value {
  expectCallable("prewalk", f, 1);
  return prewalkWith("prewalk", form, (x) => call1(f, x), 0);
}

function rekey(who: string, form: Value, convert: (k: Value) => Value): Value {
  return postwalkWith(
    who,
    form,
    (x) => {
      if (!isMap(x)) return x;
      let changed = false;
      for (const k of x.keys()) {
        if (convert(k) !== k) {
          changed = true;
          break;
        }
      }
      if (!changed) return x;
      return LMap<Value, Value>().withMutations((m) => {
        for (const [k, v] of x) m.set(convert(k), v);
      });
    },
    0,
  );
}

const toKeyword = (k: Value): Value => (typeof k === "string" ? keyword(k) : k);
const toName = (k: Value): Value => (k instanceof Keyword ? k.name : k);

function replacer(who: string, smap: Value): Step {
  if (!isMap(smap)) throw typeErr(`${who} expects a map of replacements first, got ${describe(smap)}`, `e.g. (${who} {:a :b} form) replaces every :a with :b`);
  return (x) => (smap.has(x) ? (smap.get(x) as Value) : x);
}

interface Frame {
  readonly kids: Value[];
  i: number;
}

// Depth-first, pre-order, iterative: the explicit stack is what the nesting limit bounds.
function treeSeq(isBranch: Value, children: Value, root: Value): Value {
  expectCallable("tree-seq", isBranch, 1);
  expectCallable("tree-seq", children, 2);
  const out: Value[] = [];
  const stack: Frame[] = [];
  const max = run.limits.maxNestingDepth;
  const visit = (node: Value): void => {
    charge(1);
    out.push(node);
    checkCollectionSize(out.length);
    if (!truthy(call1(isBranch, node))) return;
    const kids = call1(children, node);
    if (!isSeqable(kids)) throw typeErr(`tree-seq: the children function returned ${describe(kids)} for ${describe(node)}, expected a collection or nil`);
    const arr = seqArray(kids, "tree-seq");
    // The characters of a string the function returned are pieces of it (of a hidden one, hidden).
    if (typeof kids === "string") for (const c of arr) took(kids, c);
    if (arr.length === 0) return;
    if (stack.length >= max) tooDeep("tree-seq");
    stack.push({ kids: arr, i: 0 });
  };
  visit(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.i >= top.kids.length) {
      stack.pop();
      continue;
    }
    visit(top.kids[top.i++]);
  }
  return Vec.fromArray(out);
}

const WALK_NS = ["clojure.walk"] as const;

export const TREES: BuiltinDef[] = [
  {
    name: "walk",
    area: "trees",
    arity: [3, 3],
    params: "[inner outer form]",
    doc: "Applies inner to each element of form (map entries as [k v]), rebuilds the same kind of collection, then applies outer to it.",
    examples: [
      ["(walk inc (fn [v] (apply + v)) [1 2 3])", "9"],
      ["(walk (fn [[k v]] [k (inc v)]) identity {:a 1})", "{:a 2}"],
    ],
    ns: WALK_NS,
    fn: (a) => walk(a[0], a[1], a[2]),
  },
  {
    name: "postwalk",
    area: "trees",
    arity: [2, 2],
    params: "[f form]",
    doc: "Walks form depth-first, calling f on every node after its children were walked (map entries are [k v] vectors).",
    examples: [
      ["(postwalk (fn [x] (if (number? x) (* 2 x) x)) [1 [2 {:a 3}]])", "[2 [4 {:a 6}]]"],
    ],
    ns: WALK_NS,
    fn: (a) => postwalk(a[0], a[1]),
    f2: postwalk,
  },
  {
    name: "prewalk",
    area: "trees",
    arity: [2, 2],
    params: "[f form]",
    doc: "Walks form top-down: calls f on a node, then walks into the children of the result.",
    examples: [["(prewalk (fn [x] (if (map? x) (dissoc x :secret) x)) {:a {:secret 1 :b 2}})", "{:a {:b 2}}"]],
    ns: WALK_NS,
    fn: (a) => prewalk(a[0], a[1]),
    f2: prewalk,
  },
  {
    name: "keywordize-keys",
    area: "trees",
    arity: [1, 1],
    params: "[form]",
    doc: "Turns every string key of every nested map into a keyword.",
    examples: [['(keywordize-keys {"a" {"b" 1}})', "{:a {:b 1}}"]],
    ns: WALK_NS,
    fn: (a) => rekey("keywordize-keys", a[0], toKeyword),
    f1: (x) => rekey("keywordize-keys", x, toKeyword),
  },
  {
    name: "stringify-keys",
    area: "trees",
    arity: [1, 1],
    params: "[form]",
    doc: "Turns every keyword key of every nested map into a string.",
    examples: [['(stringify-keys [{:a 1}])', '[{"a" 1}]']],
    ns: WALK_NS,
    fn: (a) => rekey("stringify-keys", a[0], toName),
    f1: (x) => rekey("stringify-keys", x, toName),
  },
  {
    name: "prewalk-replace",
    area: "trees",
    arity: [2, 2],
    params: "[smap form]",
    doc: "Replaces every node of form that is a key of smap by its value, top-down.",
    examples: [["(prewalk-replace {:a :b} [:a {:a :c}])", "[:b {:b :c}]"]],
    ns: WALK_NS,
    fn: (a) => prewalkWith("prewalk-replace", a[1], replacer("prewalk-replace", a[0]), 0),
    f2: (s, f) => prewalkWith("prewalk-replace", f, replacer("prewalk-replace", s), 0),
  },
  {
    name: "postwalk-replace",
    area: "trees",
    arity: [2, 2],
    params: "[smap form]",
    doc: "Replaces every node of form that is a key of smap by its value, bottom-up.",
    examples: [["(postwalk-replace {1 :one} [1 [2 1]])", "[:one [2 :one]]"]],
    ns: WALK_NS,
    fn: (a) => postwalkWith("postwalk-replace", a[1], replacer("postwalk-replace", a[0]), 0),
    f2: (s, f) => postwalkWith("postwalk-replace", f, replacer("postwalk-replace", s), 0),
  },
  {
    name: "tree-seq",
    area: "trees",
    arity: [3, 3],
    params: "[branch? children root]",
    doc: "Every node of a tree, depth-first in pre-order, as a vector; (children node) is called on nodes where (branch? node) is truthy.",
    examples: [
      ["(tree-seq vector? identity [1 [2 3]])", "[[1 [2 3]] 1 [2 3] 2 3]"],
      ["(mapv :id (tree-seq :kids :kids {:id 1 :kids [{:id 2} {:id 3}]}))", "[1 2 3]"],
    ],
    fn: (a) => treeSeq(a[0], a[1], a[2]),
  },
];
