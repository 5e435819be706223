// Value equality (`=`), hashing and ordering (`compare`, `sort`).
// Numbers compare by value across int and float: (= 1 1.0) is true.
//
// Equality is also what immutable's hashed maps and sets use for collection keys (installed
// below), so every comparison of two values goes through one walk that charges its work to
// the run and remembers the pairs it has proved equal: values that share structure (a vector
// holding the same vector twice, 26 levels deep, is 2^26 leaves but 26 distinct nodes) then
// compare in time proportional to their distinct nodes, not to the leaves they unfold into.
import { hash as ihash, is, isOrdered, Map as IMap, OrderedMap, Set as ISet } from "ptc-immutable";
import { type LispError, nestedTooDeep, typeErr } from "./errors.js";
import { charge, chargeIfRunning, chargeRead, nestingLimit, tickIfRunning } from "./runtime.js";
import { entriesOf } from "./sorted-map.js";
import { Keyword, LFloat, type LMap, type Value, typeName, isMap, isSet } from "./values.js";
import { setElementHash, setKeyEquality, Vec } from "./vector.js";

// After this many collection nodes in one comparison, equal pairs are remembered: small
// comparisons (the common case) allocate nothing.
const REMEMBER_AFTER = 64;

/** State of the comparison in progress (comparisons nest only through themselves). */
let active = 0;
let visited = 0;
let proved: Map<object, Set<object>> | null = null;

// Two strings of one length compare character by character unless they are one string, which
// cannot be told apart from here: from this length on, the compare is charged as a scan (one unit
// per 64 characters, as string builtins are), so comparing 100,000 pairs of equal 1M-character
// strings runs out of fuel instead of running for seconds between clock checks.
const LONG_STRING = 1024;

const chargeStrings = (length: number): void => chargeRead(length, LONG_STRING);

/** `=`: NaN equals nothing, not even itself. */
export function equals(a: Value, b: Value): boolean {
  if (typeof a === "string") {
    if (typeof b === "string" && b.length === a.length) chargeStrings(a.length);
    return a === b;
  }
  if (a === b) return true;
  if (typeof a === "number") return b instanceof LFloat && b.v === a;
  if (a === null || typeof a !== "object") return false;
  if (a instanceof LFloat) return typeof b === "number" ? a.v === b : b instanceof LFloat && a.v === b.v;
  if (a instanceof Keyword) return b instanceof Keyword && sameName(a, b);
  return collEquals(a, b, false);
}

// As hashed keys: like `=`, except NaN finds itself (immutable's rule, so a set holding NaN can
// still be looked up), and what is not a value of ours compares as immutable would.
function keyEquals(a: unknown, b: unknown): boolean {
  if (typeof a === "string") {
    if (typeof b === "string" && b.length === a.length) chargeStrings(a.length);
    return a === b;
  }
  if (a === b) return true;
  if (typeof a === "number") return Number.isNaN(a) ? typeof b === "number" && Number.isNaN(b) : b instanceof LFloat && b.v === a;
  if (a === null || typeof a !== "object") return false;
  if (a instanceof LFloat) return typeof b === "number" ? a.v === b : b instanceof LFloat && a.v === b.v;
  if (a instanceof Keyword) return b instanceof Keyword && sameName(a, b);
  if (a instanceof Vec || isMap(a) || isSet(a)) return collEquals(a as Value, b as Value, true);
  return is(a, b);
}

// A long keyword name is not interned (values.ts), so two equal keywords made apart are compared by reading it.
function sameName(a: Keyword, b: Keyword): boolean {
  if (a !== b && a.name.length === b.name.length) chargeStrings(a.name.length);
  return a.name === b.name;
}

function knownHash(x: object): number | undefined {
  return x instanceof Vec ? x.knownHash() : (x as { __hash?: number }).__hash;
}

function collEquals(a: Value, b: Value, asKeys: boolean): boolean {
  if (!(a instanceof Vec ? b instanceof Vec : isMap(a) ? isMap(b) : isSet(a) && isSet(b))) return false;
  const x = a as Vec<Value> | IMap<Value, Value> | ISet<Value>;
  const y = b as typeof x;
  if (x.size !== y.size) return false;
  const hx = knownHash(x);
  const hy = knownHash(y);
  if (hx !== undefined && hy !== undefined && hx !== hy) return false;
  if (proved !== null && proved.get(x)?.has(y) === true) return true;
  // `active` is how many collections enclose this one: data deeper than the nesting limit stops
  // here with the limit's error, not at whatever depth the host's stack gives out.
  if (active >= nestingLimit()) throw tooDeep("compared");
  active++;
  let same: boolean;
  try {
    // Comparing two big collections is work a loop could repeat at one step per iteration;
    // a node reached twice is charged twice until the pair is remembered.
    chargeIfRunning(x.size + 1);
    same = x instanceof Vec ? vecEquals(x, y as Vec<Value>, asKeys) : isMap(x) ? mapEquals(x, y as IMap<Value, Value>, asKeys) : setEquals(x as ISet<Value>, y as ISet<Value>);
  } finally {
    if (--active === 0) {
      proved = null;
      visited = 0;
    }
  }
  if (same && active > 0 && ++visited > REMEMBER_AFTER) {
    proved ??= new Map();
    let s = proved.get(x);
    if (s === undefined) proved.set(x, (s = new Set()));
    s.add(y);
  }
  return same;
}

function tooDeep(what: string): LispError {
  return nestedTooDeep(nestingLimit(), `be ${what}`, "work on a part of it (get-in), or keep data shallower");
}

function vecEquals(a: Vec<Value>, b: Vec<Value>, asKeys: boolean): boolean {
  const xs = a.toArray();
  const ys = b.toArray();
  const eq = asKeys ? keyEquals : equals;
  for (let i = 0; i < xs.length; i++) if (!eq(xs[i], ys[i])) return false;
  return true;
}

function mapEquals(a: IMap<Value, Value>, b: IMap<Value, Value>, asKeys: boolean): boolean {
  const eq = asKeys ? keyEquals : equals;
  for (const [k, v] of a) {
    if ((!asKeys && isNaNValue(k)) || !b.has(k)) return false;
    if (!eq(v, b.get(k) as Value)) return false;
  }
  return true;
}

// The hash set finds NaN by identity; as an element NaN still equals nothing, as in Clojure.
function setEquals(a: ISet<Value>, b: ISet<Value>): boolean {
  for (const x of a) if (isNaNValue(x) || !b.has(x)) return false;
  return true;
}

const isNaNValue = (x: Value): boolean => typeof x === "number" && Number.isNaN(x);

// Immutable's maps and sets compare nested maps and sets through `.equals` (its own walk, which
// neither counts nor remembers): ours replaces it for both, and vectors get the same. The patch
// is on the interpreter's private copy of the library (package.json's ptc-immutable alias), so
// a host's own `immutable` in the same process keeps the library's rules (order counts in an
// OrderedMap, NaN is in a set) and costs.
const immutableMapEquals = IMap.prototype.equals;
const immutableSetEquals = ISet.prototype.equals;
IMap.prototype.equals = function (this: IMap<unknown, unknown>, other: unknown): boolean {
  return isMap(other) ? keyEquals(this, other) : immutableMapEquals.call(this, other);
};
ISet.prototype.equals = function (this: ISet<unknown>, other: unknown): boolean {
  return isSet(other) ? keyEquals(this, other) : immutableSetEquals.call(this, other);
};
setKeyEquality(keyEquals);

/**
 * Hashing a string reads all of it (immutable hashes a map's or set's keys, and the members of a
 * collection used as a key): a long one is charged as a scan, as comparing it is, so a loop that
 * puts fresh long strings in a set runs out of fuel and reaches the clock's checks. Every call
 * is one key operation counted towards the next look at the clock (tickIfRunning).
 */
export function chargeHash(x: unknown): void {
  tickIfRunning();
  if (typeof x === "string") chargeStrings(x.length);
  // A keyword's hash is kept, but a key found under it is compared by name (Keyword.equals).
  else if (x instanceof Keyword) chargeStrings(x.name.length);
}

// Every lookup and change of a map or set goes through these three (a set's through its map).
const immutableGet = IMap.prototype.get;
const immutableSet = IMap.prototype.set;
const immutableRemove = IMap.prototype.remove;

// Immutable's key test gives up on a falsy primitive before it unboxes the other side, so the
// integer 0 never meets the float 0.0 (an LFloat) though they are =: a zero key that is absent
// is also tried as its other kind (the boxed ±0.0 meet each other through valueOf).
const FLOAT_ZERO = new LFloat(0);
const ABSENT = {};
const otherZero = (k: unknown): unknown => (k === 0 ? FLOAT_ZERO : k instanceof LFloat && k.v === 0 ? 0 : undefined);

/** The key under which `m` holds zero key `k`, `k` itself when it holds neither kind of zero. */
function zeroKey(m: IMap<unknown, unknown>, k: unknown, other: unknown): unknown {
  return immutableGet.call(m, k, ABSENT) === ABSENT && immutableGet.call(m, other, ABSENT) !== ABSENT ? other : k;
}

IMap.prototype.get = function (this: IMap<unknown, unknown>, k: unknown, notSetValue?: unknown): unknown {
  chargeHash(k);
  const other = otherZero(k);
  if (other === undefined) return immutableGet.call(this, k, notSetValue);
  const v = immutableGet.call(this, k, ABSENT);
  return v !== ABSENT ? v : immutableGet.call(this, other, notSetValue);
} as typeof immutableGet;
// Setting a key the map holds keeps the key it holds, as Clojure's assoc does: immutable would
// put the new one in its place, so (assoc {1 :a} 1.0 :b) became {1.0 :b}. A zero held as the
// other kind is found by zeroKey, any other = key by heldKey.
IMap.prototype.set = function (this: IMap<unknown, unknown>, k: unknown, v: unknown): IMap<unknown, unknown> {
  chargeHash(k);
  const other = otherZero(k);
  const zero = other === undefined ? k : zeroKey(this, k, other);
  return immutableSet.call(this, zero === k && canDiffer(k) ? heldKey(this, k) : zero, v);
};
// An OrderedMap (a large sorted one) keeps its entries in a list of its own, and a set's elements
// are its map's values: both keep what they hold too.
const orderedSet = OrderedMap.prototype.set;
OrderedMap.prototype.set = function (this: OrderedMap<unknown, unknown>, k: unknown, v: unknown): OrderedMap<unknown, unknown> {
  if (canDiffer(k)) {
    const { _map: index, _list: list } = this as unknown as { _map: IMap<unknown, number>; _list: { get(i: number): [unknown, unknown] } };
    const i = index.get(k);
    if (i !== undefined) k = list.get(i)[0];
  }
  return orderedSet.call(this, k, v);
};
const immutableAdd = ISet.prototype.add;
ISet.prototype.add = function (this: ISet<unknown>, x: unknown): ISet<unknown> {
  return canDiffer(x) && this.has(x) ? this : immutableAdd.call(this, x);
};

/** Whether a key can be = to one that prints otherwise: a whole number (1 and 1.0) or a collection holding one. */
const canDiffer = (k: unknown): boolean => (typeof k === "number" ? Number.isInteger(k) : typeof k === "object" && k !== null && !(k instanceof Keyword));

interface TrieNode {
  entries?: [unknown, unknown][];
  entry?: [unknown, unknown];
  bitmap?: number;
  nodes?: (TrieNode | null | undefined)[];
}

/**
 * The key `m` holds that is = to `k`, or `k` when it holds none: a walk down immutable's trie
 * (the path its own get takes), since its API gives a key's value but never the key held.
 */
function heldKey(m: IMap<unknown, unknown>, k: unknown): unknown {
  let node = (m as unknown as { _root?: TrieNode | null })._root;
  const h = ihash(k);
  for (let shift = 0; node !== undefined && node !== null; shift += 5) {
    if (node.entries !== undefined) {
      for (const e of node.entries) if (is(k, e[0])) return e[0];
      return k;
    }
    if (node.entry !== undefined) return is(k, node.entry[0]) ? node.entry[0] : k;
    const bit = (h >>> shift) & 31;
    if (node.bitmap === undefined) node = node.nodes?.[bit];
    else if ((node.bitmap & (1 << bit)) === 0) return k;
    else node = node.nodes?.[bitCount(node.bitmap & ((1 << bit) - 1))];
  }
  return k;
}

/**
 * The key `coll` (a map, or a set's elements) holds that is = to `k`, which it holds: what a
 * lookup gives back, so (#{1} 1.0) and (find {1 :a} 1.0) give the 1 held, as conj and assoc
 * keep it. Only a key that can be = to one printed otherwise costs a walk.
 */
export function storedKey(coll: IMap<unknown, unknown> | ISet<unknown>, k: unknown): unknown {
  if (!canDiffer(k)) return k;
  const m = entriesOf((isSet(coll as Value) ? (coll as unknown as { _map: IMap<unknown, unknown> })._map : coll) as LMap) as IMap<unknown, unknown>;
  if (m instanceof OrderedMap) {
    const { _map: index, _list: list } = m as unknown as { _map: IMap<unknown, number>; _list: { get(i: number): [unknown, unknown] } };
    const i = index.get(k);
    return i === undefined ? k : list.get(i)[0];
  }
  const other = otherZero(k);
  return heldKey(m, other === undefined ? k : zeroKey(m, k, other));
}

function bitCount(x: number): number {
  let n = 0;
  for (let y = x; y !== 0; y &= y - 1) n++;
  return n;
}
IMap.prototype.remove = IMap.prototype.delete = function (this: IMap<unknown, unknown>, k: unknown): IMap<unknown, unknown> {
  chargeHash(k);
  const other = otherZero(k);
  return immutableRemove.call(this, other === undefined ? k : zeroKey(this, k, other));
};

// A collection's hash is computed once (then cached): that first time, it is charged a unit per
// element and its long strings as scans, so a loop that looks up a fresh big collection in a
// set at a few steps per iteration (conj, then contains?) runs out of fuel and reaches the clock.
const immutableMapHash = IMap.prototype.hashCode;
const immutableSetHash = ISet.prototype.hashCode;
const vecHash = Vec.prototype.hashCode;
// Collections whose hash is being computed, one inside another: a hash reads every level, so data
// deeper than the nesting limit stops with its error instead of overflowing the host's stack.
let hashing = 0;

function nestedHash(x: object, hashOf: () => number): number {
  if (hashing >= nestingLimit()) throw tooDeep("hashed (used as a key, a set element or by hash)");
  hashing++;
  try {
    return hashOf.call(x);
  } finally {
    hashing--;
  }
}

// A large sorted map or set is an OrderedMap or OrderedSet, which immutable hashes by its order:
// it is hashed as the = hash map or set is (Clojure's hash ignores order), or once both were
// hashed (= m sorted-m) turned false and the two stayed apart as keys and set elements.
function unorderedMapHash(this: IMap<unknown, unknown>): number {
  return ((this as { __hash?: number }).__hash = immutableMapHash.call(IMap(this)));
}
function unorderedSetHash(this: ISet<unknown>): number {
  return ((this as { __hash?: number }).__hash = immutableSetHash.call(ISet(this)));
}

IMap.prototype.hashCode = function (this: IMap<unknown, unknown>): number {
  const known = knownHash(this);
  if (known !== undefined) return known;
  chargeIfRunning(this.size);
  this.forEach((v, k) => void (chargeHash(k), chargeHash(v)));
  return nestedHash(this, isOrdered(this) ? unorderedMapHash : immutableMapHash);
};
ISet.prototype.hashCode = function (this: ISet<unknown>): number {
  const known = knownHash(this);
  if (known !== undefined) return known;
  chargeIfRunning(this.size);
  this.forEach((x) => chargeHash(x));
  return nestedHash(this, isOrdered(this) ? unorderedSetHash : immutableSetHash);
};
Vec.prototype.hashCode = function (this: Vec<unknown>): number {
  if (this.knownHash() !== undefined) return vecHash.call(this);
  chargeIfRunning(this.size);
  return nestedHash(this, vecHash);
};

export function hashValue(v: unknown): number {
  chargeHash(v);
  return ihash(v);
}
setElementHash(hashValue);

// Clojure's ordering of types when compare meets mixed kinds that it can order.
function rank(v: Value): number {
  if (v === null) return 0;
  if (typeof v === "boolean") return 1;
  if (typeof v === "number" || v instanceof LFloat) return 2;
  if (typeof v === "string") return 3;
  if (v instanceof Keyword) return 4;
  if (v instanceof Vec) return 5;
  return -1;
}

/** Total order for sort/compare: nil < booleans < numbers < strings < keywords < vectors. */
export function compare(a: Value, b: Value): number {
  return compareAt(a, b, 0);
}

/** `compare` of values `depth` collections down: deeper than the nesting limit is its error, never the host stack's. */
function compareAt(a: Value, b: Value, depth: number): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : a === b ? 0 : compareNaN(a, b);
  const ra = rank(a);
  const rb = rank(b);
  if (ra < 0 || rb < 0) throw typeErr(`cannot compare ${typeName(a)} with ${typeName(b)}`);
  if (ra !== rb) {
    if (ra === 0 || rb === 0) return ra - rb;
    throw typeErr(`cannot compare ${typeName(a)} with ${typeName(b)}`, "sort values of one type, or give sort-by a key function");
  }
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return a === b ? 0 : a ? 1 : -1;
    case 2: {
      const x = typeof a === "number" ? a : (a as LFloat).v;
      const y = typeof b === "number" ? b : (b as LFloat).v;
      return x < y ? -1 : x > y ? 1 : x === y ? 0 : compareNaN(x, y);
    }
    case 3:
      chargeStrings(Math.min((a as string).length, (b as string).length));
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 4:
      chargeStrings(Math.min((a as Keyword).name.length, (b as Keyword).name.length));
      return compareKeywords(a as Keyword, b as Keyword);
    default: {
      const x = a as Vec<Value>;
      const y = b as Vec<Value>;
      if (x.size !== y.size) return x.size - y.size;
      if (depth >= nestingLimit()) throw tooDeep("compared");
      charge(x.size);
      const xs = x.toArray();
      const ys = y.toArray();
      for (let i = 0; i < xs.length; i++) {
        const c = compareAt(xs[i], ys[i], depth + 1);
        if (c !== 0) return c;
      }
      return 0;
    }
  }
}

/** compare's order reversed: what > and >= order by. */
export const compareDescending = (a: Value, b: Value): number => compare(b, a);

const compareText = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);

// As Clojure orders keywords: a plain one before a qualified one, then by namespace, then by
// name; not by the whole text, where :user-x/a would come before :user/id.
function compareKeywords(a: Keyword, b: Keyword): number {
  const i = a.nsEnd();
  const j = b.nsEnd();
  if (i < 0 && j < 0) return compareText(a.name, b.name);
  if (i < 0 || j < 0) return i < 0 ? -1 : 1;
  return compareText(a.name.slice(0, i), b.name.slice(0, j)) || compareText(a.name.slice(i + 1), b.name.slice(j + 1));
}

// NaN sorts after every number so sorting stays a total order.
function compareNaN(a: number, b: number): number {
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  return an && bn ? 0 : an ? 1 : -1;
}
