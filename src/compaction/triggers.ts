// When to compact, separate from how: a trigger looks at the conversation as it would be sent
// and says whether to compact now, with a reason fit for a log. Summarizing strategies take an
// optional `trigger` option ({ name, options }) that replaces their own rule.
import { z } from "zod";
import { payback } from "./payback.js";
import { fixedPriceSchema, modelPrice, providerPrice, type ModelPrice } from "./prices.js";
import { contextLimit, toolTokens } from "./models.js";
import { isUnitStart, taskIndex } from "./messages.js";
import { messageTokens } from "./tokens.js";
import type { Conversation, Json, Trigger } from "./types.js";

const triggerSchemas = {
  "token-threshold": z.object({ maxTokens: z.number().int().min(1).default(32_000) }).strict(),
  "usage-ratio": z
    .object({
      threshold: z.number().gt(0).max(1).default(0.8),
      /** Overrides the model's context limit. */
      contextLimit: z.number().int().min(1).optional(),
      /** Extra or corrected entries for the context-limit table, by model-name prefix. */
      contextLimits: z.record(z.string(), z.number().int().min(1)).default({}),
    })
    .strict(),
  "message-count": z.object({ maxMessages: z.number().int().min(1).default(40) }).strict(),
  "cost-payback": z
    .object({
      /** List prices; by default looked up by the conversation's model. */
      price: fixedPriceSchema.optional(),
      /** Requests expected after this one; "auto" assumes as many as there have been user and assistant turns so far. */
      remainingTurns: z.union([z.number().int().min(0), z.literal("auto")]).default("auto"),
      /** Messages kept at the end (as the summarizing strategy keeps them). */
      keepLast: z.number().int().min(1).default(2),
      /** Expected summary size, in tokens. */
      summaryTokens: z.number().int().min(1).default(600),
      /** Whether the summary costs an LLM call (false for the extractive summarizer). */
      summaryCall: z.boolean().default(true),
      /** The model the summary call goes to, which prices it (by default the conversation's). */
      summaryModel: z.string().min(1).optional(),
    })
    .strict(),
} as const;

export type TriggerName = keyof typeof triggerSchemas;

export interface TriggerSpec {
  readonly name: string;
  readonly options?: Readonly<Record<string, unknown>>;
}

/**
 * The zod schema of a trigger spec, for strategies that take one as an option. The trigger's own
 * name and options are checked here, so a bad one fails with the strategy's options (the error
 * names the strategy and the path, `trigger.options.maxTokens`), not later from createTrigger.
 */
export const triggerSpecSchema = z
  .object({ name: z.string(), options: z.record(z.string(), z.json()).default({}) })
  .strict()
  .superRefine((spec, ctx) => {
    if (!Object.hasOwn(triggerSchemas, spec.name)) {
      ctx.addIssue({ code: "custom", path: ["name"], message: unknownTrigger(spec.name) });
      return;
    }
    const parsed = triggerSchemas[spec.name as TriggerName].safeParse(spec.options);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", path: ["options", ...issue.path], message: issue.message });
  });

/** Longer than any trigger's name: not quoted back in an error. */
const MAX_NAME = 100;

const unknownTrigger = (name: string): string => `unknown trigger ${name.length > MAX_NAME ? `(a name of ${name.length} characters)` : `"${name}"`} (known: ${Object.keys(triggerSchemas).join(", ")})`;

function decide(compact: boolean, reason: string) {
  return { compact, reason };
}

/** Builds a trigger by name with validated options. */
export function createTrigger(spec: TriggerSpec): Trigger {
  if (!Object.hasOwn(triggerSchemas, spec.name)) throw new Error(`compaction: ${unknownTrigger(spec.name)}`);
  const name = spec.name as TriggerName;
  const parsed = triggerSchemas[name].safeParse(spec.options ?? {});
  if (!parsed.success) throw new Error(`compaction: invalid options for trigger "${name}":\n${z.prettifyError(parsed.error)}`);
  const options = parsed.data as Record<string, Json>;
  switch (name) {
    case "token-threshold": {
      const o = parsed.data as z.output<(typeof triggerSchemas)["token-threshold"]>;
      return { name, options, shouldCompact: (_c, tokens) => decide(tokens > o.maxTokens, `prompt ${tokens} tokens ${tokens > o.maxTokens ? ">" : "<="} ${o.maxTokens}`) };
    }
    case "usage-ratio": {
      const o = parsed.data as z.output<(typeof triggerSchemas)["usage-ratio"]>;
      return {
        name,
        options,
        shouldCompact(c, tokens) {
          const limit = o.contextLimit ?? contextLimit(c.model, o.contextLimits);
          // The provider's count for the previous request, when known, guards against a tokenizer that counts more than ours.
          const prompt = Math.max(tokens + toolTokens(c.tools), c.reportedPromptTokens ?? 0);
          const ratio = (prompt + (c.reservedOutputTokens ?? 0)) / limit;
          return decide(ratio >= o.threshold, `usage ${ratio.toFixed(2)} of ${limit} ${ratio >= o.threshold ? ">=" : "<"} ${o.threshold}`);
        },
      };
    }
    case "message-count": {
      const o = parsed.data as z.output<(typeof triggerSchemas)["message-count"]>;
      return { name, options, shouldCompact: (c) => decide(c.messages.length > o.maxMessages, `${c.messages.length} messages ${c.messages.length > o.maxMessages ? ">" : "<="} ${o.maxMessages}`) };
    }
    case "cost-payback": {
      const o = parsed.data as z.output<(typeof triggerSchemas)["cost-payback"]>;
      const fixed = o.price ? providerPrice(o.price.input, o.price.output, o.price.provider) : undefined;
      const summary = o.summaryModel === undefined ? undefined : modelPrice(o.summaryModel);
      return { name, options, shouldCompact: (c, tokens) => costDecision(c, tokens, fixed ?? modelPrice(c.model), o, summary) };
    }
  }
}

function costDecision(c: Conversation, tokens: number, price: ModelPrice, o: z.output<(typeof triggerSchemas)["cost-payback"]>, summaryPrice: ModelPrice = price) {
  const messages = c.messages;
  const task = taskIndex(messages);
  if (task < 0) return decide(false, "no task yet");
  let head = 0;
  for (let i = 0; i <= task; i++) head += messageTokens(messages[i]);
  // What the summary cannot replace: the messages from the cut on (the cut never splits a call
  // batch, so it may keep more than keepLast), and the system messages after the task (kept).
  let cut = Math.max(task + 1, messages.length - o.keepLast);
  while (cut > task + 1 && !isUnitStart(messages, cut)) cut--;
  let kept = 0;
  for (let i = task + 1; i < messages.length; i++) if (i >= cut || messages[i].role === "system") kept += messageTokens(messages[i]);
  let tail = 0;
  for (let i = cut; i < messages.length; i++) tail += messageTokens(messages[i]);
  const replaced = Math.max(0, tokens - head - kept);
  const saved = replaced - o.summaryTokens;
  if (saved <= 0) return decide(false, `only ${replaced} tokens could be replaced`);
  let turns = 0;
  for (const m of messages) if (m.role === "user" || m.role === "assistant") turns++;
  const remainingTurns = o.remainingTurns === "auto" ? Math.max(1, Math.ceil(turns / 2)) : o.remainingTurns;
  const p = payback(price, {
    savedTokens: saved,
    prompts: remainingTurns + 1,
    rewrittenTokens: o.summaryTokens + tail,
    summaryInputTokens: o.summaryCall ? replaced : 0,
    summaryOutputTokens: o.summaryCall ? o.summaryTokens : 0,
  }, summaryPrice);
  return decide(p.pays, `saving $${p.saving.toFixed(6)} over ${remainingTurns} turns ${p.pays ? ">" : "<="} cost $${p.cost.toFixed(6)} (summary call and cache rewrite)`);
}

/** Every trigger name with its defaults. */
export function listTriggers(): Array<{ name: string; defaults: Record<string, Json> }> {
  return Object.entries(triggerSchemas).map(([name, schema]) => ({ name, defaults: schema.parse({}) as Record<string, Json> }));
}
