// Persistent vector: a 32-way trie plus a tail, as in Clojure's PersistentVector, with an
// offset so that slices (rest, subvec, drop) share the trie in O(1) instead of copying.
// Our own implementation because building from an array (what every `map`/`filter`
// result does) must be O(n) with little overhead, and immutable's List is ~10x slower there.
import { hash, is } from "ptc-immutable";

const BITS = 5;
const WIDTH = 32;
const MASK = 31;

type Node = unknown[];

const EMPTY_NODE: Node = [];

// Element-wise with immutable's `is` until equality.ts installs the value equality, which
// counts its work and remembers equal pairs so shared structure compares once per distinct node.
let keyEquality = (a: Vec<unknown>, b: Vec<unknown>): boolean => {
  const xs = a.toArray();
  const ys = b.toArray();
  for (let i = 0; i < xs.length; i++) if (!is(xs[i], ys[i])) return false;
  return true;
};

export function setKeyEquality(f: (a: Vec<unknown>, b: Vec<unknown>) => boolean): void {
  keyEquality = f;
}

// An element's hash: immutable's until equality.ts installs its own, which charges long strings.
let elementHash: (x: unknown) => number = hash;

export function setElementHash(f: (x: unknown) => number): void {
  elementHash = f;
}

export class Vec<T = unknown> implements Iterable<T> {
  private hashCache: number | undefined;

  /**
   * `size` elements starting at physical index `off` of a trie holding `cnt` elements.
   * Unsliced vectors have off 0 and cnt === size.
   */
  private constructor(
    readonly size: number,
    private readonly off: number,
    private readonly cnt: number,
    private readonly shift: number,
    private readonly root: Node,
    private readonly tail: T[],
  ) {}

  static readonly EMPTY: Vec<never> = new Vec<never>(0, 0, 0, BITS, EMPTY_NODE, []);

  static empty<T>(): Vec<T> {
    return Vec.EMPTY as Vec<T>;
  }

  /** Builds a vector that takes ownership of `arr` (the caller must not mutate it afterwards). */
  static fromArray<T>(arr: T[]): Vec<T> {
    const n = arr.length;
    if (n === 0) return Vec.EMPTY as Vec<T>;
    if (n <= WIDTH) return new Vec<T>(n, 0, n, BITS, EMPTY_NODE, arr);
    const tailOff = ((n - 1) >>> BITS) << BITS;
    let nodes: Node[] = [];
    for (let i = 0; i < tailOff; i += WIDTH) nodes.push(arr.slice(i, i + WIDTH));
    let shift = BITS;
    while (nodes.length > WIDTH) {
      const parents: Node[] = [];
      for (let i = 0; i < nodes.length; i += WIDTH) parents.push(nodes.slice(i, i + WIDTH));
      nodes = parents;
      shift += BITS;
    }
    return new Vec<T>(n, 0, n, shift, nodes, arr.slice(tailOff));
  }

  static of<T>(...items: T[]): Vec<T> {
    return Vec.fromArray(items);
  }

  private tailOffset(): number {
    return this.cnt < WIDTH ? 0 : ((this.cnt - 1) >>> BITS) << BITS;
  }

  /** The leaf array holding physical index p. */
  private leafFor(p: number): T[] {
    if (p >= this.tailOffset()) return this.tail;
    let node = this.root;
    for (let level = this.shift; level > 0; level -= BITS) node = node[(p >>> level) & MASK] as Node;
    return node as T[];
  }

  /** Element at `i`, or undefined when out of range. */
  get(i: number): T | undefined {
    if (i < 0 || i >= this.size || !Number.isInteger(i)) return undefined;
    const p = i + this.off;
    return this.leafFor(p)[p & MASK];
  }

  private with(size: number, cnt: number, shift: number, root: Node, tail: T[]): Vec<T> {
    return new Vec<T>(size, this.off, cnt, shift, root, tail);
  }

  conj(v: T): Vec<T> {
    // A slice that ends before the trie does overwrites the next physical slot instead.
    if (this.off + this.size < this.cnt) return this.physicalAssoc(this.off + this.size, v, this.size + 1);
    const n = this.cnt;
    if (n - this.tailOffset() < WIDTH) {
      const tail = this.tail.slice();
      tail.push(v);
      return this.with(this.size + 1, n + 1, this.shift, this.root, tail);
    }
    let root: Node;
    let shift = this.shift;
    if (n >>> BITS > 1 << this.shift) {
      root = [this.root, newPath(this.shift, this.tail)];
      shift += BITS;
    } else {
      root = pushTail(n, this.shift, this.root, this.tail);
    }
    return this.with(this.size + 1, n + 1, shift, root, [v]);
  }

  assoc(i: number, v: T): Vec<T> {
    if (i === this.size) return this.conj(v);
    if (i < 0 || i > this.size) throw new RangeError("index out of bounds");
    return this.physicalAssoc(i + this.off, v, this.size);
  }

  private physicalAssoc(p: number, v: T, size: number): Vec<T> {
    if (p >= this.tailOffset()) {
      const tail = this.tail.slice();
      tail[p & MASK] = v;
      return this.with(size, this.cnt, this.shift, this.root, tail);
    }
    return this.with(size, this.cnt, this.shift, assocIn(this.shift, this.root, p, v), this.tail);
  }

  pop(): Vec<T> {
    if (this.size <= 1) return Vec.EMPTY as Vec<T>;
    // A slice that ends before the trie does just gets shorter.
    if (this.off + this.size < this.cnt) return this.with(this.size - 1, this.cnt, this.shift, this.root, this.tail);
    const n = this.cnt;
    if (n - this.tailOffset() > 1) return this.with(this.size - 1, n - 1, this.shift, this.root, this.tail.slice(0, -1));
    const newTail = this.leafFor(n - 2);
    let root = popTail(n, this.shift, this.root) ?? EMPTY_NODE;
    let shift = this.shift;
    if (shift > BITS && root.length === 1) {
      root = root[0] as Node;
      shift -= BITS;
    }
    return this.with(this.size - 1, n - 1, shift, root, newTail);
  }

  /** Calls `f` with consecutive runs of elements (a leaf array and a range in it). */
  private eachChunk(f: (leaf: T[], from: number, to: number) => void): void {
    let p = this.off;
    const end = this.off + this.size;
    while (p < end) {
      const leaf = this.leafFor(p);
      const from = p & MASK;
      const to = Math.min(leaf.length, from + (end - p));
      f(leaf, from, to);
      p += to - from;
    }
  }

  /** A fresh array with the elements in order. */
  toArray(): T[] {
    const out = new Array<T>(this.size);
    let k = 0;
    this.eachChunk((leaf, from, to) => {
      for (let j = from; j < to; j++) out[k++] = leaf[j];
    });
    return out;
  }

  /** Elements start..end-1 in O(1): the slice shares this vector's trie. */
  slice(start: number, end: number = this.size): Vec<T> {
    const a = Math.max(0, Math.min(start, this.size));
    const b = Math.max(a, Math.min(end, this.size));
    if (a === 0 && b === this.size) return this;
    const view = new Vec<T>(b - a, this.off + a, this.cnt, this.shift, this.root, this.tail);
    // Small slices are copied so they do not keep a large trie alive.
    return b - a <= WIDTH ? Vec.fromArray(view.toArray()) : view;
  }

  // Walks the leaves rather than copying, so a loop that stops early does little work.
  *[Symbol.iterator](): Iterator<T> {
    const end = this.off + this.size;
    for (let p = this.off; p < end; ) {
      const leaf = this.leafFor(p);
      const to = Math.min(leaf.length, (p & MASK) + (end - p));
      for (let j = p & MASK; j < to; j++, p++) yield leaf[j];
    }
  }

  /** Value equality, used by immutable's maps and sets for keys (equality.ts installs the metered one). */
  equals(other: unknown): boolean {
    if (other === this) return true;
    if (!(other instanceof Vec) || other.size !== this.size) return false;
    if (this.hashCache !== undefined && other.hashCache !== undefined && this.hashCache !== other.hashCache) return false;
    return keyEquality(this, other);
  }

  /** The hash when it has been computed, so a comparison can tell unequal values apart for free. */
  knownHash(): number | undefined {
    return this.hashCache;
  }

  hashCode(): number {
    if (this.hashCache !== undefined) return this.hashCache;
    let h = 1;
    this.eachChunk((leaf, from, to) => {
      for (let j = from; j < to; j++) h = (Math.imul(31, h) + elementHash(leaf[j])) | 0;
    });
    this.hashCache = h;
    return h;
  }
}

function newPath(level: number, node: Node): Node {
  return level === 0 ? node : [newPath(level - BITS, node)];
}

function pushTail(count: number, level: number, parent: Node, tail: Node): Node {
  const ret = parent.slice();
  const sub = ((count - 1) >>> level) & MASK;
  if (level === BITS) {
    ret[sub] = tail;
  } else {
    const child = parent[sub] as Node | undefined;
    ret[sub] = child ? pushTail(count, level - BITS, child, tail) : newPath(level - BITS, tail);
  }
  return ret;
}

function assocIn(level: number, node: Node, i: number, v: unknown): Node {
  const ret = node.slice();
  if (level === 0) {
    ret[i & MASK] = v;
  } else {
    const sub = (i >>> level) & MASK;
    ret[sub] = assocIn(level - BITS, node[sub] as Node, i, v);
  }
  return ret;
}

function popTail(count: number, level: number, node: Node): Node | null {
  const sub = ((count - 2) >>> level) & MASK;
  if (level > BITS) {
    const child = popTail(count, level - BITS, node[sub] as Node);
    if (child === null && sub === 0) return null;
    const ret = node.slice(0, child === null ? sub : sub + 1);
    if (child !== null) ret[sub] = child;
    return ret;
  }
  if (sub === 0) return null;
  return node.slice(0, sub);
}
