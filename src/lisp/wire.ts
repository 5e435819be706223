// Values as they cross between threads (the isolated mode's host and worker). Structured
// clone copies plain data only, so PTC-Lisp values are written as tagged plain objects and
// read back as values. One writer per message keeps sharing: a value reached twice is sent
// once and read back as one object, so a shared structure costs its distinct nodes, and a
// tool result held by a definition stays the very same value on the other side. Long strings
// and keyword names are shared the same way (structured clone writes a string every time it
// meets it: a vector of 3,000 references to one 1M-character string would be 3 GB).
import { OrderedMap, OrderedSet } from "ptc-immutable";
import { markSorted, sortOrder } from "./core/sorted.js";
import type { Cmp } from "./core/sequences.js";
import { noteOrderFn } from "./holds-function.js";
import { compare } from "./equality.js";
import { LispError, nestedTooDeep } from "./errors.js";
import { STACK_SAFE_DEPTH } from "./limits.js";
import type { Marks, Origin } from "./marks.js";
import { compileRegex } from "./regex.js";
import { Fn, Keyword, keyword, LFloat, LMap, LSet, Reduced, Regex, Var, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

/** A value in structured-clone-safe form. */
export type Wire = null | boolean | number | string | WireNode;

/** `h`: the mark of a value from hidden context (marks.ts), which the other side's marks take on. */
type WireNode = (
  | { t: "f"; v: number }
  /** `r`: 1 when the keyword takes a slot in the table (a long name, sent once). */
  | { t: "k"; n: string; r?: 1 }
  /** A long string, sent once and then referred to by its slot. */
  | { t: "t"; s: string }
  | { t: "v"; x: Wire[] }
  /** Keys and values alternate; `o`: 1 sorted in the default order, 2 in a custom one. */
  | { t: "m"; x: Wire[]; o?: 1 | 2 }
  | { t: "s"; x: Wire[]; o?: 1 | 2 }
  | { t: "fn"; n: string; l: string; p?: string }
  | { t: "re"; p: string }
  | { t: "var"; n: string }
  | { t: "red"; x: Wire }
  /** The i-th collection or function already written in this message. */
  | { t: "@"; i: number }
) & { h?: Origin };

/** A value that cannot be rebuilt from data on the other side: a function, or a custom sort order. */
export class Unencodable {
  constructor(readonly what: string) {}
}

/**
 * A function whose code stayed on the other thread: it prints as the original did, and
 * calling it is an error saying why (`why`).
 */
export class RemoteFn extends Fn {
  constructor(
    readonly name: string,
    private readonly shown: string,
    private readonly params: string | undefined,
    private readonly why: string,
  ) {
    super();
  }
  override label(): string {
    return this.shown;
  }
  override paramLists(): string | undefined {
    return this.params;
  }
  call(): Value {
    throw new LispError("not_callable", `${this.name} cannot be called here: ${this.why}`);
  }
}

/**
 * The order of a collection sorted by a function on the other side, whose code stayed there: it
 * reads in its order, but anything that needs the order here (adding to it, a subseq) is an
 * error rather than another order. It holds a function (holdsFunction), so it is saved by the
 * source that made it, not as data.
 */
const foreignOrder: Cmp = () => {
  throw new LispError("not_callable", "the comparator of this sorted collection cannot be called here: it stayed in the worker that made the collection");
};
noteOrderFn(foreignOrder, new RemoteFn("comparator", "#fn[comparator]", undefined, "it stayed in the worker that made its sorted collection"));

/** Strings and keyword names this long or longer are written once per message. */
const SHARED_FROM = 256;

export class WireWriter {
  private readonly seen = new Map<object, number>();
  private readonly strings = new Map<string, number>();
  private readonly added: Array<object | string> = [];
  /** One keyword per long name: such names are not interned (values.ts), so equal keywords made apart are written once too. */
  private readonly keywords = new Map<string, Keyword>();

  /**
   * @param functions Whether functions are written (as `RemoteFn`s on the other side) or refused.
   * @param marks The run's marks, written with the values they mark.
   */
  constructor(
    private readonly functions: boolean,
    private readonly marks: Marks | null = null,
  ) {}

  write(v: Value): Wire {
    return this.writeAt(v, 0);
  }

  /**
   * `v`, `depth` collections down. The writer, structured clone (two objects a level; a thread
   * that cannot read a message drops it) and the reader all recurse: past STACK_SAFE_DEPTH, a
   * fixed bound whatever the threads' stacks, a value is not sent.
   */
  private writeAt(v: Value, depth: number): Wire {
    if (typeof v === "string") return v.length < SHARED_FROM ? v : this.string(v);
    if (v === null || typeof v !== "object") return v;
    const w = this.node(v, depth);
    if (this.marks !== null && w.t !== "@") {
      const o = this.marks.originOf(v);
      if (o !== undefined) w.h = o;
    }
    return w;
  }

  private node(v: Value & object, depth: number): WireNode {
    if (v instanceof Keyword && v.name.length < SHARED_FROM) return { t: "k", n: v.name };
    if (v instanceof LFloat) return { t: "f", v: v.v };
    const at = this.seen.get(v instanceof Keyword ? this.sameKeyword(v) : v);
    if (at !== undefined) return { t: "@", i: at };
    if (v instanceof Keyword) {
      this.note(this.sameKeyword(v));
      return { t: "k", n: v.name, r: 1 };
    }
    if (depth >= STACK_SAFE_DEPTH && (v instanceof Vec || isMap(v) || isSet(v) || v instanceof Reduced)) {
      throw nestedTooDeep(STACK_SAFE_DEPTH, "cross between the worker thread and its host", 'keep data shallower, or run with isolation "none"');
    }
    if (v instanceof Vec) {
      this.note(v);
      const items = v.toArray();
      const x = new Array<Wire>(items.length);
      for (let i = 0; i < items.length; i++) x[i] = this.writeAt(items[i], depth + 1);
      return { t: "v", x };
    }
    if (isMap(v) || isSet(v)) {
      const o = this.order(v);
      this.note(v);
      const x: Wire[] = [];
      if (isMap(v)) for (const [k, e] of v) x.push(this.writeAt(k, depth + 1), this.writeAt(e, depth + 1));
      else for (const e of v) x.push(this.writeAt(e, depth + 1));
      const node: { t: "m" | "s"; x: Wire[]; o?: 1 | 2 } = { t: isMap(v) ? "m" : "s", x };
      if (o !== 0) node.o = o;
      return node;
    }
    if (v instanceof Fn) {
      if (!this.functions) throw new Unencodable(`the function ${v.name}`);
      this.note(v);
      const p = v.paramLists();
      return p === undefined ? { t: "fn", n: v.name, l: v.label() } : { t: "fn", n: v.name, l: v.label(), p };
    }
    if (v instanceof Regex) return { t: "re", p: v.source };
    if (v instanceof Var) return { t: "var", n: v.name };
    if (v instanceof Reduced) return { t: "red", x: this.writeAt(v.value, depth + 1) };
    throw new Unencodable("an unknown value");
  }

  /** `v` written, or undefined (and nothing of it kept) when part of it is refused. */
  tryWrite(v: Value): Wire | undefined {
    const mark = this.added.length;
    try {
      return this.write(v);
    } catch (e) {
      if (!(e instanceof Unencodable)) throw e;
      while (this.added.length > mark) {
        const x = this.added.pop() as object | string;
        if (typeof x === "string") this.strings.delete(x);
        else this.seen.delete(x);
      }
      return undefined;
    }
  }

  private sameKeyword(k: Keyword): Keyword {
    const first = this.keywords.get(k.name);
    if (first !== undefined) return first;
    this.keywords.set(k.name, k);
    return k;
  }

  private note(v: object): void {
    this.seen.set(v, this.added.length);
    this.added.push(v);
  }

  private string(s: string): Wire {
    const at = this.strings.get(s);
    if (at !== undefined) return { t: "@", i: at };
    this.strings.set(s, this.added.length);
    this.added.push(s);
    return { t: "t", s };
  }

  private order(v: LMap | LSet): 0 | 1 | 2 {
    const cmp = sortOrder(v);
    if (cmp === undefined) return 0;
    if (cmp === compare) return 1;
    if (!this.functions) throw new Unencodable("a collection sorted by a function");
    return 2;
  }
}

export class WireReader {
  private readonly table: Value[] = [];

  /**
   * @param why What a function read here says when called (its code stayed on the other side).
   * @param marks Where the marks written with the values go.
   */
  constructor(
    private readonly why = "it was defined in another thread",
    private readonly marks: Marks | null = null,
  ) {}

  read(w: Wire): Value {
    if (w === null || typeof w !== "object") return w;
    const v = this.value(w);
    if (w.h !== undefined) this.marks?.carry(v, w.h);
    return v;
  }

  private value(w: WireNode): Value {
    switch (w.t) {
      case "k": {
        const k = keyword(w.n);
        if (w.r === 1) this.table.push(k);
        return k;
      }
      case "t":
        this.table.push(w.s);
        return w.s;
      case "f":
        return new LFloat(w.v);
      case "@":
        return this.table[w.i];
      case "v": {
        const at = this.reserve();
        const out = new Array<Value>(w.x.length);
        for (let i = 0; i < w.x.length; i++) out[i] = this.read(w.x[i]);
        return (this.table[at] = Vec.fromArray(out));
      }
      case "m": {
        const at = this.reserve();
        const base: LMap = w.o !== undefined && (w.x.length === 0 || w.x.length > 16) ? OrderedMap<Value, Value>() : LMap<Value, Value>();
        const m = base.withMutations((m) => {
          for (let i = 0; i < w.x.length; i += 2) m.set(this.read(w.x[i]), this.read(w.x[i + 1]));
        });
        return (this.table[at] = this.sorted(m, w.o));
      }
      case "s": {
        const at = this.reserve();
        const base: LSet = w.o !== undefined && (w.x.length === 0 || w.x.length > 8) ? OrderedSet<Value>() : LSet<Value>();
        const s = base.withMutations((s) => {
          for (const x of w.x) s.add(this.read(x));
        });
        return (this.table[at] = this.sorted(s, w.o));
      }
      case "fn": {
        const at = this.reserve();
        return (this.table[at] = new RemoteFn(w.n, w.l, w.p, this.why));
      }
      case "re":
        return compileRegex(w.p);
      case "var":
        return new Var(w.n);
      case "red":
        return new Reduced(this.read(w.x));
    }
  }

  private reserve(): number {
    this.table.push(null);
    return this.table.length - 1;
  }

  private sorted<T extends LMap | LSet>(x: T, o: 1 | 2 | undefined): T {
    // In a custom order: small ones keep insertion order, large ones are Ordered (see read).
    return o === undefined ? x : markSorted(x, o === 1 ? compare : foreignOrder);
  }
}
