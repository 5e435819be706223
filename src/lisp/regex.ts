// Regular expressions run on RE2 (re2js): matching time is linear in the input, so no
// pattern can backtrack catastrophically. Backreferences and lookaround are not supported.
import { RE2JS } from "re2js";
import { LispError } from "./errors.js";
import { Regex } from "./values.js";

export type Compiled = RE2JS;

export function compileRegex(source: string): Regex {
  try {
    return new Regex(source, RE2JS.compile(source));
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw new LispError("regex_error", `invalid regex #"${source}": ${detail}`, undefined, "regexes use RE2 syntax: no backreferences (\\1) or lookaround ((?=...), (?!...))");
  }
}

export function compiled(r: Regex): RE2JS {
  return r.compiled as RE2JS;
}
