// Output: println and friends write to the run's bounded output buffer, which the agent
// turns into feedback. pr-str returns the printed text instead.
import { tailPoint } from "../cuts.js";
import { checkStringLength, output, run, type RunState } from "../runtime.js";
import type { Value } from "../values.js";
import { printCharged } from "./args.js";
import type { BuiltinDef } from "./registry.js";

/** Prints one value the way println shows it: strings raw, nil as "nil", data as EDN. */
function display(v: Value, readably: boolean): string {
  if (v === null) return "nil";
  return printCharged(v, readably, run.limits.maxStringLength);
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
  if (newline) {
    lines(r, r.pendingLine + text);
    r.pendingLine = "";
    return null;
  }
  // The lines print has ended go out now: held to the next println, a loop of prints built one
  // string of hundreds of millions of lines, and splitting it crashed the host.
  const end = text.lastIndexOf("\n");
  let pending: string;
  if (end >= 0) {
    lines(r, r.pendingLine + text.slice(0, end));
    pending = text.slice(end + 1);
  } else {
    pending = r.pendingLine + text;
  }
  // Of a line longer than the output limit, the output keeps only the end: so does the line.
  const max = r.limits.maxOutputChars;
  if (pending.length > 2 * max) {
    const from = tailPoint(pending, pending.length - max);
    r.pendingElided += from;
    pending = pending.slice(from);
  }
  r.pendingLine = pending;
  return null;
}

/** Outputs the lines of `text`, the first one ending the pending line (and its elided start). */
function lines(r: RunState, text: string): void {
  let elided = r.pendingElided;
  r.pendingElided = 0;
  // Walked, not split: split whole, a text of 2^28 newlines made an array past the engine's longest.
  let start = 0;
  for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
    output(r, text.slice(start, end), elided);
    elided = 0;
    start = end + 1;
  }
  output(r, text.slice(start), elided);
}

export const IO: BuiltinDef[] = [
  { name: "println", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Prints the values separated by spaces, then a newline; the output is what you see next turn.", examples: [['(println "total:" 42)', "nil"]], fn: (a) => emit(joined(a, false), true) },
  { name: "print", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Like println without the newline.", examples: [['(with-out-str (print "a" 1) (print "b"))', '"a 1b"']], fn: (a) => emit(joined(a, false), false) },
  { name: "prn", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Prints the values readably (strings quoted), then a newline.", examples: [['(with-out-str (prn "a" 1))', '"\\"a\\" 1\\n"']], fn: (a) => emit(joined(a, true), true) },
  { name: "pr", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Like prn without the newline.", examples: [['(with-out-str (pr "a" 1))', '"\\"a\\" 1"']], fn: (a) => emit(joined(a, true), false) },
  { name: "pr-str", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "The values printed readably (EDN), as a string.", examples: [['(pr-str "a" :b [1])', '"\\"a\\" :b [1]"']], fn: (a) => joined(a, true) },
  { name: "prn-str", area: "io", arity: [0, Infinity], params: "[& xs]", doc: "Like pr-str with a trailing newline.", examples: [['(prn-str "a" [1])', '"\\"a\\" [1]\\n"']], fn: (a) => joined(a, true) + "\n" },
];
