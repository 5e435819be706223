// Recap batches (seed 000, the Playbooks PRD): the model is asked (prompts/compaction-recap.md) to
// begin each reply with a `recap -` line. The last minPreservedAssistantMessages assistant
// messages stay full; older ones are compacted in multiples of batchSize (so the prompt prefix
// changes once per batch, not every turn), each to its first `recap -` line, or left in full
// when it has none. User messages all stay: they are the user's own words (a follow-up before the
// first reply can hold a constraint the recaps never repeat). No model call: a pure function of
// the messages.
import { z } from "zod";
import { messageText } from "../../llm/messages.js";
import type { ChatMessage } from "../../llm/types.js";
import { mergeRuns, taskIndex } from "../messages.js";
import { pureStrategy } from "./pure.js";
import type { CompactionEvent } from "../types.js";

const schema = z
  .object({
    enabled: z.boolean().default(true),
    minPreservedAssistantMessages: z.number().int().min(0).default(3),
    batchSize: z.number().int().min(1).default(4),
  })
  .strict();

export type RecapOptions = z.output<typeof schema>;

function recapLine(m: ChatMessage): string | undefined {
  return messageText(m)
    .split("\n")
    .find((l) => l.trim().startsWith("recap -"))
    ?.trim();
}

const ENV = {
  enabled: "LLM_COMPACTION_ENABLED",
  minPreservedAssistantMessages: "LLM_COMPACTION_MIN_PRESERVED_ASSISTANT_MESSAGES",
  batchSize: "LLM_COMPACTION_BATCH_SIZE",
} as const;

/** Recap options from the seed's environment variables (unset ones keep their defaults); a malformed value is an error naming the variable. */
export function recapOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): RecapOptions {
  const options: Record<string, boolean | number> = {};
  const enabled = env[ENV.enabled];
  if (enabled !== undefined && enabled.trim() !== "") {
    const v = enabled.trim().toLowerCase();
    if (!["true", "false", "1", "0", "yes", "no"].includes(v)) throw new Error(`${ENV.enabled} must be true or false, not ${JSON.stringify(enabled)}`);
    options.enabled = v === "true" || v === "1" || v === "yes";
  }
  for (const key of ["minPreservedAssistantMessages", "batchSize"] as const) {
    const raw = env[ENV[key]];
    if (raw === undefined || raw.trim() === "") continue;
    if (!/^\d+$/.test(raw.trim())) throw new Error(`${ENV[key]} must be a whole number, not ${JSON.stringify(raw)}`);
    options[key] = Number(raw.trim());
  }
  const parsed = schema.safeParse(options);
  if (!parsed.success) throw new Error(`invalid recap settings from the environment:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export const recapStrategy = pureStrategy<RecapOptions>({
  name: "recap",
  description: "Keeps the last minPreservedAssistantMessages (3) assistant messages full and compacts older ones, in batches of batchSize (4), to their `recap -` line; no model call.",
  schema,
  rewrite(messages, options, context) {
    const task = taskIndex(messages);
    const assistants: number[] = [];
    if (options.enabled && task >= 0) for (let i = task + 1; i < messages.length; i++) if (messages[i].role === "assistant") assistants.push(i);
    const older = assistants.length - options.minPreservedAssistantMessages;
    // Forced: every older message now, not only whole batches.
    const count = context.force ? older : Math.floor(older / options.batchSize) * options.batchSize;
    if (count <= 0) return null;
    const compacted = new Set(assistants.slice(0, count));
    const synthetic = new Set<ChatMessage>();
    const out: ChatMessage[] = [];
    let recapped = 0;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      const line = compacted.has(i) ? recapLine(m) : undefined;
      if (line === undefined) {
        out.push(m);
        continue;
      }
      const recap: ChatMessage = { role: "assistant", content: line };
      synthetic.add(recap);
      out.push(recap);
      recapped++;
      // The compacted message's tool calls go, so their results go with them (a system message among them stays).
      while (i + 1 < messages.length && (messages[i + 1].role === "tool" || messages[i + 1].role === "system")) if (messages[++i].role === "system") out.push(messages[i]);
    }
    // Recorded transcripts have no recap lines: nothing changed, so nothing was compacted.
    if (recapped === 0) return null;
    const events: CompactionEvent[] = [{ kind: "compacted", messageIndex: assistants[0], replaced: recapped, detail: `${recapped} of ${count} compacted assistant messages had a recap line` }];
    return { messages: mergeRuns(out, (m) => synthetic.has(m)), events };
  },
});
