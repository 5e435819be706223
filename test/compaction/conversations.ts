// Small hand-built conversations for the compaction tests.
import type { ChatMessage } from "../../src/llm/types.js";

export const sys = (content: string): ChatMessage => ({ role: "system", content });
export const user = (content: string): ChatMessage => ({ role: "user", content });
export const assistant = (content: string): ChatMessage => ({ role: "assistant", content });
export const call = (id: string, name: string, args = "{}", content: string | null = null): ChatMessage => ({
  role: "assistant",
  content,
  tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
});
export const result = (id: string, content: string): ChatMessage => ({ role: "tool", tool_call_id: id, content });

/** A chat of `rounds` user/assistant rounds after a system message, each assistant reply with a recap line. */
export function chat(rounds: number): ChatMessage[] {
  const out = [sys("You are helpful.")];
  for (let i = 1; i <= rounds; i++) {
    out.push(user(`Request ${i}: please look up item ${i} in the catalogue and report its price.`));
    out.push(assistant(`recap - looked up item ${i}\nItem ${i} costs ${i * 10} euros. It is in stock and ships within ${i} days from the main warehouse.`));
  }
  return out;
}
