// Checks a summary must pass before it replaces anything: not empty, within its token budget,
// smaller than what it replaces, and naming no variable that does not exist.
import { promptTokens, countTokens } from "../tokens.js";
import type { SummaryRequest } from "../types.js";

/** The tokens a summary replaces: the messages it covers and the previous summary it folds in. */
export function coveredTokens(request: SummaryRequest): number {
  return promptTokens(request.messages) + (request.previous ? countTokens(request.previous) : 0);
}

/** Why a summary is not acceptable, or undefined when it is. */
export function summaryProblem(text: string, request: SummaryRequest): string | undefined {
  if (text.trim() === "") return "the summary is empty";
  const tokens = countTokens(text);
  if (tokens > request.maxTokens) return `the summary has ${tokens} tokens, over its budget of ${request.maxTokens}`;
  const covered = coveredTokens(request);
  if (tokens >= covered) return `the summary (${tokens} tokens) is not smaller than what it replaces (${covered} tokens)`;
  if (request.knownNames) {
    const known = new Set(request.knownNames);
    for (const match of text.matchAll(/`([^`\s]+)`/g)) {
      if (!known.has(match[1])) return `the summary mentions \`${match[1]}\`, which is not a known variable`;
    }
  }
  return undefined;
}
