// Forms: what the reader produces. Plain data with source locations, nothing evaluated.
import { clipped } from "./cuts.js";
import type { SourceLoc } from "./errors.js";

export type Form =
  | { type: "nil"; loc: SourceLoc }
  | { type: "boolean"; value: boolean; loc: SourceLoc }
  | { type: "int"; value: number; text: string; loc: SourceLoc }
  | { type: "float"; value: number; text?: string; loc: SourceLoc }
  | { type: "string"; value: string; loc: SourceLoc }
  | { type: "char"; value: string; loc: SourceLoc }
  | { type: "keyword"; name: string; loc: SourceLoc }
  | { type: "symbol"; name: string; loc: SourceLoc }
  | { type: "regex"; source: string; loc: SourceLoc }
  | { type: "list"; items: Form[]; loc: SourceLoc }
  | { type: "vector"; items: Form[]; loc: SourceLoc }
  | { type: "map"; items: Form[]; loc: SourceLoc }
  | { type: "set"; items: Form[]; loc: SourceLoc }
  | { type: "fnlit"; items: Form[]; loc: SourceLoc };

export type FormType = Form["type"];

export const isSym = (f: Form | undefined, name?: string): f is Extract<Form, { type: "symbol" }> =>
  f !== undefined && f.type === "symbol" && (name === undefined || f.name === name);

/** Source text of a form, for error messages and kept definitions. */
export function formText(source: string, f: Form): string {
  return source.slice(f.loc.offset, f.loc.end);
}

/** A short rendering of a form for messages (`(foo ...)`). */
export function describeForm(f: Form): string {
  switch (f.type) {
    case "nil":
      return "nil";
    case "boolean":
      return String(f.value);
    case "int":
    case "float":
      return f.text ?? String(f.value);
    case "string":
      return JSON.stringify(clipped(f.value, 30));
    case "char":
      return "\\" + f.value;
    case "keyword":
      return ":" + f.name;
    case "symbol":
      return f.name;
    case "regex":
      return `#"${f.source}"`;
    case "list":
      return f.items.length === 0 ? "()" : `(${describeForm(f.items[0])}${f.items.length > 1 ? " ..." : ""})`;
    case "vector":
      return f.items.length === 0 ? "[]" : "[...]";
    case "map":
      return f.items.length === 0 ? "{}" : "{...}";
    case "set":
      return "#{...}";
    case "fnlit":
      return "#(...)";
  }
}
