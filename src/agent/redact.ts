// Hidden context (`_`-prefixed keys) never reaches a prompt. Programs may use such values (an
// API token passed to a tool), and what a program prints, passes to tools or defines is shown
// to the model in feedback and summaries; so every prompt is scanned, as sent, for the hidden
// values' text and each occurrence is replaced by where the value lives (`data/_token`).
import { quoteString } from "../lisp/printer.js";
import type { TextMessage } from "../llm/types.js";
import { isHiddenKey } from "./prompt/context.js";

/** Shorter values (a flag, a small number) would redact ordinary text; they are not secrets. */
const MIN_SECRET_CHARS = 4;

export type Redactor = (messages: TextMessage[]) => TextMessage[];

function leaves(x: unknown, out: string[], depth = 0): void {
  if (depth > 64 || x === null || x === undefined) return;
  if (typeof x === "string") {
    if (x.length >= MIN_SECRET_CHARS) out.push(x);
    return;
  }
  if (typeof x === "number" || typeof x === "bigint") {
    const s = String(x);
    if (s.length >= MIN_SECRET_CHARS) out.push(s);
    return;
  }
  if (typeof x !== "object") return;
  for (const v of x instanceof Map ? x.values() : x instanceof Set ? x.values() : Object.values(x as Record<string, unknown>)) leaves(v, out, depth + 1);
}

/** Replaces every spelling of a run's hidden values in a text by their place (`data/_token`). */
export type Scrubber = (text: string) => string;

/** A scrubber for a run's context, or null when it hides nothing. */
export function hiddenScrubber(context: Readonly<Record<string, unknown>>): Scrubber | null {
  const needles: Array<[text: string, stand: string]> = [];
  for (const key of Object.keys(context)) {
    if (!isHiddenKey(key)) continue;
    const found: string[] = [];
    leaves(context[key], found);
    for (const text of found) {
      needles.push([text, `data/${key}`]);
      // The printed (EDN) and JSON spellings of a string with quotes or backslashes differ from it.
      const edn = quoteString(text).slice(1, -1);
      if (edn !== text) needles.push([edn, `data/${key}`]);
      const json = JSON.stringify(text).slice(1, -1);
      if (json !== text && json !== edn) needles.push([json, `data/${key}`]);
    }
  }
  if (needles.length === 0) return null;
  // Longest first, so a secret that contains another is replaced whole.
  needles.sort((a, b) => b[0].length - a[0].length);
  // Prompts repeat most messages from one turn to the next: each distinct text is scrubbed once.
  const done = new Map<string, string>();
  return (text) => {
    let out = done.get(text);
    if (out !== undefined) return out;
    out = text;
    for (const [needle, stand] of needles) if (out.includes(needle)) out = out.split(needle).join(stand);
    if (done.size >= 4096) done.clear();
    done.set(text, out);
    return out;
  };
}

/** A redactor for a run's context, or null when it hides nothing. */
export function hiddenRedactor(context: Readonly<Record<string, unknown>>): Redactor | null {
  const scrub = hiddenScrubber(context);
  if (scrub === null) return null;
  return (messages) =>
    messages.map((m) => {
      const content = scrub(m.content);
      return content === m.content ? m : { ...m, content };
    });
}

/**
 * Every string in plain data (a turn record, tool arguments) scrubbed; the same object back
 * when nothing in it changed, so records shared between turns stay shared.
 */
export function scrubData<T>(x: T, scrub: Scrubber, depth = 0): T {
  if (typeof x === "string") return scrub(x) as T;
  if (x === null || typeof x !== "object" || depth > 64) return x;
  if (Array.isArray(x)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < x.length; i++) {
      const v = scrubData(x[i] as unknown, scrub, depth + 1);
      if (v !== x[i] && out === null) out = x.slice(0, i);
      if (out !== null) out.push(v);
    }
    return (out ?? x) as T;
  }
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return x;
  let out: Record<string, unknown> | null = null;
  const entries = Object.entries(x as Record<string, unknown>);
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i];
    const w = scrubData(v, scrub, depth + 1);
    if (w !== v && out === null) out = Object.fromEntries(entries.slice(0, i));
    if (out !== null) out[k] = w;
  }
  return (out ?? x) as T;
}
