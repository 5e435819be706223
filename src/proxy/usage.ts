// What a response's usage teaches about a conversation: the calibration of the local token
// estimate against the upstream's count, the usage ratio for status, and whether the upstream
// silently cut the prompt (it then reports far fewer prompt tokens than were sent; the window
// it really has is learned from that, so the next request is compacted to fit it).
import { messagesMediaTokens } from "../compaction/tokens.js";
import type { ChatMessage } from "../llm/types.js";
import type { ProxyConfig } from "./config.js";
import { clientPromptTokensYielding } from "./request.js";
import type { ConversationRecord } from "./store.js";

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

export interface Sent {
  /** The client's messages as sent (counted through the compaction view). */
  readonly messages: ChatMessage[];
  readonly tools: readonly unknown[] | undefined;
  readonly bodyBytes: number;
  /** Local estimate made before sending; 0 when the cheap bound skipped the tokenizer. */
  readonly estimatedTokens: number;
  readonly reserved: number;
  readonly window: number;
}

/** Updates the record from the usage the upstream reported for what was sent. Returns true when it cut the prompt. */
export async function learnFromUsage(record: ConversationRecord, config: ProxyConfig, sent: Sent, promptTokens: number | undefined): Promise<boolean> {
  let estimate = sent.estimatedTokens;
  if (promptTokens === undefined) {
    if (estimate > 0) record.usageRatio = (estimate * record.calibration + sent.reserved) / sent.window;
    record.estimatedTokens = estimate;
    // No count came for this prompt (a stream left before its usage): an earlier request's would read as this one's.
    delete record.reportedTokens;
    return false;
  }
  // Fewer than one token per 8 bytes of body is suspicious enough to count exactly: with turns of
  // the event loop, since a body of megabytes (one an upstream cut) takes long to count.
  if (estimate === 0 && promptTokens * 8 < sent.bodyBytes) estimate = await clientPromptTokensYielding(sent.messages, sent.tools);
  record.estimatedTokens = estimate;
  record.reportedTokens = promptTokens;
  // Images of unknown size were assumed 1024 x 1024; a smaller one billed less is no cut.
  if (estimate > 200 && promptTokens < (estimate - (messagesMediaTokens(sent.messages) - messagesMediaTokens(sent.messages, true))) * config.compaction.truncationRatio) {
    record.truncated = true;
    record.flagged = true;
    // The prompt it kept is what a prompt may take; the output is reserved on top, per request.
    record.learnedLimit = Math.min(record.learnedLimit ?? Infinity, promptTokens);
    record.lastError = `the upstream reported ${promptTokens} prompt tokens for about ${estimate} sent: it cut the prompt; prompts are now kept within ${record.learnedLimit} tokens`;
    record.usageRatio = (estimate + sent.reserved) / (record.learnedLimit + sent.reserved);
    return true;
  }
  if (estimate > 0) record.calibration = Math.round(clamp(Math.max(record.calibration * 0.98, promptTokens / estimate), 0.7, 1.3) * 100) / 100;
  record.usageRatio = (promptTokens + sent.reserved) / sent.window;
  return false;
}
