// Persistent vector: a 32-way trie plus a tail, as in Clojure's PersistentVector.
// Our own implementation because building from an array (what every `map`/`filter`
// result does) must be O(n) with little overhead, and immutable's List is ~10x slower there.
import { hash, is } from "immutable";

const BITS = 5;
const WIDTH = 32;
const MASK = 31;

type Node = unknown[];

const EMPTY_NODE: Node = [];

export class Vec<T = unknown> implements Iterable<T> {
  private hashCache: number | undefined;

  private constructor(
    readonly size: number,
    private readonly shift: number,
    private readonly root: Node,
    private readonly tail: T[],
  ) {}

  static readonly EMPTY: Vec<never> = new Vec<never>(0, BITS, EMPTY_NODE, []);

  static empty<T>(): Vec<T> {
    return Vec.EMPTY as Vec<T>;
  }

  /** Builds a vector that takes ownership of `arr` (the caller must not mutate it afterwards). */
  static fromArray<T>(arr: T[]): Vec<T> {
    const n = arr.length;
    if (n === 0) return Vec.EMPTY as Vec<T>;
    if (n <= WIDTH) return new Vec<T>(n, BITS, EMPTY_NODE, arr);
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
    return new Vec<T>(n, shift, nodes, arr.slice(tailOff));
  }

  static of<T>(...items: T[]): Vec<T> {
    return Vec.fromArray(items);
  }

  private tailOffset(): number {
    return this.size < WIDTH ? 0 : ((this.size - 1) >>> BITS) << BITS;
  }

  private leafFor(i: number): T[] {
    if (i >= this.tailOffset()) return this.tail;
    let node = this.root;
    for (let level = this.shift; level > 0; level -= BITS) node = node[(i >>> level) & MASK] as Node;
    return node as T[];
  }

  /** Element at `i`, or undefined when out of range. */
  get(i: number): T | undefined {
    if (i < 0 || i >= this.size || !Number.isInteger(i)) return undefined;
    return this.leafFor(i)[i & MASK];
  }

  conj(v: T): Vec<T> {
    const n = this.size;
    if (n - this.tailOffset() < WIDTH) {
      const tail = this.tail.slice();
      tail.push(v);
      return new Vec<T>(n + 1, this.shift, this.root, tail);
    }
    let root: Node;
    let shift = this.shift;
    if (n >>> BITS > 1 << this.shift) {
      root = [this.root, newPath(this.shift, this.tail)];
      shift += BITS;
    } else {
      root = pushTail(n, this.shift, this.root, this.tail);
    }
    return new Vec<T>(n + 1, shift, root, [v]);
  }

  assoc(i: number, v: T): Vec<T> {
    if (i === this.size) return this.conj(v);
    if (i < 0 || i > this.size) throw new RangeError("index out of bounds");
    if (i >= this.tailOffset()) {
      const tail = this.tail.slice();
      tail[i & MASK] = v;
      return new Vec<T>(this.size, this.shift, this.root, tail);
    }
    return new Vec<T>(this.size, this.shift, assocIn(this.shift, this.root, i, v), this.tail);
  }

  pop(): Vec<T> {
    const n = this.size;
    if (n <= 1) return Vec.EMPTY as Vec<T>;
    if (n - this.tailOffset() > 1) return new Vec<T>(n - 1, this.shift, this.root, this.tail.slice(0, -1));
    const newTail = this.leafFor(n - 2);
    let root = popTail(n, this.shift, this.root) ?? EMPTY_NODE;
    let shift = this.shift;
    if (shift > BITS && root.length === 1) {
      root = root[0] as Node;
      shift -= BITS;
    }
    return new Vec<T>(n - 1, shift, root, newTail);
  }

  /** A fresh array with the elements in order. */
  toArray(): T[] {
    const out = new Array<T>(this.size);
    let k = 0;
    const walk = (node: Node, level: number): void => {
      if (level === 0) {
        for (let i = 0; i < node.length; i++) out[k++] = node[i] as T;
        return;
      }
      for (let i = 0; i < node.length; i++) walk(node[i] as Node, level - BITS);
    };
    if (this.size > WIDTH || this.tailOffset() > 0) walk(this.root, this.shift);
    for (let i = 0; i < this.tail.length; i++) out[k++] = this.tail[i];
    return out;
  }

  slice(start: number, end: number = this.size): Vec<T> {
    if (start <= 0 && end >= this.size) return this;
    return Vec.fromArray(this.toArray().slice(start, end));
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = 0; i < this.size; i += WIDTH) {
      const leaf = this.leafFor(i);
      for (let j = 0; j < leaf.length; j++) yield leaf[j];
    }
  }

  /** Value equality, element-wise, used by immutable's maps and sets for keys. */
  equals(other: unknown): boolean {
    if (other === this) return true;
    if (!(other instanceof Vec) || other.size !== this.size) return false;
    if (this.hashCache !== undefined && other.hashCache !== undefined && this.hashCache !== other.hashCache) return false;
    for (let i = 0; i < this.size; i += WIDTH) {
      const a = this.leafFor(i);
      const b = other.leafFor(i);
      for (let j = 0; j < a.length; j++) if (!is(a[j], b[j])) return false;
    }
    return true;
  }

  hashCode(): number {
    if (this.hashCache !== undefined) return this.hashCache;
    let h = 1;
    for (let i = 0; i < this.size; i += WIDTH) {
      const leaf = this.leafFor(i);
      for (let j = 0; j < leaf.length; j++) h = (Math.imul(31, h) + hash(leaf[j])) | 0;
    }
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
