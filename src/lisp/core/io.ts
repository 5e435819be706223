// Output: println and friends write to the run's bounded output buffer, which the agent
// turns into feedback. pr-str returns the printed text instead.
import { PrintOverflow, printChecked } from "../printer.js";
import { charge, checkStringLength, output, run, tick } from "../runtime.js";
import type { Value } from "../values.js";
import type { BuiltinDef } from "./registry.js";

/** Prints one value the way println shows it: strings raw, nil as "nil", data as EDN. */
function display(v: Value, readably: boolean): string {
  if (v === null) return "nil";
  const limits = run.limits;
  try {
    // Charged as str charges a printed collection: per 16 characters of text.
    const s = printChecked(v, readably, limits.maxStringLength, limits.maxNestingDepth, tick);
    charge(s.length >>> 4);
    return s;
  } catch (e) {
    if (e instanceof PrintOverflow) checkStringLength(e.length);
    throw e;
  }
}

function joined(args: Value[], readably: boolean): string {
  let s = "";
  for (let i = 0; i < args.length; i++) {
    if (i > 0) s += " ";
    s += display(args[i], readably);
    if (s.length > run.limits.maxStringLength) checkStringLength(s.length);
  }
  return s;
}

function emit(text: string, newline: boolean): null {
  const r = run;
  if (r.captured !== null) {
    const c = r.captured;
    c.text += newline ? text + "\n" : text;
    if (c.text.length > r.limits.maxStringLength) checkStringLength(c.text.length);
    return null;
  }
  const pending = r.pendingLine + text;
  if (!newline) {
    r.pendingLine = pending;
    return null;
  }
  r.pendingLine = "";
  for (const line of pending.split("\n")) output(r, line);
  return null;
}

export const IO: BuiltinDef[] = [
  { name: "println", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Prints the values separated by spaces, then a newline; the output is what you see next turn.", examples: [['(println "total:" 42)', "nil"]], fn: (a) => emit(joined(a, false), true) },
  { name: "print", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Like println without the newline.", examples: [['(with-out-str (print "a" 1) (print "b"))', '"a 1b"']], fn: (a) => emit(joined(a, false), false) },
  { name: "prn", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Prints the values readably (strings quoted), then a newline.", examples: [['(with-out-str (prn "a" 1))', '"\\"a\\" 1\\n"']], fn: (a) => emit(joined(a, true), true) },
  { name: "pr-str", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "The values printed readably (EDN), as a string.", examples: [['(pr-str "a" :b [1])', '"\\"a\\" :b [1]"']], fn: (a) => joined(a, true) },
  { name: "prn-str", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Like pr-str with a trailing newline.", examples: [['(prn-str "a" [1])', '"\\"a\\" [1]\\n"']], fn: (a) => joined(a, true) + "\n" },
];
