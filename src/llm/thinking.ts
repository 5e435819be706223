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
// The end of each block, found case-blind in the reply itself: a lower-cased copy may be longer
// ("İ", U+0130, lower-cases to two code units), and a place in it is not the reply's.
const CLOSING: ReadonlyMap<string, RegExp> = new Map(TAG.split("|").map((t) => [t, new RegExp(`</${t}>`, "gi")]));

/** Splits off a reasoning block that opens the reply (or whose end alone the reply holds). */
export function splitThinking(reply: string): ReplyParts {
  const open = OPENED.exec(reply);
  if (open !== null) {
    const closing = CLOSING.get(open[1].toLowerCase()) as RegExp;
    closing.lastIndex = open[0].length;
    const end = closing.exec(reply);
    if (end === null) return { thinking: reply, answer: "", unclosed: true };
    const cut = end.index + end[0].length;
    return { thinking: reply.slice(0, cut), answer: reply.slice(cut), unclosed: false };
  }
  const close = CLOSED_ONLY.exec(reply);
  if (close === null || ANY_OPEN.test(reply.slice(0, close.index))) return { thinking: "", answer: reply, unclosed: false };
  const cut = close.index + close[0].length;
  return { thinking: reply.slice(0, cut), answer: reply.slice(cut), unclosed: false };
}
