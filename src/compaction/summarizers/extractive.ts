// The deterministic extractive summarizer: no model, one line per message taken from the
// messages themselves (a recap line where there is one), user requests that were answered
// marked done, oldest lines dropped first to fit the budget. A summary strategy without an
// llm is this summarizer, and its results say so (`summarizer: "extractive"`).
import { messageText } from "../../llm/messages.js";
import type { ChatMessage } from "../../llm/types.js";
import { firstLine, isAnswered } from "../messages.js";
import { countTokens } from "../tokens.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../types.js";

const VARIABLES = "Variables: ";
const OPEN = "- [open] User: ";
const DONE = "- [done] User: ";

function recapLine(text: string): string | undefined {
  return text.split("\n").find((l) => l.trim().startsWith("recap -"))?.trim();
}

function lineOf(messages: readonly ChatMessage[], i: number): string[] {
  const m = messages[i];
  const text = messageText(m);
  switch (m.role) {
    case "user":
      return [`${isAnswered(messages, i) ? DONE : OPEN}${firstLine(text, 160)}`];
    case "assistant": {
      const lines = text.trim() === "" ? [] : [`- Assistant: ${recapLine(text) ?? firstLine(text, 160)}`];
      for (const c of m.tool_calls ?? []) lines.push(`- Called ${c.function.name}(${firstLine(c.function.arguments, 80)})`);
      return lines;
    }
    case "tool":
      return [`  -> ${firstLine(text, 100) || "(empty result)"}`];
    default:
      return [];
  }
}

/** The extractive summary of a request, deterministic and within `maxTokens` when any line fits. */
export function extractiveSummary(request: SummaryRequest): string {
  const lines: string[] = [];
  // A request still open when last folded that the new messages answer (isAnswered from before them) is done now.
  const answered = isAnswered(request.messages, -1);
  if (request.previous) for (const l of request.previous.split("\n")) if (!l.startsWith(VARIABLES)) lines.push(answered && l.startsWith(OPEN) ? DONE + l.slice(OPEN.length) : l);
  for (let i = 0; i < request.messages.length; i++) lines.push(...lineOf(request.messages, i));
  const tail = request.knownNames && request.knownNames.length > 0 ? [VARIABLES + request.knownNames.join(", ")] : [];
  // Each line costs its tokens plus about one for the newline joining it.
  const cost = (l: string): number => countTokens(l) + 1;
  let total = tail.reduce((n, l) => n + cost(l), 0);
  const kept: string[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const c = cost(lines[i]);
    if (total + c > request.maxTokens) break;
    total += c;
    kept.push(lines[i]);
  }
  kept.reverse();
  return [...kept, ...tail].join("\n");
}

export const extractiveSummarizer: Summarizer = {
  name: "extractive",
  usesLlm: false,
  summarize: (request: SummaryRequest): Promise<SummaryResult> =>
    Promise.resolve({ text: extractiveSummary(request), llmCalls: 0, inputTokens: 0, outputTokens: 0 }),
};
