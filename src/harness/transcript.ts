// Transcripts for the harness: one conversation per JSONL line (messages, optional goal labels
// and probe facts), in the format of ../shared/corpora (see its README). Every line is checked;
// a bad one is reported with its line number.
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { ChatMessage } from "../llm/types.js";

const message = z.looseObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.null()]),
  tool_calls: z.array(z.looseObject({ id: z.string(), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) })).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});

const probe = z.looseObject({
  fact: z.string(),
  value: z.string().min(1),
  introduced_at: z.number().int().nonnegative(),
  needed_at: z.array(z.number().int().nonnegative()),
  /** Every message that contains the value (the corpora list them), for retention by distance. */
  mentions: z.array(z.number().int().nonnegative()).optional(),
});

const transcript = z.looseObject({
  id: z.string(),
  source: z.string().optional(),
  messages: z.array(message).min(1),
  goals: z.array(z.looseObject({ start: z.number().int().nonnegative(), label: z.string() })).optional(),
  probes: z.array(probe).optional(),
});

export type Probe = z.infer<typeof probe>;
export interface Transcript {
  id: string;
  source?: string;
  messages: ChatMessage[];
  goals?: Array<{ start: number; label: string }>;
  probes?: Probe[];
  /** Structured records behind the prompt for message j (PTC-Lisp turn records), for strategies that read them. */
  recordsAt?: (j: number) => unknown;
}

export class TranscriptError extends Error {
  override readonly name = "TranscriptError";
}

/** Parses JSONL text; `limit` keeps the first N conversations. */
export function parseTranscripts(text: string, where: string, limit = Infinity): Transcript[] {
  const out: Transcript[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && out.length < limit; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      throw new TranscriptError(`${where}:${i + 1}: not valid JSON (${(e as Error).message})`);
    }
    const checked = transcript.safeParse(raw);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new TranscriptError(`${where}:${i + 1}: at ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    }
    out.push(checked.data as unknown as Transcript);
  }
  return out;
}

export function loadTranscripts(file: string, limit = Infinity): Transcript[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new TranscriptError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseTranscripts(text, file, limit);
}
