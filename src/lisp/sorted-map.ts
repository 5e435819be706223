// A large sorted map: an immutable Map (its own lookups, =, zero keys and held keys) beside a
// persistent AVL tree of its keys in its order, so assoc, dissoc and conj are O(log n) wherever
// the key falls, as in Clojure's PersistentTreeMap. It is an immutable map in every other respect
// (merge, update, withMutations, iteration) and is ordered: it iterates in key order. A sorted set
// is an OrderedSet around one of these.
import { is, Map as IMap, OrderedMap, OrderedSet } from "ptc-immutable";
import { chargeIfRunning, tickIfRunning } from "./runtime.js";
import type { LMap, LSet, Value } from "./values.js";

export type Order = (a: Value, b: Value) => number;

interface Node {
  readonly key: Value;
  readonly left: Node | null;
  readonly right: Node | null;
  readonly height: number;
}

const height = (n: Node | null): number => (n === null ? 0 : n.height);

function node(key: Value, left: Node | null, right: Node | null): Node {
  return { key, left, right, height: Math.max(height(left), height(right)) + 1 };
}

function balance(key: Value, left: Node | null, right: Node | null): Node {
  const hl = height(left);
  const hr = height(right);
  if (hl > hr + 1) {
    const l = left as Node;
    if (height(l.left) >= height(l.right)) return node(l.key, l.left, node(key, l.right, right));
    const lr = l.right as Node;
    return node(lr.key, node(l.key, l.left, lr.left), node(key, lr.right, right));
  }
  if (hr > hl + 1) {
    const r = right as Node;
    if (height(r.right) >= height(r.left)) return node(r.key, node(key, left, r.left), r.right);
    const rl = r.left as Node;
    return node(rl.key, node(key, left, rl.left), node(r.key, rl.right, r.right));
  }
  return node(key, left, right);
}

function insert(t: Node | null, key: Value, cmp: Order): Node {
  if (t === null) return node(key, null, null);
  const c = cmp(key, t.key);
  if (c < 0) return balance(t.key, insert(t.left, key, cmp), t.right);
  if (c > 0) return balance(t.key, t.left, insert(t.right, key, cmp));
  return t;
}

function removeMin(t: Node): [Node | null, Value] {
  if (t.left === null) return [t.right, t.key];
  const [left, min] = removeMin(t.left);
  return [balance(t.key, left, t.right), min];
}

/** t without `key` where the order places it; t itself when it is not there. */
function remove(t: Node | null, key: Value, cmp: Order): Node | null {
  if (t === null) return null;
  const c = cmp(key, t.key);
  if (c < 0) {
    const left = remove(t.left, key, cmp);
    return left === t.left ? t : balance(t.key, left, t.right);
  }
  if (c > 0) {
    const right = remove(t.right, key, cmp);
    return right === t.right ? t : balance(t.key, t.left, right);
  }
  // Where an inconsistent order places the key, another may be held.
  if (!is(t.key, key)) return t;
  if (t.left === null) return t.right;
  if (t.right === null) return t.left;
  const [right, min] = removeMin(t.right);
  return balance(min, t.left, right);
}

/**
 * t without the key = to `key`, found by a walk: for an order that does not place it where it
 * is (one that never returns 0, #(if (< %1 %2) -1 1)). The map held it, so the tree must let go.
 */
function removeHeld(t: Node | null, key: Value): Node | null {
  const keys: Value[] = [];
  let found = false;
  walk(
    t,
    (k) => {
      if (!found && is(k, key)) found = true;
      else keys.push(k);
      return true;
    },
    false,
  );
  chargeIfRunning(keys.length);
  return build(keys, 0, keys.length);
}

/** The key the tree holds where `cmp` places `key`, or undefined. */
function find(t: Node | null, key: Value, cmp: Order): Value | undefined {
  while (t !== null) {
    const c = cmp(key, t.key);
    if (c === 0) return t.key;
    t = c < 0 ? t.left : t.right;
  }
  return undefined;
}

function build(keys: readonly Value[], from: number, to: number): Node | null {
  if (from >= to) return null;
  const mid = (from + to) >>> 1;
  return node(keys[mid], build(keys, from, mid), build(keys, mid + 1, to));
}

/** Calls f on the keys in order (reversed), stopping when it returns false; whether it ran to the end. */
function walk(t: Node | null, f: (k: Value) => boolean, reverse: boolean): boolean {
  // An explicit stack: the tree is shallow (AVL), but no recursion is needed to walk it.
  const stack: Node[] = [];
  let n = t;
  while (n !== null || stack.length > 0) {
    while (n !== null) {
      stack.push(n);
      n = reverse ? n.right : n.left;
    }
    const top = stack.pop() as Node;
    if (f(top.key) === false) return false;
    n = reverse ? top.left : top.right;
  }
  return true;
}

/** Comparisons an insertion or removal makes in a tree of `size` keys: what it is charged. */
const steps = (size: number): number => Math.ceil(Math.log2(size + 1)) + 1;

const ORDERED = "@@__IMMUTABLE_ORDERED__@@";
// What immutable asks an __iterator for (its Iterator.KEYS and VALUES); anything else is entries.
const ITERATE_KEYS = 0;
const ITERATE_VALUES = 1;

// The fields a sorted tree map holds, beside what an immutable Map instance has.
interface Fields {
  size: number;
  _entries: LMap;
  _tree: Node | null;
  _cmp: Order;
  /** The map of a set: an element the order finds held stays, as its own value. */
  _set: boolean;
  __ownerID: unknown;
  __hash: number | undefined;
  __altered: boolean;
}

type Tree = LMap & Fields;

const proto = Object.create(IMap.prototype) as Tree & Record<string, unknown>;

function make(entries: LMap, tree: Node | null, cmp: Order, set: boolean, ownerID?: unknown): Tree {
  const m = Object.create(proto) as Tree;
  m.size = entries.size;
  m._entries = entries;
  m._tree = tree;
  m._cmp = cmp;
  m._set = set;
  m.__ownerID = ownerID;
  m.__hash = undefined;
  m.__altered = false;
  return m;
}

function update(m: Tree, entries: LMap, tree: Node | null): Tree {
  if (m.__ownerID) {
    m.size = entries.size;
    m._entries = entries;
    m._tree = tree;
    m.__hash = undefined;
    m.__altered = true;
    return m;
  }
  return make(entries, tree, m._cmp, m._set);
}

Object.assign(proto, {
  [ORDERED]: true,
  // Methods that build a new map through the constructor (filter, reverse, ...) make an ordered
  // map of those entries in the same order, as an OrderedMap's do.
  constructor: OrderedMap,
  toString(this: Tree): string {
    return (this as unknown as { __toString(a: string, b: string): string }).__toString("SortedMap {", "}");
  },
  get(this: Tree, k: Value, notSetValue?: unknown): unknown {
    return this._entries.get(k, notSetValue as Value);
  },
  set(this: Tree, k: Value, v: Value): Tree {
    if (this._entries.has(k)) return update(this, this._entries.set(k, v), this._tree);
    chargeIfRunning(steps(this.size));
    // A key the order places where one is held (a comparator's equal) is that key.
    const held = find(this._tree, k, this._cmp);
    if (held !== undefined) return this._set ? this : update(this, this._entries.set(held, v), this._tree);
    return update(this, this._entries.set(k, v), insert(this._tree, k, this._cmp));
  },
  remove(this: Tree, k: Value): Tree {
    if (!this._entries.has(k)) return this;
    chargeIfRunning(steps(this.size));
    const tree = remove(this._tree, k, this._cmp);
    return update(this, this._entries.remove(k), tree === this._tree ? removeHeld(tree, k) : tree);
  },
  clear(this: Tree): Tree {
    if (this.size === 0) return this;
    return update(this, this._entries.clear(), null);
  },
  __iterate(this: Tree, fn: (v: unknown, k: unknown, c: unknown) => unknown, reverse?: boolean): number {
    let n = 0;
    walk(
      this._tree,
      (k) => {
        n++;
        return fn(this._entries.get(k), k, this) !== false;
      },
      reverse === true,
    );
    return n;
  },
  __iterator(this: Tree, type: number, reverse?: boolean): Iterator<unknown> & Iterable<unknown> {
    // Lazily, a key at a time: first and every for..of stopping early read only what they use.
    const entries = this._entries;
    const back = reverse === true;
    const stack: Node[] = [];
    const descend = (n: Node | null): void => {
      for (; n !== null; n = back ? n.right : n.left) stack.push(n);
    };
    descend(this._tree);
    return {
      next(): IteratorResult<unknown> {
        const top = stack.pop();
        if (top === undefined) return { value: undefined, done: true };
        descend(back ? top.left : top.right);
        const k = top.key;
        return { value: type === ITERATE_KEYS ? k : type === ITERATE_VALUES ? entries.get(k) : [k, entries.get(k)], done: false };
      },
      [Symbol.iterator]() {
        return this;
      },
    };
  },
  __ensureOwner(this: Tree, ownerID: unknown): Tree {
    if (ownerID === this.__ownerID) return this;
    if (!ownerID) {
      this.__ownerID = ownerID;
      this.__altered = false;
      return this;
    }
    return make(this._entries, this._tree, this._cmp, this._set, ownerID);
  },
  wasAltered(this: Tree): boolean {
    return this.__altered;
  },
});
proto.delete = proto.remove;

export function isSortedTree(x: unknown): x is LMap {
  return typeof x === "object" && x !== null && Object.getPrototypeOf(x) === proto;
}

/** The tree of a sorted tree map, or of a set around one (an OrderedSet keeps its map as `_map`); undefined for anything else. */
function treeOf(x: LMap | LSet): Tree | undefined {
  if (isSortedTree(x)) return x as Tree;
  const inner = (x as unknown as { _map?: unknown })._map;
  return isSortedTree(inner) ? (inner as Tree) : undefined;
}

/** The order of a sorted tree map, or of a set around one; undefined for anything else. */
export function treeOrder(x: LMap | LSet): Order | undefined {
  return treeOf(x)?._cmp;
}

/** The map a tree map keeps its entries in (for the key it holds); x itself for any other map. */
export function entriesOf(x: LMap): LMap {
  return isSortedTree(x) ? (x as Tree)._entries : x;
}

/** The key a tree map or set (around one) holds where its order places `key`, or undefined. */
export function treeHeldKey(x: LMap | LSet, key: Value): Value | undefined {
  const t = treeOf(x) as Tree;
  chargeIfRunning(steps(t.size));
  return find(t._tree, key, t._cmp);
}

/** One end of a range: its key, and whether the key itself is left out. */
export interface Bound {
  key: Value;
  strict: boolean;
}

/**
 * The keys of a tree map or set (around one) from `from` to `to` (null: no end) in its order, or
 * reversed: a descent to the first and a walk of those kept, O(log n + k) on a tree that changes
 * between calls. Charged for the descent; what it returns is the caller's to charge.
 */
export function treeRange(x: LMap | LSet, from: Bound | null, to: Bound | null, reverse: boolean): Value[] {
  const t = treeOf(x) as Tree;
  const cmp = t._cmp;
  chargeIfRunning(2 * steps(t.size));
  const afterFrom = (k: Value): boolean => from === null || (from.strict ? cmp(k, from.key) > 0 : cmp(k, from.key) >= 0);
  const beforeTo = (k: Value): boolean => to === null || (to.strict ? cmp(k, to.key) < 0 : cmp(k, to.key) <= 0);
  // Walking forward, a node past the start is kept on the stack with its left side to come; one
  // before it is passed over with all its left side. Backward, the same from the other end.
  const inside = reverse ? beforeTo : afterFrom;
  const within = reverse ? afterFrom : beforeTo;
  const stack: Node[] = [];
  const descend = (n: Node | null): void => {
    while (n !== null) {
      if (inside(n.key)) {
        stack.push(n);
        n = reverse ? n.right : n.left;
      } else n = reverse ? n.left : n.right;
    }
  };
  descend(t._tree);
  const out: Value[] = [];
  for (let top = stack.pop(); top !== undefined && within(top.key); top = stack.pop()) {
    tickIfRunning();
    out.push(top.key);
    descend(reverse ? top.left : top.right);
  }
  return out;
}

/** A tree map of pairs already in `cmp` order with distinct keys. */
export function treeMapOf(pairs: readonly [Value, Value][], cmp: Order, set = false): LMap {
  const keys = pairs.map((p) => p[0]);
  const entries = IMap<Value, Value>().withMutations((m) => {
    for (const [k, v] of pairs) m.set(k, v);
  });
  return make(entries, build(keys, 0, keys.length), cmp, set);
}

/** A tree set of elements already in `cmp` order, distinct. */
export function treeSetOf(xs: readonly Value[], cmp: Order): LSet {
  const map = treeMapOf(
    xs.map((x): [Value, Value] => [x, x]),
    cmp,
    true,
  );
  return (OrderedSet<Value>() as unknown as { __make(map: LMap): LSet }).__make(map);
}
