import type { Analyzer, Ctx, ListForm } from "../analyze.js";
import type { Node } from "../nodes.js";

/** A special form: how it is written, what it does (for the generated prompt), and its analysis. */
export interface SpecialForm {
  readonly syntax: string;
  readonly doc: string;
  /** [source, expected EDN] pairs; each runs as a test. */
  readonly examples?: ReadonlyArray<readonly [string, string]>;
  analyze(a: Analyzer, form: ListForm, ctx: Ctx): Node;
}
