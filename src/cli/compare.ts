// `ptc compare`: compaction strategies side by side on transcripts (JSONL, the format of the
// shared corpora): tokens, cost with a prefix cache, cache breaks, and how many probe facts each
// strategy keeps in the prompts that need them.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { priceFor } from "../compaction/cost.js";
import type { StrategySpec } from "../compaction/registry.js";
import type { Json } from "../compaction/types.js";
import { compareStrategies, renderTable } from "../harness/compare.js";
import { compareUnderCaches, FAR_MESSAGES, renderCacheTable } from "../harness/cache-models.js";
import { PERSONAS, renderExperiment, runExperiment, SCENARIOS, scriptedRoles, type Persona, type Roles, type Scenario } from "../harness/experiment.js";
import { scoreDetector } from "../harness/goals.js";
import { renderHtml } from "../harness/html.js";
import { heuristicGoalDetector } from "../compaction/goals.js";
import { LlmError } from "../llm/errors.js";
import { openaiLlm } from "../llm/openai.js";
import { loadTranscripts, TranscriptError, type Transcript } from "../harness/transcript.js";
import type { Io } from "./eval.js";

const USAGE = `usage: ptc compare FILE... [--strategy NAME[:key=value,...]]... [--limit N] [--model M] [--caches] [--json FILE] [--html FILE]
       ptc compare --experiment [--live] [--strategy ...]... [--runs N]

Replays each transcript (JSONL: one conversation per line, as in ../shared/corpora) request by
request under each strategy, and prints a table per strategy: prompt tokens summed over every
request and their reduction against sending everything (full), the peak prompt, the cost with a
prefix cache, how often the cache broke early, and the share of probe facts still in the prompt
that needs them. Strategies that summarize do so extractively (no model is called).

  --strategy SPEC   a strategy and its options, e.g. sliding-window:turns=3 (repeatable;
                    default: sliding-window, recap, rolling-summary, usage-ratio, goal-boundary,
                    cost-trigger, observation-masking, mask-then-summarize); full is always
                    measured as the baseline
  --limit N         the first N conversations of each file
  --model M         prices and context limits of this model (default: gpt-4o)
  --caches          also price every strategy under a token-prefix cache, a breakpoint cache
                    (with its write premium) and no cache, with far-fact retention and the
                    transcripts on which each strategy compacted at all
  --json FILE       also write the report as JSON
  --html FILE       also write a self-contained HTML report with charts (no network needed)

  --experiment      instead of transcripts, run the goal experiment (seed 004): a simulated user
                    with goals and a persona talks to an agent under each strategy and a judge
                    scores the goals met; prints token reduction, goal success, efficiency and
                    in how many conversations each strategy compacted at all ("never" is said).
                    Offline the user, agent and judge are scripted; with --live they are the
                    model at OPENAI_BASE_URL (OPENAI_API_KEY, OPENAI_MODEL or --model)
  --runs N          repetitions of every scenario and persona (default 1)
`;

const DEFAULT_STRATEGIES = ["sliding-window", "recap", "rolling-summary", "usage-ratio", "goal-boundary", "cost-trigger", "observation-masking", "mask-then-summarize"];

// The experiment's conversations are a few thousand tokens long: the hybrid gets a budget they pass, so its summary step acts too.
const EXPERIMENT_STRATEGIES: StrategySpec[] = [
  ...["sliding-window:turns=3", "rolling-summary", "goal-boundary", "cost-trigger", "observation-masking"].map(parseStrategy),
  { name: "mask-then-summarize", options: { trigger: { name: "token-threshold", options: { maxTokens: 1500 } } } },
];

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
    const parsed = parseArgs({ args, allowPositionals: true, options: { strategy: { type: "string", multiple: true }, limit: { type: "string" }, model: { type: "string" }, json: { type: "string" }, html: { type: "string" }, caches: { type: "boolean" }, experiment: { type: "boolean" }, live: { type: "boolean" }, runs: { type: "string" }, help: { type: "boolean", short: "h" } } });
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
  if (values.experiment) return runExperimentCommand(values, io);
  if (values.live) {
    io.stderr.write("ptc compare: --live applies to --experiment (transcripts need no model)\n");
    return 2;
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
    const caches = values.caches === true ? await compareUnderCaches(transcripts, strategies, { model }) : undefined;
    if (caches !== undefined) io.stdout.write(`\nCost against full under each cache model (the one measure; far facts: last mentioned ${FAR_MESSAGES}+ messages earlier):\n${renderCacheTable(caches)}\n`);
    // Labelled corpora (goal starts) also score the offline goal detector against the labels.
    if (transcripts.some((t) => t.goals !== undefined && t.goals.length > 1)) {
      const score = await scoreDetector(heuristicGoalDetector(), transcripts);
      io.stdout.write(`goal boundaries, heuristic detector: precision ${(score.precision * 100).toFixed(1)}%, recall ${(score.recall * 100).toFixed(1)}% (${score.truePositives} found, ${score.falsePositives} false, ${score.falseNegatives} missed)\n`);
    }
    if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(caches === undefined ? report : { ...report, caches }, null, 2) + "\n");
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

async function runExperimentCommand(values: { strategy?: string[]; runs?: string; live?: boolean; model?: string; json?: string }, io: Io): Promise<number> {
  const runs = values.runs === undefined ? 1 : Number(values.runs);
  if (!(Number.isInteger(runs) && runs >= 1)) {
    io.stderr.write(`ptc compare: --runs takes a whole number of at least 1, got "${values.runs}"\n`);
    return 2;
  }
  let strategies: StrategySpec[];
  let roles: (s: Scenario, p: Persona) => Roles;
  try {
    strategies = values.strategy === undefined ? EXPERIMENT_STRATEGIES : values.strategy.map(parseStrategy);
    if (values.live) {
      const llm = openaiLlm(values.model === undefined ? {} : { model: values.model });
      roles = () => ({ user: llm, agent: llm, judge: llm });
    } else {
      roles = scriptedRoles;
    }
    const rows = await runExperiment(strategies, roles, runs);
    io.stdout.write(`Goal experiment (${values.live ? "live" : "offline, scripted user, agent and judge"}): ${SCENARIOS.length} scenarios x ${PERSONAS.length} personas x ${runs} run${runs === 1 ? "" : "s"}\n${renderExperiment(rows)}\n`);
    if (values.json !== undefined) writeFileSync(values.json, JSON.stringify({ experiment: rows }, null, 2) + "\n");
    return 0;
  } catch (e) {
    const message = (e as Error).message ?? String(e);
    if (e instanceof LlmError || message.startsWith("compaction:") || message.startsWith("--strategy")) {
      io.stderr.write(`ptc compare: ${message}\n`);
      return e instanceof LlmError && e.kind !== "config" ? 1 : 2;
    }
    throw e;
  }
}

