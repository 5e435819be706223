// The reader: source text to forms. The Peggy grammar does the parsing; this module
// checks delimiters first, then turns the raw parse into forms and reports unsupported
// Clojure syntax with a hint.
import { checkDelimiters } from "./delimiters.js";
import { aboutSource, LispError, type SourceLoc } from "./errors.js";
import type { Form } from "./forms.js";
import { parse, SyntaxError as PeggySyntaxError } from "./generated/parser.js";

interface RawForm {
  type: string;
  loc: SourceLoc;
  items?: RawForm[];
  name?: string;
  syntax?: string;
  text?: string;
  tag?: string;
  value?: unknown;
}

const UNSUPPORTED: Record<string, [string, string]> = {
  quote: ["quote syntax ('expr) is not supported", "use a vector [1 2 3] for literal data; there are no lists or symbols as values"],
  deref: ["deref syntax (@x) is not supported: there are no atoms or refs", "keep changing state in loop/recur bindings, or def a new value"],
  "syntax-quote": ["syntax-quote (`) is not supported: there are no macros", "write the code directly"],
  unquote: ["unquote (~) is not supported: there are no macros", "write the code directly"],
  "unquote-splicing": ["unquote-splicing (~@) is not supported: there are no macros", "write the code directly"],
  metadata: ["metadata (^) is not supported", "remove the type hint or metadata"],
  "var-quote": ["var-quote (#'x) is not supported", "refer to the name directly: x"],
  "reader-conditional": ["reader conditionals (#?) are not supported", "write the code for PTC-Lisp only"],
  ratio: ["ratio literals are not supported", "write (/ 1 2) or 0.5"],
  "auto-keyword": ["namespaced keywords (::k) are not supported", "use a plain keyword :k"],
  discard: ["#_ drops the form after it, and no form follows it here", "remove the #_, or put the form to drop after it"],
  octal: ["a number with a leading zero is octal, and 8 and 9 are not octal digits", "write it without the leading zero (8), or as a string (\"08\") if it is a code"],
};

const MAX_SAFE_INT = Number.MAX_SAFE_INTEGER;

function convert(raw: RawForm, fnlitDepth: number): Form {
  const loc = raw.loc;
  switch (raw.type) {
    case "unsupported": {
      if (raw.syntax === "tagged-literal") {
        throw new LispError("parse_error", aboutSource(`tagged literal #${raw.tag} is not supported`), loc, "PTC-Lisp reads plain EDN data: nil, booleans, numbers, strings, keywords, vectors, maps and sets", "read");
      }
      if (raw.syntax === "char") {
        const hint = "a character is \\ and one character (\\a), \\uXXXX, \\oNNN or \\newline \\space \\tab \\return \\backspace \\formfeed; write text as a string \"...\"";
        throw new LispError("parse_error", aboutSource(`unsupported character literal \\${raw.text}`), loc, hint, "read");
      }
      if (raw.syntax === "number") {
        const hint = "a number is an integer (42, 0x2A or 052, with an optional N; 2r101010) or a float (4.2, 4.2e1, with an optional M)";
        throw new LispError("parse_error", aboutSource(`invalid number ${raw.text}`), loc, hint, "read");
      }
      const [msg, hint] = UNSUPPORTED[raw.syntax ?? ""] ?? ["unsupported syntax", "use plain PTC-Lisp forms"];
      throw new LispError("parse_error", msg, loc, hint, "read");
    }
    case "symbol":
      if (raw.name === "nil") return { type: "nil", loc };
      if (raw.name === "true" || raw.name === "false") return { type: "boolean", value: raw.name === "true", loc };
      return { type: "symbol", name: raw.name as string, loc };
    case "int": {
      const v = raw.value as number;
      if (!Number.isSafeInteger(v)) {
        throw new LispError("parse_error", aboutSource(`integer ${raw.text} is out of range (integers are limited to ±${MAX_SAFE_INT})`), loc, "write it as a float, e.g. 1.5e20", "read");
      }
      // -0 reads as 0, as in Clojure: an integer has no sign of zero.
      return { type: "int", value: v + 0, text: raw.text as string, loc };
    }
    case "radix":
      return convert({ type: "int", text: raw.text, value: radixValue(raw.text as string, loc), loc }, fnlitDepth);
    case "list":
    case "vector":
    case "map":
    case "set":
    case "fnlit": {
      if (raw.type === "fnlit" && fnlitDepth > 0) {
        throw new LispError("parse_error", "nested #() function literals are not allowed", loc, "use (fn [x] ...) for the inner function", "read");
      }
      const inner = raw.type === "fnlit" ? fnlitDepth + 1 : fnlitDepth;
      const items = (raw.items as RawForm[]).map((r) => convert(r, inner));
      if (raw.type === "map" && items.length % 2 !== 0) {
        throw new LispError("parse_error", `a map literal needs an even number of forms (key value pairs), got ${items.length}`, loc, "every key needs a value", "read");
      }
      return { type: raw.type, items, loc } as Form;
    }
    default:
      return raw as unknown as Form;
  }
}

/** The value of a radix integer (`-16rFF`), read as Clojure reads it; a parse_error for a bad radix or digit. */
function radixValue(text: string, loc: SourceLoc): number {
  const r = text.search(/[rR]/);
  const sign = text[0] === "-" ? -1 : 1;
  const radix = Number(text.slice(/[-+]/.test(text[0]) ? 1 : 0, r));
  const hint = "a radix integer is the radix (2 to 36), r, and its digits: 2r101 is 5, 16rFF is 255";
  if (radix < 2 || radix > 36) throw new LispError("parse_error", `invalid number ${text}: the radix must be from 2 to 36`, loc, hint, "read");
  let v = 0;
  for (const c of text.slice(r + 1)) {
    const d = parseInt(c, 36);
    if (d >= radix) throw new LispError("parse_error", `invalid number ${text}: ${c} is not a digit in radix ${radix}`, loc, hint, "read");
    v = v * radix + d;
  }
  return sign * v;
}

/** Reads a whole program into top-level forms. Throws a LispError (phase "read") on bad input. */
export function read(source: string, maxDepth: number, maxForms = Infinity): Form[] {
  checkDelimiters(source, maxDepth, maxForms);
  let raw: RawForm[];
  try {
    raw = parse(source) as RawForm[];
  } catch (e) {
    if (e instanceof PeggySyntaxError) {
      const l = e.location.start;
      const found = e.found === null ? "end of input" : JSON.stringify(e.found);
      const message = e.expected ? `unexpected ${found}` : e.message;
      // `{"name": "x"}`: a colon ending a key is JSON, not EDN.
      const hint = source[l.offset - 1] === ":" ? 'this looks like JSON: write {"name" "x"} or {:name "x"} (no colon after a key; commas are optional)' : undefined;
      throw new LispError("parse_error", message, { line: l.line, column: l.column, offset: l.offset, end: e.location.end.offset, source }, hint, "read");
    }
    throw e;
  }
  return raw.map((r) => convert(r, 0));
}

// The grammar's symbol rule (grammar/ptc-lisp.peggy: SymbolStart SymbolChar*, not a number).
const SYMBOL_NAME = /^(?![-+]?[0-9])[a-zA-Z*+!\-_?<>=/.&%$|\u00A0-\uFFFF][a-zA-Z0-9*+!\-_?<>=/.&%$|':#\u00A0-\uFFFF]*$/;

/** Whether `name` can be written as a symbol, e.g. after `data/` (a context key with a space cannot). */
export function isSymbolName(name: string): boolean {
  return SYMBOL_NAME.test(name);
}
