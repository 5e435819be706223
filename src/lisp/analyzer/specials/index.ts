// The table of special forms. The analyzer dispatches on it; the prompt's language
// reference is generated from its syntax and doc fields.
import { dotimes, ifLet, ifSome, let_, letfn, loop, recur, whenFirst, whenLet, whenSome } from "./bindings.js";
import { and, case_, comment, cond, condp, do_, if_, ifNot, or, when, whenNot, withOutStr } from "./control.js";
import { declare, def, defn, defnPrivate, defonce, fn, fnLiteral } from "./definitions.js";
import { fail, return_, where } from "./agent.js";
import { try_ } from "./exceptions.js";
import { doseq, for_ } from "./iteration.js";
import { REJECTED } from "./rejected.js";
import { condThreadFirst, condThreadLast, someThreadFirst, someThreadLast, threadAs, threadFirst, threadLast } from "./threading.js";
import type { SpecialForm } from "./types.js";

export type { SpecialForm };

/** Special forms that programs use, in the order the language reference lists them. */
export const DOCUMENTED_SPECIAL_FORMS: Readonly<Record<string, SpecialForm>> = {
  def,
  defn,
  defonce,
  fn,
  "#fn": fnLiteral,
  let: let_,
  letfn,
  if: if_,
  "if-not": ifNot,
  when,
  "when-not": whenNot,
  cond,
  condp,
  case: case_,
  do: do_,
  "with-out-str": withOutStr,
  and,
  or,
  "if-let": ifLet,
  "when-let": whenLet,
  "if-some": ifSome,
  "when-some": whenSome,
  "when-first": whenFirst,
  loop,
  recur,
  for: for_,
  doseq,
  dotimes,
  "->": threadFirst,
  "->>": threadLast,
  "as->": threadAs,
  "cond->": condThreadFirst,
  "cond->>": condThreadLast,
  "some->": someThreadFirst,
  "some->>": someThreadLast,
  try: try_,
  where,
  return: return_,
  fail,
};

export const SPECIAL_FORMS: Readonly<Record<string, SpecialForm>> = {
  ...DOCUMENTED_SPECIAL_FORMS,
  "defn-": defnPrivate,
  declare,
  comment,
  "fn*": fn,
  ...REJECTED,
};
