// The full-history view: system, task, then every turn's reply and feedback verbatim (hidden
// values' stand-ins shown, as every prompt is sent).
import { showStandIns } from "../lisp/index.js";
import type { TextMessage as ChatMessage } from "../llm/types.js";
import { viewSystem } from "./legend.js";
import type { PromptView, TurnPlace } from "./view.js";

export const fullView: PromptView = (input) => {
  const messages: ChatMessage[] = [
    { role: "system", content: viewSystem(input.system, "full") },
    { role: "user", content: input.task },
  ];
  const turns: TurnPlace[] = [];
  for (const t of input.turns) {
    turns.push({ turn: t.number, message: messages.length, start: 0, text: t.reply });
    messages.push({ role: "assistant", content: t.reply });
    // A record holds hidden values' stand-ins unshown (a failed turn's feedback lists its calls' arguments).
    if (t.feedback !== undefined) messages.push({ role: "user", content: showStandIns(t.feedback) });
  }
  return {
    messages,
    stats: { turnsCompressed: 0, turnsFull: [], definitionsShown: 0, printlnShown: 0, printlnDropped: 0, toolCallsShown: 0 },
    turns,
  };
};
