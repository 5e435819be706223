// The page's string and message tables: each message text is stored once and each distinct
// message (role and text) once, referred to by index, so a run whose prompts repeat the system
// prompt and every earlier turn on every turn carries each of them once.
import { messageTokens } from "../compaction/tokens.js";
import type { TextMessage } from "../llm/types.js";
import { runsOf, type MessageRef, type MessageRuns } from "./model.js";

export class TextTable {
  readonly texts: string[] = [];
  readonly messages: MessageRef[] = [];
  private readonly index = new Map<string, number>();
  private readonly messageIndex = new Map<string, number>();

  id(text: string): number {
    let i = this.index.get(text);
    if (i === undefined) {
      i = this.texts.length;
      this.texts.push(text);
      this.index.set(text, i);
    }
    return i;
  }

  /** The message's number in `messages`, adding it when first met. */
  messageId(m: TextMessage): number {
    const text = this.id(m.content);
    const key = `${m.role}:${text}`;
    let i = this.messageIndex.get(key);
    if (i === undefined) {
      i = this.messages.length;
      this.messages.push({ role: m.role, text, tokens: messageTokens(m) });
      this.messageIndex.set(key, i);
    }
    return i;
  }

  /** The messages' numbers as runs of consecutive numbers (see MessageRuns). */
  runs(messages: readonly TextMessage[]): MessageRuns {
    return runsOf(messages.map((m) => this.messageId(m)));
  }
}
