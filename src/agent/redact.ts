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

/** A redactor for a run's context, or null when it hides nothing. */
export function hiddenRedactor(context: Readonly<Record<string, unknown>>): Redactor | null {
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
  const scrub = (text: string): string => {
    let out = done.get(text);
    if (out !== undefined) return out;
    out = text;
    for (const [needle, stand] of needles) if (out.includes(needle)) out = out.split(needle).join(stand);
    if (done.size >= 4096) done.clear();
    done.set(text, out);
    return out;
  };
  return (messages) =>
    messages.map((m) => {
      const content = scrub(m.content);
      return content === m.content ? m : { ...m, content };
    });
}
