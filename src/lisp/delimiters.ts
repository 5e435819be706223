// A pre-scan of the source before parsing: finds unbalanced or mismatched delimiters
// and unterminated strings (with the position of the opener), and enforces the nesting
// limit so the generated parser can never recurse deeply, and the limit on forms (every
// collection, string and atom counts one), so a huge literal is refused before parsing.
import { LispError } from "./errors.js";

const CLOSER: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
const NAMES: Record<string, string> = { "(": "parentheses", "[": "brackets", "{": "braces" };

interface Open {
  ch: string;
  line: number;
  column: number;
  offset: number;
}

function at(kind: "parse_error" | "nesting_too_deep" | "source_too_large", message: string, line: number, column: number, offset: number, hint?: string): LispError {
  const e = new LispError(kind, message, { line, column, offset, end: offset + 1 }, hint, "read");
  return e;
}

// Characters that end an atom without being part of one: whitespace, commas, delimiters, quotes, comments.
function boundary(code: number): boolean {
  return code <= 32 || code === 44 || code === 40 || code === 41 || code === 91 || code === 93 || code === 123 || code === 125 || code === 34 || code === 59;
}

export function checkDelimiters(src: string, maxDepth: number, maxForms = Infinity): void {
  const stack: Open[] = [];
  let line = 1;
  let col = 1;
  let i = 0;
  const n = src.length;
  let forms = 0;
  // `#_` marks in a row: each one nests the parser a level deeper until the forms they drop are read.
  let discards = 0;
  const counted = (): void => {
    if (++forms > maxForms) {
      throw at("source_too_large", `the program has more than ${maxForms} forms`, line, col, i, "pass large data through the context (data/...) or a tool, not as a literal in the program");
    }
  };
  const advance = (): void => {
    if (src.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else {
      col++;
    }
    i++;
  };
  while (i < n) {
    const c = src[i];
    // A comment to the end of the line, as the grammar reads it: `;`, or `#!` (a script's first
    // line) where a token starts (inside a symbol, a#!b, it is part of the name).
    if (c === ";" || (c === "#" && src[i + 1] === "!" && (i === 0 || boundary(src.charCodeAt(i - 1))))) {
      while (i < n && src[i] !== "\n") advance();
      continue;
    }
    if (c === "#" && src[i + 1] === "_") {
      if (stack.length + ++discards > maxDepth) {
        throw at("nesting_too_deep", `forms nested deeper than ${maxDepth} levels (counting #_ discards in a row)`, line, col, i, "remove the #_ marks");
      }
      counted();
      advance();
      advance();
      continue;
    }
    // Any other token ends the run (whitespace and commas do not).
    if (src.charCodeAt(i) > 32 && c !== ",") discards = 0;
    if (c === "\\") {
      // A character literal: the next character is data, even if it is a delimiter.
      counted();
      advance();
      if (i < n) advance();
      continue;
    }
    if (c === '"' || (c === "#" && src[i + 1] === '"')) {
      const sLine = line;
      const sCol = col;
      const sOff = i;
      counted();
      if (c === "#") advance();
      advance();
      while (i < n && src[i] !== '"') {
        if (src[i] === "\\") advance();
        if (i < n) advance();
      }
      if (i >= n) throw at("parse_error", "unterminated string: missing closing \"", sLine, sCol, sOff, 'close the string with "');
      advance();
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      counted();
      stack.push({ ch: c, line, column: col, offset: i });
      if (stack.length > maxDepth) {
        throw at("nesting_too_deep", `forms nested deeper than ${maxDepth} levels`, line, col, i, "flatten the program: use let bindings or ->> threading");
      }
      advance();
      continue;
    }
    if (c === ")" || c === "]" || c === "}") {
      const open = stack.pop();
      if (!open) throw at("parse_error", `unexpected '${c}' with no matching opener`, line, col, i, `remove the extra '${c}'`);
      if (CLOSER[open.ch] !== c) {
        throw at(
          "parse_error",
          `mismatched delimiter: '${open.ch}' opened at line ${open.line}, column ${open.column} is closed by '${c}'`,
          line,
          col,
          i,
          `close it with '${CLOSER[open.ch]}'`,
        );
      }
      advance();
      continue;
    }
    // The first character of an atom (symbol, number, keyword, ...).
    if (!boundary(src.charCodeAt(i)) && (i === 0 || boundary(src.charCodeAt(i - 1)))) counted();
    advance();
  }
  if (stack.length > 0) {
    const counts = new Map<string, number>();
    for (const o of stack) counts.set(o.ch, (counts.get(o.ch) ?? 0) + 1);
    const last = stack[stack.length - 1];
    const parts = [...counts].map(([ch, k]) => `${k} unclosed '${ch}'`);
    throw at(
      "parse_error",
      `unbalanced ${NAMES[last.ch]}: ${parts.join(", ")} (the innermost opened at line ${last.line}, column ${last.column})`,
      last.line,
      last.column,
      last.offset,
      `add the missing '${CLOSER[last.ch]}'`,
    );
  }
}
