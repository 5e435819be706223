// Lexical scopes for the resolver. Each function has one FnScope that hands out frame
// slots; nested blocks (let, loop, for) are Scopes chained to their parent. A name bound
// in an enclosing function becomes a capture, copied into the closure when it is created.
import type { LocalRef } from "./nodes.js";

export interface LocalBinding {
  readonly name: string;
  readonly fn: FnScope;
  /** Frame slot, or -1 for a named function's reference to itself. */
  readonly slot: number;
}

export class FnScope {
  private nextSlot = 0;
  /** For each capture, where the value comes from in the parent function (null: the function itself). */
  readonly captures: Array<LocalRef | null> = [];
  private readonly captureOf = new Map<LocalBinding, number>();

  constructor(readonly parent: FnScope | null) {}

  get slotCount(): number {
    return this.nextSlot;
  }

  allocate(): number {
    return this.nextSlot++;
  }

  /** Reserves slots 0..n-1 for parameters; every arity numbers its parameters from 0. */
  reserve(n: number): void {
    if (this.nextSlot < n) this.nextSlot = n;
  }

  /** Frame index of a ref once the capture count is final (captures come first). */
  frameIndex(ref: LocalRef): number {
    return ref.kind === "capture" ? ref.index : this.captures.length + ref.index;
  }

  /** The ref through which this function sees `b`, adding captures along the way. */
  refTo(b: LocalBinding): LocalRef {
    if (b.fn === this && b.slot >= 0) return { fn: this, kind: "slot", index: b.slot };
    let i = this.captureOf.get(b);
    if (i === undefined) {
      i = this.captures.length;
      if (b.fn === this) {
        this.captures.push(null);
      } else {
        if (!this.parent) throw new Error(`unresolvable local ${b.name}`);
        this.captures.push(this.parent.refTo(b));
      }
      this.captureOf.set(b, i);
    }
    return { fn: this, kind: "capture", index: i };
  }

  /** Index of the self capture, if the function refers to itself. */
  selfIndex(self: LocalBinding | null): number {
    if (!self) return -1;
    return this.captureOf.get(self) ?? -1;
  }
}

export class Scope {
  private readonly vars = new Map<string, LocalBinding>();

  constructor(
    readonly parent: Scope | null,
    readonly fn: FnScope,
  ) {}

  /** Declares a new local in this scope and returns its slot ref. */
  declare(name: string): LocalRef {
    const slot = this.fn.allocate();
    this.vars.set(name, { name, fn: this.fn, slot });
    return { fn: this.fn, kind: "slot", index: slot };
  }

  /** Binds `name` to a given slot of this function (parameters, and `%` sharing `%1`'s slot). */
  bindAt(name: string, slot: number): LocalRef {
    this.vars.set(name, { name, fn: this.fn, slot });
    return { fn: this.fn, kind: "slot", index: slot };
  }

  declareSelf(name: string): LocalBinding {
    const b: LocalBinding = { name, fn: this.fn, slot: -1 };
    this.vars.set(name, b);
    return b;
  }

  find(name: string): LocalBinding | undefined {
    return this.vars.get(name) ?? this.parent?.find(name);
  }

  /** Every local name visible here (for "did you mean" suggestions). */
  visibleNames(): string[] {
    const own = [...this.vars.keys()].filter((k) => !k.startsWith(" "));
    return this.parent ? [...new Set([...own, ...this.parent.visibleNames()])] : own;
  }
}
