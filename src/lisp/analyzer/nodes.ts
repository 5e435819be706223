// Analyzed nodes: the resolved program. Every name is a slot, a capture, a global,
// a builtin or a context key; every special form is reduced to these few operations.
// The compiler turns each node into a closure once, so evaluation never re-dispatches.
import type { SourceLoc } from "../errors.js";
import type { Builtin } from "../core/registry.js";
import type { LMap, Value } from "../values.js";
import type { FnScope } from "./scope.js";

/** Where a local lives: a parameter/let slot of its function, or one of its captures. */
export interface LocalRef {
  readonly fn: FnScope;
  readonly kind: "slot" | "capture";
  readonly index: number;
}

export interface Bind {
  readonly target: LocalRef;
  readonly init: Node;
}

export interface FnArityNode {
  readonly required: number;
  readonly variadic: boolean;
  /** Slots of the parameters (and the rest parameter last, when variadic). */
  readonly params: LocalRef[];
  /** Destructuring of pattern parameters, run before the body on every entry. */
  readonly prelude: Bind[];
  readonly body: Node;
  readonly loops: boolean;
  readonly paramText: string;
}

/** A catch clause: the error kinds it catches (null: every catchable error), the binding, the handler. */
export interface CatchClause {
  readonly kinds: readonly string[] | null;
  readonly slot: LocalRef;
  readonly handler: Node;
}

export type ForClause =
  | { readonly kind: "bind"; readonly coll: Node; readonly raw: LocalRef; readonly prelude: Bind[]; readonly loc: SourceLoc }
  | { readonly kind: "let"; readonly binds: Bind[] }
  | { readonly kind: "when"; readonly test: Node }
  | { readonly kind: "while"; readonly test: Node };

export type Node =
  | { op: "const"; value: Value; loc: SourceLoc }
  | { op: "local"; ref: LocalRef; name: string; loc: SourceLoc }
  | { op: "global"; name: string; loc: SourceLoc }
  | { op: "data"; key: string; loc: SourceLoc }
  | { op: "if"; test: Node; then: Node; else: Node; loc: SourceLoc }
  | { op: "do"; body: Node[]; loc: SourceLoc }
  | { op: "with-out-str"; body: Node; loc: SourceLoc }
  | { op: "letfn"; slots: LocalRef[]; fns: Extract<Node, { op: "fn" }>[]; body: Node; loc: SourceLoc }
  | { op: "let"; binds: Bind[]; body: Node; loc: SourceLoc }
  | { op: "loop"; raws: LocalRef[]; inits: Node[]; preludes: Bind[][]; body: Node; loc: SourceLoc }
  | { op: "recur"; targets: LocalRef[]; args: Node[]; loc: SourceLoc }
  | { op: "fn"; name: string | null; scope: FnScope; arities: FnArityNode[]; captures: Array<LocalRef | null>; loc: SourceLoc }
  | { op: "call"; fn: Node; args: Node[]; loc: SourceLoc }
  | { op: "builtin-call"; builtin: Builtin; args: Node[]; loc: SourceLoc }
  | { op: "def"; name: string; doc: string | undefined; init: Node; source: string; onlyIfUnbound: boolean; loc: SourceLoc }
  | { op: "vector"; items: Node[]; loc: SourceLoc }
  | { op: "set"; items: Node[]; loc: SourceLoc }
  | { op: "map"; items: Node[]; loc: SourceLoc }
  | { op: "and"; items: Node[]; loc: SourceLoc }
  | { op: "or"; items: Node[]; loc: SourceLoc }
  | { op: "case"; test: Node; table: LMap; branches: Node[]; dflt: Node | null; loc: SourceLoc }
  | { op: "tool"; name: string; args: Node[]; loc: SourceLoc }
  | { op: "tool-ref"; name: string; loc: SourceLoc }
  | { op: "return"; value: Node; loc: SourceLoc }
  | { op: "fail"; value: Node; loc: SourceLoc }
  | { op: "for"; clauses: ForClause[]; body: Node; collect: boolean; loc: SourceLoc }
  | { op: "dotimes"; slot: LocalRef; count: Node; body: Node; loc: SourceLoc }
  | { op: "where"; path: Value[]; cmp: string | null; value: Node | null; loc: SourceLoc }
  | { op: "try"; body: Node; catches: CatchClause[]; finally: Node | null; loc: SourceLoc }
  | { op: "destructure"; kind: "nth"; src: LocalRef; index: number; loc: SourceLoc }
  | { op: "destructure"; kind: "rest"; src: LocalRef; index: number; loc: SourceLoc }
  | { op: "destructure"; kind: "key"; src: LocalRef; key: Value; dflt: Node | null; loc: SourceLoc }
  | { op: "destructure"; kind: "map"; init: Node; restArgs: boolean; loc: SourceLoc }
  | { op: "destructure"; kind: "seq"; init: Node; loc: SourceLoc };

export type Op = Node["op"];
