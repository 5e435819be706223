// A reasoning model's reasoning inside its reply. DeepSeek-R1, Qwen and others served through
// OpenAI-compatible servers (vLLM, Ollama, llama.cpp) send it in the reply's text, in a
// `<think>` block before the answer, often with draft code in it. Some chat templates open the
// block themselves, so the reply holds only its end.

/** A reply split into its reasoning and its answer. */
export interface ReplyParts {
  /** The reasoning block's text, tags included ("" when there is none). */
  thinking: string;
  /** The rest: what the model answered. */
  answer: string;
  /** The reply ended inside the reasoning: there is no answer. */
  unclosed: boolean;
}

const TAG = "think|thinking|reasoning";
// The block opening the reply; it may be left open (the reply cut off while reasoning).
const OPENED = new RegExp(`^\\s*<(${TAG})>`, "i");
// Only the end, closing its line: a program's own "</think>" sits inside a string, mid-line.
const CLOSED_ONLY = new RegExp(`</(${TAG})>[ \\t]*(?:\\r?\\n|$)`, "i");
// An opening tag before that end: the block was opened in the reply, not by the template.
const ANY_OPEN = new RegExp(`<(${TAG})>`, "i");

/** Splits off a reasoning block that opens the reply (or whose end alone the reply holds). */
export function splitThinking(reply: string): ReplyParts {
  const open = OPENED.exec(reply);
  if (open !== null) {
    const closeTag = `</${open[1].toLowerCase()}>`;
    const end = reply.toLowerCase().indexOf(closeTag, open[0].length);
    if (end < 0) return { thinking: reply, answer: "", unclosed: true };
    const cut = end + closeTag.length;
    return { thinking: reply.slice(0, cut), answer: reply.slice(cut), unclosed: false };
  }
  const close = CLOSED_ONLY.exec(reply);
  if (close === null || ANY_OPEN.test(reply.slice(0, close.index))) return { thinking: "", answer: reply, unclosed: false };
  const cut = close.index + close[0].length;
  return { thinking: reply.slice(0, cut), answer: reply.slice(cut), unclosed: false };
}
