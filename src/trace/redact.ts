// Hidden context (`_`-prefixed keys) never reaches a prompt. The interpreter marks every value
// read from it and every value computed from one (src/lisp/marks.ts), and the turn records
// hold stand-ins for them instead of the values; a stand-in is written between private-use
// characters so it can be told from data. Here the messages of a prompt get their stand-ins
// shown unquoted (`{:token <hidden string from data/_creds :token>}`). Nothing else in a
// prompt is touched: text that merely equals a hidden value is ordinary text.
import { holdsStandIn, showStandIns } from "../lisp/index.js";
import type { TextMessage } from "../llm/types.js";
import type { RunTrace } from "./trace.js";

/** The messages with their stand-ins shown; the same message objects where none holds one. */
export function showHidden(messages: TextMessage[]): TextMessage[] {
  let out: TextMessage[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const content = showStandIns(m.content);
    if (content !== m.content && out === null) out = messages.slice(0, i);
    if (out !== null) out.push(content === m.content ? m : { ...m, content });
  }
  return out ?? messages;
}

/** A run's answer (or failure) as its trace records it, when computed from hidden context: the text with stand-ins (or cut before them); undefined otherwise. */
export function hiddenOutcome(trace: RunTrace): string | undefined {
  const last = trace.turns.at(-1);
  const recorded = last?.value;
  // Traces written before valueHidden tell only by their stand-ins.
  return recorded !== undefined && (last?.valueHidden === true || holdsStandIn(recorded)) ? recorded : undefined;
}
