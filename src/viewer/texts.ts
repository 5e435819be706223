// The page's string table: each message text is stored once and referred to by index, so a
// run whose prompts repeat the system prompt on every turn carries it once.
import { messageTokens } from "../compaction/tokens.js";
import type { TextMessage } from "../llm/types.js";
import type { MessageRef } from "./model.js";

export class TextTable {
  readonly texts: string[] = [];
  private readonly index = new Map<string, number>();

  id(text: string): number {
    let i = this.index.get(text);
    if (i === undefined) {
      i = this.texts.length;
      this.texts.push(text);
      this.index.set(text, i);
    }
    return i;
  }

  refs(messages: readonly TextMessage[]): MessageRef[] {
    return messages.map((m) => ({ role: m.role, text: this.id(m.content), tokens: messageTokens(m) }));
  }
}
