// The first user message: the run's visible input data and the mission, whose
// {{placeholders}} are filled from the context. Hidden (`_`) keys never appear in it.
import { ContextReader, contextValue, defaultLimits, keywordText, showStandIns } from "../../lisp/index.js";
import { renderTurnLine } from "../../trace/feedback.js";
import type { RecordOptions } from "../../trace/record.js";
import { contextLines, isHiddenKey } from "./context.js";
import { fill, template } from "../../llm/templates.js";

export type MissionResult = { ok: true; text: string } | { ok: false; message: string };

const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** Names used as {{placeholders}} in a mission, in order of first use. */
export function placeholders(prompt: string): string[] {
  return [...new Set(Array.from(prompt.matchAll(PLACEHOLDER), (m) => m[1]))];
}

/**
 * The mission with each {{key}} of `keys` (values that must stay hidden) written as the hidden
 * context key the program reads it from, `data/_key`, and a dotted path into one ({{info.token}})
 * as the read of it, `(get-in data/_info [:token])`: left as it was, the run found no key spelled so.
 */
export function hidePlaceholders(prompt: string, keys: readonly string[]): string {
  return prompt.replace(PLACEHOLDER, (m, key: string) => {
    if (keys.includes(key)) return `data/${hiddenName(key)}`;
    const dot = key.indexOf(".");
    return dot > 0 && keys.includes(key.slice(0, dot)) ? readingOf(hiddenName(key.slice(0, dot)) + key.slice(dot), {}) : m;
  });
}

/** The context key a value that must stay hidden is passed under: `_key`. */
export function hiddenName(key: string): string {
  return isHiddenKey(key) ? key : `_${key}`;
}

/**
 * How a program reads a placeholder's key: `data/_token`; a dotted path into a key
 * (`_creds.crm.token`, when no key is spelled so) as `(get-in data/_creds [:crm :token])`, since
 * `data/_creds.crm` names a key of its own.
 */
function readingOf(key: string, context: Readonly<Record<string, unknown>>): string {
  const [root, ...path] = key.split(".");
  if (path.length === 0 || root === "" || path.includes("") || Object.hasOwn(context, key)) return `data/${key}`;
  return `(get-in data/${root} [${path.map((p) => (/^\d+$/.test(p) ? p : keywordText(p))).join(" ")}])`;
}

/** Fills {{key}} from the context: strings as they are, other values as EDN, read by `reader` (the run's limits and clock). */
export function expandMission(prompt: string, context: Readonly<Record<string, unknown>>, reader = new ContextReader(defaultLimits)): MissionResult {
  const keys = placeholders(prompt);
  for (const key of keys) {
    if (isHiddenKey(key)) return { ok: false, message: `the prompt uses {{${key}}}, but context keys starting with _ are hidden from prompts; read it in the program as ${readingOf(key, context)}` };
  }
  const shown = new Map<string, string>();
  try {
    for (const key of keys) {
      // Read as a program reads it: a getter that throws is refused without its message, which may quote a secret.
      const value = Object.hasOwn(context, key) ? contextValue(context, key) : undefined;
      if (value === undefined) return { ok: false, message: `the prompt uses {{${key}}}, but the context has no key "${key}"` };
      shown.set(key, showStandIns(reader.show(key, value)));
    }
  } catch (e) {
    return { ok: false, message: `a context value used in the prompt cannot be shown: ${(e as { message?: string }).message ?? String(e)}` };
  }
  // Each use writes its value again: counted before the text is built, as it would go out, so a
  // value used many times cannot build a mission past what the host can hold.
  let length = prompt.length;
  for (const m of prompt.matchAll(PLACEHOLDER)) length += (shown.get(m[1]) as string).length - m[0].length;
  const max = reader.limits.maxBoundaryChars;
  if (length > max) return { ok: false, message: `the prompt with its {{placeholders}} filled is ${length} characters, over the limit of ${max} (maxBoundaryChars)` };
  return { ok: true, text: prompt.replace(PLACEHOLDER, (_, key: string) => shown.get(key) as string) };
}

/** "Turn 1 of 5." (with the feedback's warnings when the run is that short), or the single-turn reminder. */
export function firstTurnLine(maxTurns: number, toolsWithdrawn = false): string {
  return maxTurns === 1 ? "This is your only turn: end the program with (return ...) or (fail ...)." : renderTurnLine(1, { maxTurns, toolsWithdrawn });
}

export interface TaskInput {
  mission: string;
  context: Readonly<Record<string, unknown>>;
  maxTurns: number;
  /** The run withdraws its tools on the final turn. */
  toolsWithdrawn?: boolean;
  sample: Pick<RecordOptions, "sampleItems" | "sampleChars">;
  /** Reads the context within the run's limits and clock. */
  reader: ContextReader;
}

/** The task message. Throws a LispError when a context value cannot cross into the program. */
export function taskMessage(input: TaskInput): string {
  const lines = contextLines(input.context, input.sample, input.reader, input.mission);
  return fill(template("task"), {
    data: lines.length > 0 ? lines.join("\n") : "(none)",
    mission: input.mission.trim(),
    turn: firstTurnLine(input.maxTurns, input.toolsWithdrawn),
  });
}
