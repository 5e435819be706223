// Where a JSON text went wrong, as a line and column: the one reading of JSON.parse's complaint
// for every input read as JSON (a context, a trace, a saved run, a transcript, a config file).
// JSON.parse gives a character position ("at position 1234"), which no editor goes to, or
// quotes the text around an unexpected token, which may be a secret (a config file's key): the
// place is given as line and column instead, and nothing of the text is quoted.

/** JSON.parse's complaint about `text`, without any of the text, and where it is (1-based; undefined when it cannot say). */
export interface JsonSyntaxProblem {
  reason: string;
  line?: number;
  column?: number;
}

import { MAX_JSON_DEPTH, tooDeepAt } from "./depth.js";

// V8 quotes this many characters either side of an unexpected token; "..." marks a cut.
const QUOTE_CONTEXT = 10;

/** The problem `e` (thrown by JSON.parse(text)) describes, with its line and column in `text`. */
export function jsonSyntaxProblem(text: string, e: unknown): JsonSyntaxProblem {
  // Valid JSON too deep for a reader that recurses (a reviver): the place it passes the limit
  // says more than the stack's size, which is no fault of the text's syntax.
  if (e instanceof RangeError) {
    const deep = tooDeepAt(text);
    if (deep >= 0) return place(`nested more than ${MAX_JSON_DEPTH} levels deep`, text, deep);
  }
  const message = e instanceof Error ? e.message : String(e);
  // Node 20: "... in JSON at position 12"; Node 22 adds " (line 2 column 3)". Text after a whole
  // value (two JSONL records on one line) is "... after JSON at position 12".
  const at = /^([\s\S]*?) (in|after) JSON at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message);
  if (at !== null) return place(at[2] === "after" ? `${at[1]} after the JSON value` : at[1], text, Number(at[3]));
  if (message === "Unexpected end of JSON input") return place(message, text, text.length);
  const token = /^(Unexpected token '[\s\S]+?'), (\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/.exec(message);
  if (token === null) return { reason: message };
  const [, reason, before, quoted, after] = token;
  if (before !== undefined && after !== undefined) return place(reason, text, text.indexOf(quoted) + QUOTE_CONTEXT);
  if (after !== undefined) return place(reason, text, quoted.length - QUOTE_CONTEXT); // the quote starts the text
  if (before !== undefined) return place(reason, text, text.length - quoted.length + QUOTE_CONTEXT); // the quote ends the text
  return { reason }; // a short text, quoted whole: no place to tell
}

/** `reason at line L, column C` (or the reason alone when there is no place). */
export function jsonSyntaxError(text: string, e: unknown): string {
  const p = jsonSyntaxProblem(text, e);
  return p.line === undefined ? p.reason : `${p.reason} at line ${p.line}, column ${p.column}`;
}

// A literal that overflows a double has a three-digit exponent or, with at most 99, over 209
// digits before it: text with neither (nearly all) is not searched.
const MAYBE_OVERFLOW = /[eE]\+?\d{3}|\d{210}/;

/**
 * Where in `text` (JSON that parsed) a number too large for a double is (JSON.parse reads it as
 * Infinity, which JSON cannot write), as "reason at line L, column C"; undefined when none is.
 */
export function overflowingNumber(text: string): string | undefined {
  if (!MAYBE_OVERFLOW.test(text)) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Just past the string's closing quote, one not escaped.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92 /* \ */) i++;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let end = i + 1;
      while (end < text.length && /[\d.eE+-]/.test(text[end])) end++;
      if (!Number.isFinite(Number(text.slice(i, end)))) {
        const p = place("a number too large for a double (JSON has no infinity)", text, i);
        return `${p.reason} at line ${p.line}, column ${p.column}`;
      }
      i = end - 1;
    }
  }
  return undefined;
}

function place(reason: string, text: string, offset: number): JsonSyntaxProblem {
  const at = Math.max(0, Math.min(offset, text.length));
  const lineStart = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < lineStart; i = text.indexOf("\n", i + 1)) line++;
  return { reason, line, column: at - lineStart + 1 };
}
