// Wraps any `Llm` and appends every call to a JSONL file: one line per request with the
// reply (or the error), so a real run can be replayed exactly by `replayLlm`.
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { LlmError, type LlmErrorKind } from "./errors.js";
import type { ChatMessage, Llm, LlmResponse } from "./types.js";

/** One line of a recording. */
export interface RecordedCall {
  request: { turn?: number; messages: ChatMessage[] };
  /** The reply, when the call succeeded. */
  response?: LlmResponse;
  /** The failure, when it did not. */
  error?: { kind: LlmErrorKind | "unknown"; message: string };
  /** Wall time of the call. */
  ms: number;
}

export interface RecordingOptions {
  /** Empty the file before the first call instead of appending to it. Default false. */
  fresh?: boolean;
}

/**
 * Returns an `Llm` that forwards to `inner` and records each call to `file`. The line is
 * written before the reply is handed back; a write failure is reported as a `config` error.
 */
export function recordingLlm(inner: Llm, file: string, options: RecordingOptions = {}): Llm {
  let ready: Promise<void> | undefined;
  const prepare = () => (ready ??= mkdir(dirname(file), { recursive: true }).then(() => (options.fresh ? writeFile(file, "") : undefined)));
  // Calls may overlap (nested agents); lines are appended in completion order, one at a time.
  let queue: Promise<void> = Promise.resolve();
  const write = (entry: RecordedCall): Promise<void> => {
    const line = `${JSON.stringify(entry)}\n`;
    const next = queue.then(prepare).then(() => appendFile(file, line, "utf8"));
    queue = next.catch(() => undefined);
    return next.catch((e: unknown) => {
      throw new LlmError("config", `recorder: cannot write ${file} (${e instanceof Error ? e.message : String(e)})`);
    });
  };

  return {
    name: inner.name,
    async complete(request) {
      const started = performance.now();
      const recorded: RecordedCall["request"] = {
        ...(request.turn === undefined ? {} : { turn: request.turn }),
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      };
      let response: LlmResponse;
      try {
        response = await inner.complete(request);
      } catch (e) {
        const error = { kind: e instanceof LlmError ? e.kind : ("unknown" as const), message: e instanceof Error ? e.message : String(e) };
        // A failed write must not hide the failure being recorded: report both.
        const unwritten = await write({ request: recorded, error, ms: Math.round(performance.now() - started) }).then(
          () => undefined,
          (w: LlmError) => w,
        );
        if (unwritten) throw new LlmError(e instanceof LlmError ? e.kind : "config", `${error.message}; and ${unwritten.message}`);
        throw e;
      }
      await write({ request: recorded, response, ms: Math.round(performance.now() - started) });
      return response;
    },
  };
}
