// The usage a reply reports, read as its bytes pass, holding none of it but the usage itself: a
// reply passed on rather than held whole (forwarded untouched, or one maxInFlightBodyBytes cannot
// hold) is still charged what the upstream reported.
import type { IncomingHttpHeaders } from "node:http";
import type { Transform } from "node:stream";
import { messagesUsage } from "./anthropic.js";
import { inflateStages } from "./context.js";
import { JsonUsageScan } from "./json-usage.js";
import { SseTap, type StreamUsage } from "./sse.js";

/**
 * The usage of a parsed reply: OpenAI's shape (chat, completions, embeddings: prompt_tokens), or
 * Anthropic's and the Responses API's (input_tokens); undefined when it has none.
 */
export function usageOf(parsed: object): StreamUsage | undefined {
  const u = (parsed as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null }).usage;
  if (typeof u !== "object" || u === null || typeof u.prompt_tokens !== "number") return messagesUsage(parsed);
  return { promptTokens: u.prompt_tokens, completionTokens: typeof u.completion_tokens === "number" ? u.completion_tokens : 0 };
}

/**
 * The usage of a reply fed to it piece by piece as it came from the upstream (its content-encoding
 * undone here, the pieces themselves passed on as they came): from its usage event when it is a
 * stream, else from the top-level `usage` of its JSON body. Holds nothing of the reply but that.
 */
export class ReplyUsage {
  private readonly sse: SseTap | undefined;
  private readonly json: JsonUsageScan | undefined;
  private readonly stages: Transform[] | undefined;
  private readonly inflated: Promise<void> | undefined;
  /** A coding this Node cannot undo: the usage is not read. */
  private readonly unreadable: boolean;

  constructor(headers: IncomingHttpHeaders) {
    const stream = String(headers["content-type"] ?? "").includes("text/event-stream");
    // Nothing is sent from this tap: it holds back no unfinished event, scanning each as it passes.
    this.sse = stream ? new SseTap(false, () => false) : undefined;
    this.json = stream ? undefined : new JsonUsageScan();
    const encoding = headers["content-encoding"];
    this.stages = inflateStages(encoding);
    this.unreadable = this.stages === undefined && String(encoding ?? "").split(",").some((c) => !["", "identity"].includes(c.trim().toLowerCase()));
    const stages = this.stages;
    if (stages !== undefined) {
      for (let i = 1; i < stages.length; i++) stages[i - 1].pipe(stages[i]);
      const last = stages[stages.length - 1];
      last.on("data", (c: Buffer) => this.read(c));
      // A reply that does not inflate counts what it reported before the bad bytes.
      this.inflated = new Promise((done) => {
        last.on("end", done);
        for (const s of stages) s.on("error", () => done());
      });
    }
  }

  push(chunk: Buffer): void {
    if (this.stages !== undefined) this.stages[0].write(chunk);
    else if (!this.unreadable) this.read(chunk);
  }

  /** The reply ended whole: its usage, undefined when it reports none, "unread" when its coding cannot be undone. */
  async end(): Promise<StreamUsage | undefined | "unread"> {
    if (this.unreadable) return "unread";
    this.stages?.[0].end();
    await this.inflated;
    this.sse?.end();
    if (this.sse !== undefined) return this.sse.usage;
    const json = this.json?.usageJson();
    if (json === undefined) return undefined;
    try {
      return usageOf(JSON.parse(json) as object);
    } catch {
      return undefined;
    }
  }

  /** The reply was cut: what a stream reported before it broke (a JSON body cut reports nothing). */
  cut(): StreamUsage | undefined {
    for (const s of this.stages ?? []) s.destroy();
    return this.sse?.usage;
  }

  private read(chunk: Buffer): void {
    if (this.sse !== undefined) this.sse.push(chunk);
    else this.json?.push(chunk);
  }
}
