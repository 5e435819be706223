// Observation masking (SWE-agent's last_n_observations, OpenHands' observation_masking; "The
// Complexity Trap", 2025): tool results older than the last `turns` turns become a one-line
// placeholder that says the output existed (tool name, line count, exit status or first line).
// Every assistant message (reasoning and actions) stays whole. `polling` advances the boundary
// only every k turns, so the prompt prefix changes once per k requests and a prefix cache
// survives in between. No model call and no state: a pure function of the messages.
import { z } from "zod";
import { messageText } from "../../llm/messages.js";
import type { ChatMessage } from "../../llm/types.js";
import { firstLine, taskIndex } from "../messages.js";
import { pureStrategy } from "./pure.js";
import { messageTokens } from "../tokens.js";

export const maskingShape = {
  /** Turns (assistant steps after the task) whose observations stay whole. */
  turns: z.number().int().min(0).default(2),
  /** The boundary moves only every `polling` turns: between `turns` and `turns + polling - 1` turns stay whole. */
  polling: z.number().int().min(1).default(10),
  /** Tools whose results are never masked. */
  neverMask: z.array(z.string().min(1)).default([]),
  /** Tools whose results are masked as soon as the model has answered them once. */
  alwaysMask: z.array(z.string().min(1)).default([]),
  /**
   * "mask": a user message after the task that answers an assistant or tool message is an
   * environment reply (agent loops that send tool output as user text: mini-swe-agent's format
   * errors, PTC-Lisp `SubAgent` feedback). "keep": only tool messages are observations.
   */
  userReplies: z.enum(["keep", "mask"]).default("keep"),
  /** Longest first line a placeholder quotes. */
  firstLineChars: z.number().int().min(8).default(80),
};

/** Rejects a tool named in both override lists (used by every schema that embeds the masking options). */
export const overridesAgree = (o: { neverMask: string[]; alwaysMask: string[] }): boolean => !o.neverMask.some((t) => o.alwaysMask.includes(t));
export const overridesMessage = { message: "a tool cannot be in both neverMask and alwaysMask" };

const schema = z.object(maskingShape).strict().refine(overridesAgree, overridesMessage);

export type MaskingOptions = z.output<typeof schema>;

/** Turns (assistant messages after the task) whose observations are masked by age: a multiple of `polling`. */
export function agedTurns(assistants: number, options: Pick<MaskingOptions, "turns" | "polling">): number {
  return assistants > options.turns ? Math.floor((assistants - options.turns) / options.polling) * options.polling : 0;
}

/** Where each turn starts: the assistant messages after the task. */
function turnStarts(messages: readonly ChatMessage[]): number[] {
  const starts: number[] = [];
  const task = taskIndex(messages);
  if (task >= 0) for (let i = task + 1; i < messages.length; i++) if (messages[i].role === "assistant") starts.push(i);
  return starts;
}

/**
 * The index of the assistant message that starts the first turn whose observations are not
 * masked by age (the last turn at most), or -1 when there is no turn after the task. Messages
 * before it change no more as the conversation grows, so a summary may cover them.
 */
export function maskBoundary(messages: readonly ChatMessage[], options: Pick<MaskingOptions, "turns" | "polling">): number {
  const starts = turnStarts(messages);
  if (starts.length === 0) return -1;
  return starts[Math.min(agedTurns(starts.length, options), starts.length - 1)];
}

/** What stays of an observation: its tool, size, and the exit status or first line. */
export function placeholder(tool: string, text: string, firstLineChars: number): string {
  // Counted in one pass: /\n+$/ rescanned a run of blank lines from each of its newlines (50,000 took 4.7 s).
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  let lines = 1;
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) lines++;
  const status = /<returncode>\s*(-?\d+)\s*<\/returncode>|\b(?:exit(?:ed with)? (?:code|status)|return ?code)\s*[:=]?\s*(-?\d+)/i.exec(text);
  const tail = status !== null ? `exit status ${status[1] ?? status[2]}` : `first line: ${firstLine(text, firstLineChars)}`;
  return `[Old ${tool} output omitted: ${lines} line${lines === 1 ? "" : "s"}; ${tail}]`;
}

// A masked message per stored message, so repeated requests reuse one object (token counts and
// prefix comparisons stay cached). The key holds what the placeholder depends on.
const masks = new WeakMap<ChatMessage, { key: string; masked: ChatMessage | null }>();

function masked(m: ChatMessage, tool: string, firstLineChars: number): ChatMessage | null {
  const key = `${tool}\n${firstLineChars}`;
  const hit = masks.get(m);
  if (hit !== undefined && hit.key === key) return hit.masked;
  const replacement: ChatMessage = { ...m, content: placeholder(tool, messageText(m), firstLineChars) };
  // A short output stays as it is: its placeholder would not be smaller.
  const out = messageTokens(replacement) < messageTokens(m) ? replacement : null;
  masks.set(m, { key, masked: out });
  return out;
}

export const observationMaskingStrategy = pureStrategy<MaskingOptions>({
  name: "observation-masking",
  description: "Replaces tool results older than the last `turns` (2) turns by a one-line placeholder (tool, line count, exit status or first line), advancing the boundary every `polling` (10) turns; assistant messages stay whole; no model call.",
  schema,
  // The current and the previous boundary: the next move rewrites only what follows the current
  // one, and a prompt marked at the previous one finds the entry the requests before it wrote.
  cacheBreakpoints(projected, options) {
    const starts = turnStarts(projected);
    const aged = agedTurns(starts.length, options);
    const marks: number[] = [];
    if (aged >= options.polling) marks.push(starts[aged - options.polling]);
    if (aged > 0 && aged < starts.length) marks.push(starts[aged]);
    return marks;
  },
  rewrite(messages, options) {
    const task = taskIndex(messages);
    if (task < 0) return null;
    const out = messages.slice();
    let assistants = 0;
    for (let i = task + 1; i < messages.length; i++) if (messages[i].role === "assistant") assistants++;
    const aged = agedTurns(assistants, options);
    const names = new Map<string, string>();
    let turn = -1;
    let first = -1;
    let count = 0;
    for (let i = task + 1; i < messages.length; i++) {
      const m = messages[i];
      if (m.role === "assistant") {
        turn++;
        for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
        continue;
      }
      if (turn < 0) continue;
      let tool: string;
      if (m.role === "tool") tool = (m.tool_call_id === undefined ? undefined : names.get(m.tool_call_id)) ?? m.name ?? "tool";
      else if (m.role === "user" && options.userReplies === "mask" && previousRole(messages, i) !== "user") tool = "environment";
      else continue;
      if (options.neverMask.includes(tool)) continue;
      const old = turn < aged || (turn < assistants - 1 && options.alwaysMask.includes(tool));
      if (!old) continue;
      const replacement = masked(m, tool, options.firstLineChars);
      if (replacement === null) continue;
      out[i] = replacement;
      if (first < 0) first = i;
      count++;
    }
    const events = count === 0 ? [] : [{ kind: "compacted" as const, messageIndex: first, replaced: count, detail: `${count} observations masked (turns before ${aged + 1} of ${assistants})` }];
    return { messages: out, events };
  },
});

function previousRole(messages: readonly ChatMessage[], i: number): ChatMessage["role"] | undefined {
  for (let j = i - 1; j >= 0; j--) if (messages[j].role !== "system") return messages[j].role;
  return undefined;
}
