// `ptc demo [name]`: runs an example scenario as an agent and prints each turn (program,
// tool calls, output, errors), the answer and the token use. Offline by default (the
// example's scripted transcript); `--live` asks a real model on an OpenAI-compatible server,
// `--record`/`--replay` capture and repeat a run exactly.
import { existsSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { LlmError } from "../llm/errors.js";
import { recordingLlm } from "../llm/recorder.js";
import { parseRecording, replayLlm } from "../llm/replay.js";
import type { Llm } from "../llm/types.js";
import { runToJson } from "../agent/saved-run.js";
import type { AgentEvent } from "../agent/events.js";
import { liveHint, liveLlm } from "./live-llm.js";
import { parseOptions, wholeNumber, type Io } from "./eval.js";
import { readText, TextInputError } from "../json/text-input.js";
import { inputLimit } from "../viewer/input.js";
import { forTerminal, namesOneOf, replacing, unwritable, writeOutput, type Replacement } from "./output.js";
import { renderRunHead, renderTokens, renderTurn } from "./trace.js";

const USAGE = `usage: ptc demo [name] [options]

Runs an example agent and prints its turns, its answer and its token use.
Offline by default: the model's replies come from the example's scripted transcript.

  name               the example to run (default: the first; --list shows them)
  --list             list the examples
  --live             ask a real model: Anthropic's API when ANTHROPIC_API_KEY is set
                     (and ANTHROPIC_MODEL), else OPENAI_BASE_URL, OPENAI_API_KEY and
                     OPENAI_MODEL (any OpenAI-compatible server)
  --model NAME       the model for --live (instead of ANTHROPIC_MODEL / OPENAI_MODEL)
  --timeout MS       for --live: how long one model request may take (default 120000)
  --record FILE      write every LLM request and reply to FILE (JSONL)
  --replay FILE      take the replies from a recording instead of the script (at most 64 MB)
  --compress         build prompts with the compressed history view
  --trace-out FILE   write the run's trace as JSON (read it with ptc trace show FILE)
  --full             print every output line and tool call, uncut
  --stream           show the run live on stderr as it happens: the model's reply as it
                     is written, each tool call as it starts and ends, each printed line
`;

/** The run's events as they happen, for --stream: the reply as it is written, tool calls, printed lines. */
function liveView(write: (text: string) => void): (event: AgentEvent) => void {
  let attempt = 1;
  return (e) => {
    switch (e.type) {
      case "turn-start":
        attempt = 1;
        write(`── turn ${e.turn} (live) ──\n`);
        return;
      case "text-delta":
        if (e.attempt !== attempt) write(`\n[the reply starts over: retry ${e.attempt - 1}]\n`);
        attempt = e.attempt;
        write(e.delta);
        return;
      case "program":
        write("\n");
        return;
      case "tool-call":
        write(`→ tool/${e.name} ${JSON.stringify(e.args)}\n`);
        return;
      case "tool-result":
        write(e.error === undefined ? `← tool/${e.name} (${Math.round(e.durationMs)} ms)\n` : `✗ tool/${e.name}: ${e.error}\n`);
        return;
      case "print":
        write(`| ${e.line}\n`);
        return;
      default:
        return;
    }
  };
}

/** The text of the recording `file`, or a config LlmError saying why it cannot be read. */
function readRecording(file: string): string {
  try {
    // As large as a run ptc trace show reads, no larger: past it a recording is refused unread, and one without an end read no further.
    return readText(file, file, inputLimit("replay"));
  } catch (e) {
    throw new LlmError("config", `replay: ${e instanceof TextInputError ? e.message : `cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`}`);
  }
}

/**
 * `llm`, and a promise for when every call made through it so far has ended. A run stopped
 * (Ctrl-C, SIGTERM) returns while its model call is still ending, and a recorder writes that
 * call's line after it: put in place before then, the recording was missing (ENOENT) or its
 * temporary file was made again after the rename and left behind.
 */
function settling(llm: Llm): { llm: Llm; settled: () => Promise<void> } {
  const calls = new Set<Promise<unknown>>();
  return {
    llm: {
      name: llm.name,
      ...cacheOf(llm),
      complete(request) {
        const call = llm.complete(request);
        const ended: Promise<void> = call.then(
          () => void calls.delete(ended),
          () => void calls.delete(ended),
        );
        calls.add(ended);
        return call;
      },
    },
    async settled() {
      while (calls.size > 0) await Promise.all(calls);
    },
  };
}

/** Plain-data comparison: key order and null-prototype objects do not matter. */
const sameData = (a: unknown, b: unknown): boolean => isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));

/**
 * A wrapper keeps the client's cache settings: without its cache model a compressed history is laid
 * out for a token-prefix cache whatever the provider (Anthropic's is a breakpoint one); without a
 * replay's `standsFor`, for the default cache minimum instead of the recorded model's.
 */
const cacheOf = (llm: Llm): Pick<Llm, "cacheModel" | "standsFor"> => ({ ...(llm.cacheModel === undefined ? {} : { cacheModel: llm.cacheModel }), ...(llm.standsFor === undefined ? {} : { standsFor: llm.standsFor }) });

/** Tells the user which turn the (slow) live model is on. */
function announcing(llm: Llm, io: Pick<Io, "stderr">): Llm {
  return {
    name: llm.name,
    ...cacheOf(llm),
    complete(request) {
      io.stderr.write(`… turn ${request.turn ?? "?"}: waiting for ${llm.name}\n`);
      return llm.complete(request);
    },
  };
}

/** `ptc demo [name] [--list] [--live] [--model M] [--record F] [--replay F] [--compress] [--trace-out F] [--full] [--stream]`. */
export async function runDemoCommand(args: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseOptions({
      args,
      allowPositionals: true,
      options: {
        list: { type: "boolean" },
        live: { type: "boolean" },
        model: { type: "string" },
        timeout: { type: "string" },
        record: { type: "string" },
        replay: { type: "string" },
        compress: { type: "boolean" },
        "trace-out": { type: "string" },
        full: { type: "boolean" },
        stream: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    io.stderr.write(`ptc demo: ${forTerminal((e as Error).message)}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  // Loaded on demand so other ptc commands do not pay for the examples' data.
  const { examples, findExample } = await import("../../examples/index.js");
  const { runExample, scriptedExampleLlm } = await import("../../examples/run.js");
  if (values.list) {
    // Else dropped unseen: --list --record out.jsonl ended 0 with no recording.
    const others = Object.keys(values).filter((k) => k !== "list");
    if (positionals.length > 0 || others.length > 0) {
      io.stderr.write(forTerminal(`ptc demo: --list lists the examples and runs none: it takes no ${positionals.length > 0 ? `example name (got ${positionals.join(" ")})` : `other option (got --${others.join(", --")})`}\n`));
      return 2;
    }
    const width = Math.max(...examples.map((e) => e.name.length));
    io.stdout.write(examples.map((e) => `${e.name.padEnd(width)}  ${e.title} (${e.replies.length} scripted turns)\n  ${" ".repeat(width)}${e.summary}\n`).join(""));
    return 0;
  }
  if (positionals.length > 1) {
    io.stderr.write(forTerminal(`ptc demo: expected at most one example name, got ${positionals.join(" ")}\n`));
    return 2;
  }
  const example = positionals.length === 0 ? examples[0] : findExample(positionals[0]);
  if (!example) {
    io.stderr.write(forTerminal(`ptc demo: no example "${positionals[0]}". Examples: ${examples.map((e) => e.name).join(", ")}\n`));
    return 2;
  }
  if (values.live && values.replay !== undefined) {
    io.stderr.write("ptc demo: --live and --replay exclude each other (a replay needs no model)\n");
    return 2;
  }
  for (const flag of ["model", "timeout"] as const) {
    if (values[flag] !== undefined && !values.live) {
      io.stderr.write(`ptc demo: --${flag} applies to --live runs only\n`);
      return 2;
    }
  }
  let timeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    timeoutMs = wholeNumber(values.timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
      io.stderr.write(forTerminal(`ptc demo: --timeout takes a whole number of milliseconds above 0, got ${JSON.stringify(values.timeout)}\n`));
      return 2;
    }
  }
  // Output paths are checked before the (possibly slow and paid) run, not after it.
  for (const flag of ["record", "trace-out"] as const) {
    const file = values[flag];
    if (file === undefined) continue;
    if (file === "-") {
      io.stderr.write(`ptc demo: --${flag} - would write into the run's turns on standard output: give a file name\n`);
      return 2;
    }
    // Written over the recording being replayed, that recording is lost (a replay that fails
    // leaves only the part it got through).
    if (values.replay !== undefined && namesOneOf(file, [values.replay])) {
      io.stderr.write(forTerminal(`ptc demo: --${flag} ${file} is the recording to replay: writing there would overwrite it\n`));
      return 2;
    }
    const problem = unwritable(file);
    if (problem !== undefined) {
      io.stderr.write(forTerminal(`ptc demo: cannot write --${flag} ${file}: ${problem}\n`));
      return 2;
    }
  }
  if (values.record !== undefined && values["trace-out"] !== undefined && namesOneOf(values.record, [values["trace-out"]])) {
    io.stderr.write("ptc demo: --record and --trace-out name the same file: the trace would overwrite the recording\n");
    return 2;
  }

  let llm: Llm;
  try {
    if (values.live) {
      llm = announcing(
        liveLlm({
          ...(values.model === undefined ? {} : { model: values.model }),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          onRetry: ({ attempt, delayMs, error }) => io.stderr.write(forTerminal(`… ${error.message}; retrying in ${(delayMs / 1000).toFixed(1)} s (retry ${attempt})\n`)),
        }),
        io,
      );
    }
    // Read here, bounded and strictly UTF-8: a recording without an end (/dev/zero) is refused, not read until memory runs out.
    else if (values.replay !== undefined) llm = replayLlm(parseRecording(readRecording(values.replay), values.replay), { name: `replay:${values.replay}` });
    else llm = scriptedExampleLlm(example);
  } catch (e) {
    if (!(e instanceof LlmError)) throw e;
    const hint = values.live ? `\n${liveHint()}` : "";
    io.stderr.write(forTerminal(`ptc demo: ${e.message}${hint}\n`));
    return 2;
  }
  // Recorded beside the file and put in place when the run ends: a run killed halfway leaves the previous recording.
  let recording: Replacement | undefined;
  let recorded = async (): Promise<void> => undefined;
  if (values.record !== undefined) {
    // A recording replayed into it is what it holds: it gets no more readers than that one has.
    const replacement = replacing(values.record, values.replay === undefined ? [] : [values.replay]);
    recording = replacement;
    ({ llm, settled: recorded } = settling(recordingLlm(llm, replacement.path, { fresh: true, mode: replacement.mode })));
  }

  // A live model's replies and its tools' output, printed: safe for a terminal.
  const out = { write: (text: string) => io.stdout.write(forTerminal(text)) };
  const mode = values.live ? "live" : values.replay !== undefined ? `replaying ${values.replay}` : "offline, scripted replies";
  out.write(`Example: ${example.name}: ${example.title}\n${example.summary}\nLLM: ${llm.name} (${mode})${values.compress ? " · compressed history" : ""}\nMission: ${example.prompt}\n\n`);

  // Ctrl-C ends a (slow, live) run as "aborted", keeping its trace for --trace-out; so does
  // SIGTERM (timeout, a supervisor), which otherwise killed the process with the recording's
  // temporary file left beside it and no trace.
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once("SIGINT", onInterrupt);
  process.once("SIGTERM", onInterrupt);
  // Each turn is printed as it ends (a live model is slow), the run's totals after the last.
  const render = { full: values.full ?? false, task: false };
  const step = await runExample(example, {
    llm,
    ...(values.compress ? { compressHistory: true } : {}),
    signal: stop.signal,
    onTurn: ({ turn }) => out.write(`${renderTurn(turn, render)}\n\n`),
    ...(values.stream ? { onEvent: liveView((text) => io.stderr.write(forTerminal(text))) } : {}),
  })
    .catch((e: unknown) => {
      recording?.abandon();
      throw e;
    })
    .finally(() => {
      process.off("SIGINT", onInterrupt);
      process.off("SIGTERM", onInterrupt);
    });
  out.write(`${renderRunHead(step.trace, render, step)}\n\n`);

  let code = 0;
  if (step.ok) {
    out.write(`Answer: ${JSON.stringify(step.value)}\n`);
    const matches = sameData(step.value, example.expected);
    out.write(matches ? "Matches the expected answer.\n" : `Differs from the expected answer: ${JSON.stringify(example.expected)}\n`);
    if (!matches) code = 1;
  } else {
    out.write(`No answer: ${step.fail.reason}: ${step.fail.message}\n`);
    code = 1;
  }
  const u = step.usage;
  const requests = (n: number): string => `${n} LLM request${n === 1 ? "" : "s"}`;
  out.write(`Tokens: ${renderTokens(u)} over ${requests(u.llmRequests)}${values.live || values.replay !== undefined ? "" : " (estimated: about 4 characters a token)"}\n`);
  if (u.nested.runs > 0) out.write(`Nested agents: ${u.nested.runs} run${u.nested.runs === 1 ? "" : "s"}, ${renderTokens(u.nested)} over ${requests(u.nested.llmRequests)}\n`);
  if (values.record !== undefined && recording !== undefined) {
    await recorded();
    // A recorder that could not write fails the run with its own message; claim nothing then, and keep the previous recording.
    const unwritten = !step.ok && step.fail.message.includes("recorder: cannot write");
    // Stopped before its first call, the run recorded nothing: the previous recording stays.
    if (u.llmRequests === 0 && !existsSync(recording.path)) out.write(`No recording written: the run made no LLM call (${values.record} is left as it was)\n`);
    else if (unwritten) recording.abandon();
    else {
      try {
        recording.commit();
      } catch (e) {
        recording.abandon();
        io.stderr.write(forTerminal(`ptc demo: cannot write the recording to ${values.record} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`));
        return 1;
      }
      out.write(`Recording written to ${values.record} (replay it with ptc demo ${example.name} --replay ${values.record}${values.compress ? " --compress" : ""})\n`);
    }
  }
  if (values["trace-out"] !== undefined) {
    const file = values["trace-out"];
    try {
      writeOutput(file, `${runToJson(step, 2)}\n`, values.replay === undefined ? [] : [values.replay]);
      out.write(`Trace written to ${file} (ptc trace show ${file})\n`);
    } catch (e) {
      io.stderr.write(forTerminal(`ptc demo: cannot write the trace to ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`));
      return 1;
    }
  }
  return code;
}

