// Wraps any `Llm` and appends every call to a JSONL file: one line per request with the
// reply (or the error), so a real run can be replayed exactly by `replayLlm`.
import { appendFile, mkdir, open, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { isObjectArg, mustBe, requestProblem } from "./args.js";
import { errorText, LlmError, type LlmErrorKind } from "./errors.js";
import { messageText } from "./messages.js";
import type { Llm, LlmResponse, TextMessage } from "./types.js";

/** One line of a recording. */
export interface RecordedCall {
  request: { turn?: number; messages: TextMessage[] };
  /** The reply, when the call succeeded. */
  response?: LlmResponse;
  /** The failure, when it did not. */
  error?: { kind: LlmErrorKind | "unknown"; message: string };
  /** Wall time of the call. */
  ms: number;
  /**
   * The client the call went through, what a run lays its prompts out for: its name (whose model's
   * cache minimum a compressed history takes) and its cache model. A replay reports them, so it is
   * sent the recorded prompts. Absent in recordings made before they were recorded.
   */
  client?: RecordedClient;
}

/** A recorded client's cache settings: `Llm.name` (or the `standsFor` of one that answers for another) and `Llm.cacheModel`. */
export interface RecordedClient {
  name: string;
  cacheModel?: NonNullable<Llm["cacheModel"]>;
}

export interface RecordingOptions {
  /** Empty the file before the first call instead of appending to it. Default false. */
  fresh?: boolean;
  /** The permissions the file is created with (before the umask), e.g. 0o600 for a recording of private prompts. Default 0o666. */
  mode?: number;
}

/**
 * Returns an `Llm` that forwards to `inner` and records each call to `file`. The line is
 * written before the reply is handed back; a write failure is reported as a `config` error.
 */
export function recordingLlm(inner: Llm, file: string, options: RecordingOptions = {}): Llm {
  if (!isObjectArg(inner) || typeof (inner as { complete?: unknown }).complete !== "function") throw new LlmError("config", mustBe("recordingLlm: inner", "an Llm (an object with complete)", inner));
  if (typeof file !== "string" || file === "") throw new LlmError("config", mustBe("recordingLlm: file", "a file name", file));
  if (!isObjectArg(options)) throw new LlmError("config", mustBe("recordingLlm: options", "an object of options", options));
  const { mode = 0o666 } = options;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new LlmError("config", mustBe("recordingLlm: options.mode", "file permissions (an integer from 0 to 0o7777)", mode));
  // The file as this recorder left it (its size and last line): another writer (a second run
  // recording to the same file) changes it, and its lines would interleave with these into a
  // recording neither run made.
  let size = 0;
  let ready: Promise<void> | undefined;
  const prepare = () =>
    (ready ??= mkdir(dirname(file), { recursive: true })
      .then(() => (options.fresh ? writeFile(file, "", { mode }) : undefined))
      .then(() => stat(file).then((s) => void (size = s.size), () => void (size = 0))));
  let last: Buffer | null = null;
  const append = async (line: string): Promise<void> => {
    if (!(await leftAsItWas(file, size, last))) throw new Error("it was written by something else during this recording; record each run to its own file");
    const bytes = Buffer.from(line, "utf8");
    await appendFile(file, bytes, { mode });
    size += bytes.length;
    last = bytes;
  };
  // Calls may overlap (nested agents); lines are appended in completion order, one at a time.
  let queue: Promise<void> = Promise.resolve();
  const write = (entry: RecordedCall): Promise<void> => {
    const line = `${JSON.stringify(entry)}\n`;
    const next = queue.then(prepare).then(() => append(line));
    queue = next.catch(() => undefined);
    return next.catch((e: unknown) => {
      throw new LlmError("config", `recorder: cannot write ${file} (${errorText(e)})`);
    });
  };

  // Kept on each line (a file may hold runs of several clients): a replay of a compressed run that
  // reported no cache kind and a generic name was sent other prompts than those recorded.
  const client = recordedClient(inner);

  return {
    name: inner.name,
    // What the agent lays a compressed history out for: the recorded client's cache, not a guess.
    ...(inner.cacheModel === undefined ? {} : { cacheModel: inner.cacheModel }),
    ...(inner.standsFor === undefined ? {} : { standsFor: inner.standsFor }),
    async complete(request) {
      // Nothing to record for a request no client can send: the inner client's own check says so.
      if (requestProblem(inner.name, request) !== undefined) return inner.complete(request);
      const started = performance.now();
      const recorded: RecordedCall["request"] = {
        ...(request.turn === undefined ? {} : { turn: request.turn }),
        // As text, what a replay compares: a tool call's null content or content parts would make a recording no replay loads.
        messages: request.messages.map((m) => ({ role: m.role, content: messageText(m) })),
      };
      let response: LlmResponse;
      try {
        response = await inner.complete(request);
      } catch (e) {
        // A client may reject with anything, some of which String() cannot convert (errorText reads it safely).
        const error = { kind: e instanceof LlmError ? e.kind : ("unknown" as const), message: errorText(e) };
        // A failed write must not hide the failure being recorded: report both.
        const unwritten = await write({ request: recorded, error, ms: Math.round(performance.now() - started), ...(client && { client }) }).then(
          () => undefined,
          (w: LlmError) => w,
        );
        if (unwritten) throw new LlmError(e instanceof LlmError ? e.kind : "config", `${error.message}; and ${unwritten.message}`);
        throw e;
      }
      await write({ request: recorded, response, ms: Math.round(performance.now() - started), ...(client && { client }) });
      return response;
    },
  };
}

/** `inner`'s cache settings as a replay loads them (none for a client without a name). */
function recordedClient(inner: Llm): RecordedClient | undefined {
  const name = typeof inner.standsFor === "string" ? inner.standsFor : inner.name;
  if (typeof name !== "string") return undefined;
  const { cacheModel } = inner;
  return { name, ...(cacheModel === "token-prefix" || cacheModel === "breakpoint" ? { cacheModel } : {}) };
}

/** Whether `file` is `size` bytes long and ends with `last` (when given): as a recorder left it. */
async function leftAsItWas(file: string, size: number, last: Buffer | null): Promise<boolean> {
  const handle = await open(file, "r").catch(() => null);
  if (handle === null) return size === 0;
  try {
    if ((await handle.stat()).size !== size) return false;
    if (last === null) return true;
    const tail = Buffer.alloc(last.length);
    await handle.read(tail, 0, last.length, size - last.length);
    return tail.equals(last);
  } finally {
    await handle.close();
  }
}
