// Hidden context values (`_`-prefixed keys) never reach a prompt. A current trace holds
// stand-ins for them (the interpreter marks them), shown here unquoted as the prompts show
// them. Traces written before the interpreter marked values held them in tool arguments,
// output and definitions; for those the values are found where the agent replaced them: a
// sent message reads `data/_key` where the same message rebuilt from the turns holds the
// value, and every occurrence is replaced by its place.
import { showHidden } from "../trace/redact.js";
import { quoteString, showStandIns } from "../lisp/index.js";
import { compressedView } from "../history/compressed.js";
import { fullView } from "../history/full.js";
import { traceSettings } from "../history/settings.js";
import { defaultViewOptions, type ViewInput } from "../history/view.js";
import type { TextMessage } from "../llm/types.js";
import type { RunTrace } from "../trace/trace.js";

/** `data/_key`, as the redactor writes a hidden value's place. */
const PLACE = /data\/(_[A-Za-z0-9_?!*+<>=.-]*)/g;

/** Hidden values found so far, by key. */
export type HiddenValues = Map<string, Set<string>>;

/**
 * What the placeholders in `sent` stand for in `raw`, or nothing when the texts do not line
 * up. Each literal stretch between placeholders is matched in order, left to right.
 */
export function placeholderValues(sent: string, raw: string): Array<[key: string, value: string]> {
  if (sent === raw) return [];
  const parts: string[] = [];
  const keys: string[] = [];
  let last = 0;
  for (const m of sent.matchAll(PLACE)) {
    parts.push(sent.slice(last, m.index));
    keys.push(m[1]);
    last = m.index + m[0].length;
  }
  if (keys.length === 0) return [];
  parts.push(sent.slice(last));
  if (!raw.startsWith(parts[0])) return [];
  const found: Array<[string, string]> = [];
  let at = parts[0].length;
  for (let i = 0; i < keys.length; i++) {
    const next = parts[i + 1];
    const isLast = i === keys.length - 1;
    const end = isLast ? raw.length - next.length : next === "" ? -1 : raw.indexOf(next, at + 1);
    if (end <= at || (isLast && !raw.endsWith(next))) return [];
    const value = raw.slice(at, end);
    // A program naming the place itself is not a value.
    if (value !== `data/${keys[i]}`) found.push([keys[i], value]);
    at = end + next.length;
  }
  return found;
}

function learn(into: HiddenValues, sent: readonly TextMessage[], rebuilt: readonly TextMessage[]): void {
  sent.forEach((m, i) => {
    if (!m.content.includes("data/_")) return;
    // The message at the same place first; a strategy that dropped or merged messages moves them.
    const candidates = [rebuilt[i], ...rebuilt].filter((r) => r !== undefined && r.role === m.role);
    // Sent as rebuilt: nothing was replaced. Another message that merely starts and ends alike
    // would otherwise be read as holding a "value" (the text between), scrubbed from the page.
    if (candidates.some((r) => r.content === m.content)) return;
    for (const r of candidates) {
      const found = placeholderValues(m.content, r.content);
      if (found.length === 0) continue;
      for (const [key, value] of found) {
        const set = into.get(key) ?? new Set<string>();
        set.add(value);
        into.set(key, set);
      }
      return;
    }
  });
}

/** Hidden values of a run and of its nested runs, found by rebuilding each prompt from the turns before it. */
export function findHiddenValues(trace: RunTrace, into: HiddenValues = new Map()): HiddenValues {
  const checked = traceSettings(trace);
  const settings = checked.ok ? checked.settings : undefined;
  const base = settings === undefined ? { maxTurns: Math.max(1, trace.turns.length) } : { maxTurns: settings.maxTurns, toolsWithdrawn: settings.toolsWithdrawn, maxPrintChars: settings.maxPrintChars };
  for (let k = 0; k < trace.turns.length; k++) {
    const turn = trace.turns[k];
    if (turn.messages.some((m) => m.content.includes("data/_"))) {
      const input: ViewInput = { ...base, system: trace.system, task: trace.task, turns: trace.turns.slice(0, k) };
      learn(into, turn.messages, showHidden(fullView(input, defaultViewOptions).messages));
      if (settings?.view.compressHistory) learn(into, turn.messages, showHidden(compressedView(input, settings.view).messages));
    }
    for (const n of turn.nested ?? []) findHiddenValues(n.trace, into);
  }
  return into;
}

/** A function replacing every hidden value an older trace held (in each spelling) by its place; stand-ins of a current trace shown. */
export function scrubber(hidden: HiddenValues): (text: string) => string {
  const needles: Array<[string, string]> = [];
  for (const [key, values] of hidden) {
    for (const v of values) {
      if (v.length < 4) continue;
      // The printed (EDN) and JSON spellings of a value with quotes or backslashes differ from it, as the agent's redactor knew.
      for (const spelling of new Set([v, quoteString(v).slice(1, -1), JSON.stringify(v).slice(1, -1)])) needles.push([spelling, `data/${key}`]);
    }
  }
  needles.sort((a, b) => b[0].length - a[0].length);
  return (text) => {
    let out = showStandIns(text);
    for (const [needle, place] of needles) if (out.includes(needle)) out = out.split(needle).join(place);
    return out;
  };
}

/** A copy of JSON data with every string scrubbed. */
export function scrubDeep<T>(data: T, scrub: (text: string) => string): T {
  const walk = (x: unknown): unknown => {
    if (typeof x === "string") return scrub(x);
    if (Array.isArray(x)) return x.map(walk);
    if (typeof x === "object" && x !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(x)) out[k] = walk(v);
      return out;
    }
    return x;
  };
  return walk(data) as T;
}
