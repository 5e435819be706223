// `ptc compare`: compaction strategies side by side on transcripts (JSONL, the format of the
// shared corpora): tokens, cost with a prefix cache, cache breaks, and how many probe facts each
// strategy keeps in the prompts that need them.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { priceFor } from "../compaction/cost.js";
import type { StrategySpec } from "../compaction/registry.js";
import type { Json } from "../compaction/types.js";
import { compareStrategies, renderTable } from "../harness/compare.js";
import { renderHtml } from "../harness/html.js";
import { loadTranscripts, TranscriptError, type Transcript } from "../harness/transcript.js";
import type { Io } from "./eval.js";

const USAGE = `usage: ptc compare FILE... [--strategy NAME[:key=value,...]]... [--limit N] [--model M] [--json FILE] [--html FILE]

Replays each transcript (JSONL: one conversation per line, as in ../shared/corpora) request by
request under each strategy, and prints a table per strategy: prompt tokens summed over every
request and their reduction against sending everything (full), the peak prompt, the cost with a
prefix cache, how often the cache broke early, and the share of probe facts still in the prompt
that needs them. Strategies that summarize do so extractively (no model is called).

  --strategy SPEC   a strategy and its options, e.g. sliding-window:turns=3 (repeatable;
                    default: sliding-window, recap, rolling-summary, usage-ratio, goal-boundary,
                    cost-trigger); full is always measured as the baseline
  --limit N         the first N conversations of each file
  --model M         prices and context limits of this model (default: gpt-4o)
  --json FILE       also write the report as JSON
  --html FILE       also write a self-contained HTML report with charts (no network needed)
`;

const DEFAULT_STRATEGIES = ["sliding-window", "recap", "rolling-summary", "usage-ratio", "goal-boundary", "cost-trigger"];

/** `name:key=value,key=value` to a strategy spec; values read as JSON where they parse. */
export function parseStrategy(text: string): StrategySpec {
  const [name, rest] = text.split(/:(.*)/s, 2);
  if (!name) throw new Error(`--strategy needs a name, got "${text}"`);
  const options: Record<string, Json> = {};
  for (const pair of (rest ?? "").split(",").filter((p) => p !== "")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new Error(`--strategy ${name}: expected key=value, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    let value: Json;
    try {
      value = JSON.parse(raw) as Json;
    } catch {
      value = raw;
    }
    options[pair.slice(0, eq)] = value;
  }
  return { name, options } as StrategySpec;
}

export async function runCompareCommand(args: string[], io: Io): Promise<number> {
  let values;
  let files: string[];
  try {
    const parsed = parseArgs({ args, allowPositionals: true, options: { strategy: { type: "string", multiple: true }, limit: { type: "string" }, model: { type: "string" }, json: { type: "string" }, html: { type: "string" }, help: { type: "boolean", short: "h" } } });
    values = parsed.values;
    files = parsed.positionals;
  } catch (e) {
    io.stderr.write(`ptc compare: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (files.length === 0) {
    io.stderr.write(`ptc compare: give at least one transcript file\n${USAGE}`);
    return 2;
  }
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  if (values.limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) {
    io.stderr.write(`ptc compare: --limit takes a whole number of at least 1, got "${values.limit}"\n`);
    return 2;
  }
  let strategies: StrategySpec[];
  let transcripts: Transcript[];
  try {
    strategies = (values.strategy ?? DEFAULT_STRATEGIES).map(parseStrategy);
    transcripts = files.flatMap((f) => loadTranscripts(f, limit));
  } catch (e) {
    io.stderr.write(`ptc compare: ${(e as Error).message}\n`);
    return 2;
  }
  try {
    const model = values.model ?? "gpt-4o";
    const report = await compareStrategies(transcripts, strategies, {
      price: priceFor(model),
      model,
      // A progress line for a person at a terminal; logs and pipes get only the results.
      ...((io.stderr as { isTTY?: boolean }).isTTY === true
        ? { onProgress: (done: number, total: number) => void (done === total || done % 25 === 0 ? io.stderr.write(`\r… ${done}/${total} transcript runs${done === total ? "\n" : ""}`) : undefined) }
        : {}),
    });
    io.stdout.write(renderTable(report) + "\n");
    if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(report, null, 2) + "\n");
    if (values.html !== undefined) writeFileSync(values.html, renderHtml(report));
    return 0;
  } catch (e) {
    if (e instanceof TranscriptError) {
      io.stderr.write(`ptc compare: ${e.message}\n`);
      return 2;
    }
    // A strategy's options are checked when it is first built: a bad one is a usage error.
    const message = (e as Error).message ?? String(e);
    if (message.startsWith("compaction:")) {
      io.stderr.write(`ptc compare: ${message}\n`);
      return 2;
    }
    throw e;
  }
}
