// `ptc compare`: compaction strategies side by side on transcripts (JSONL, the format of the
// shared corpora): tokens, cost with a prefix cache, cache breaks, and how many probe facts each
// strategy keeps in the prompts that need them.
import { basename } from "node:path";
import { DEFAULT_PRICES, FALLBACK_MODEL_PRICE, lookupPrice } from "../compaction/prices.js";
import type { StrategySpec } from "../compaction/registry.js";
import { defaultStrategies } from "../history/registry.js";
import type { Json } from "../compaction/types.js";
import { checkMeasurable, compareStrategies, renderTable, strategyKey, type CompareReport } from "../harness/compare.js";
import { compareUnderCaches, FAR_MESSAGES, renderCacheTable } from "../harness/cache-models.js";
import { PERSONAS, renderExperiment, runExperiment, SCENARIOS, scriptedRoles, type Persona, type Roles, type Scenario } from "../harness/experiment.js";
import { detectorLine, scoreDetector } from "../harness/goals.js";
import { renderHtml } from "../harness/html.js";
import { domainGoalDetector } from "../compaction/goals.js";
import { LlmError } from "../llm/errors.js";
import { openaiLlm } from "../llm/openai.js";
import type { Llm } from "../llm/types.js";
import { runTranscript } from "../harness/run-transcript.js";
import { parseTranscripts, TranscriptError, type Transcript } from "../harness/transcript.js";
import { parseRun } from "./trace.js";
import { fileKind, whatReads } from "./file-kind.js";
import { parseOptions, wholeNumber, type Io } from "./eval.js";
import { version } from "./version.js";
import { forTerminal, namesOneOf, unwritable, writeOutput } from "./output.js";
import { readText, TextInputError } from "../json/text-input.js";
import { inputLimit } from "../viewer/input.js";

const USAGE = `usage: ptc compare FILE... [--strategy NAME[:key=value,...]]... [--limit N] [--model M]... [--summarizer facts|copy | --summarizer-llm MODEL] [--caches] [--json FILE|-] [--html FILE|-]
       ptc compare --experiment [--live [--model M]] [--strategy ...]... [--runs N] [--json FILE|-]

Replays each transcript (JSONL: one conversation per line, as in ../shared/corpora; a line may
carry a PTC-Lisp run's "trace" instead of its messages) or saved PTC-Lisp run (ptc demo
--trace-out, SubAgent's runToJson, a saved run state) request by request under each strategy, and prints a table per strategy: prompt tokens summed over every
request and their reduction against sending everything (full), the peak prompt, the whole cost
(requests under each model's cache rules plus the compaction's own LLM calls) against full, how
often the cache broke early, and the share of probe facts still in the prompt that needs them:
overall, by how far back the value was last said (≤6, 7-20, >20 messages), and for 1-2 character
values apart. A value counts only outside the system prompt; values the task states are left
out. Two floors are always measured: the system prompt with the last message, and with the task too.

  --strategy SPEC   a strategy and its options, e.g. sliding-window:turns=3 (repeatable;
                    default: every registered strategy); full is always measured
  --limit N         the first N conversations of each file
  --model M         price model by name (repeatable; costs are shown side by side; the first is
                    the conversations' model for context limits). Default: gpt-4o and
                    claude-sonnet-4 (a token-prefix and a message-boundary cache)
  --summarizer S    offline summaries of the summarizing strategies: facts (default: the values
                    later turns need, within summaryRatio of what they replace) or copy (one line
                    per message, the older baseline)
  --summarizer-llm MODEL
                    summaries by MODEL at OPENAI_BASE_URL (any OpenAI-compatible server;
                    OPENAI_API_KEY); their calls and tokens are added to each strategy's cost,
                    and each summarizing strategy gets summaryModel=MODEL (cost-trigger prices
                    its summary call by it)
  --caches          also price every strategy under a token-prefix cache, a breakpoint cache
                    (with its write premium, at the strategy's declared breakpoints) and no cache,
                    with the transcripts on which each strategy compacted at all
  --json FILE       also write the report as JSON (- for standard output, instead of the table)
  --html FILE       also write a self-contained HTML report with charts (no network needed;
                    - for standard output, instead of the table)

  --experiment      instead of transcripts, run the goal experiment (seed 004): a simulated user
                    with goals and a persona talks to an agent under each strategy and a judge
                    scores the goals met; prints token reduction, goal success and efficiency.
                    Offline the user, agent and judge are scripted; with --live they are the
                    model at OPENAI_BASE_URL (OPENAI_API_KEY, OPENAI_MODEL or --model)
  --runs N          repetitions of every scenario and persona (default 1)
`;

const DEFAULT_MODELS = ["gpt-4o", "claude-sonnet-4"];

// The experiment's conversations are a few thousand tokens long: the hybrid gets a budget they pass, so its summary step acts too.
const EXPERIMENT_STRATEGIES: StrategySpec[] = [
  ...["sliding-window:turns=3", "rolling-summary", "goal-boundary", "cost-trigger", "observation-masking"].map(parseStrategy),
  { name: "mask-then-summarize", options: { trigger: { name: "token-threshold", options: { maxTokens: 1500 } } } },
];

/** Every registered strategy but full (always measured), with its defaults. */
const allStrategies = (): string[] => defaultStrategies.list().map((s) => s.name).filter((n) => n !== "full");

/** A model the price table does not know would be priced by a guess: refuse it and list the known ones. One given twice would be priced twice into two columns of one name. */
function checkModels(models: readonly string[]): void {
  for (const [i, m] of models.entries()) {
    if (lookupPrice(m) === undefined) throw new Error(`unknown model "${m}" (known: ${Object.keys(DEFAULT_PRICES).join(", ")})`);
    if (models.indexOf(m) < i) throw new Error(`--model ${m} is given twice: its costs would be shown twice`);
  }
}

/**
 * Sets the summarizer of every strategy that summarizes (one the user gave explicitly is kept),
 * and with a model its summaryModel too: cost-trigger prices the summary call by it, and without
 * it decided as if the conversation's model summarized.
 */
function withSummarizer(specs: StrategySpec[], summarizer: string | undefined, summaryModel?: string): StrategySpec[] {
  if (summarizer === undefined) return specs;
  const summarizing = new Set(defaultStrategies.list().filter((s) => "summarizer" in s.defaults).map((s) => s.name));
  return specs.map((s) => {
    if (!summarizing.has(s.name) || s.options?.summarizer !== undefined) return s;
    return { name: s.name, options: { ...s.options, summarizer, ...(summaryModel === undefined || s.options?.summaryModel !== undefined ? {} : { summaryModel }) } };
  });
}

/** The first --strategy that names one given before it, however spelled (strategyKey), with that one. */
function repeatedStrategy(texts: readonly string[]): [string, string] | undefined {
  const seen = new Map<string, string>();
  for (const text of texts) {
    let key: string;
    try {
      key = strategyKey(parseStrategy(text));
    } catch {
      // A spec that does not parse is refused where the strategies are read, with its reason.
      key = text;
    }
    const first = seen.get(key);
    if (first !== undefined) return [first, text];
    seen.set(key, text);
  }
  return undefined;
}

/** `name:key=value,key=value` to a strategy spec; values read as JSON where they parse. */
export function parseStrategy(text: string): StrategySpec {
  const [name, rest] = text.split(/:(.*)/s, 2);
  if (!name) throw new Error(`--strategy needs a name, got "${text}"`);
  const options: Record<string, Json> = {};
  for (const pair of topLevelParts(rest ?? "").filter((p) => p !== "")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new Error(`--strategy ${name}: expected key=value, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    let value: Json;
    try {
      value = JSON.parse(raw) as Json;
    } catch {
      value = raw;
    }
    const key = pair.slice(0, eq);
    if (Object.hasOwn(options, key)) throw new Error(`--strategy ${name}: option ${key} is given twice`);
    // Defined, not assigned: "__proto__" would set the options' prototype, whose keys the schema reads.
    Object.defineProperty(options, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return { name, options } as StrategySpec;
}

/** `text` cut at its commas outside brackets, braces and strings, so a JSON list or object value keeps its own commas. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "[" || c === "{") depth++;
    else if ((c === "]" || c === "}") && depth > 0) depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** A file's text, read once: its kind is told from it and it is parsed from it. */
function readInput(file: string): string {
  try {
    return readText(file, file, inputLimit("compare"));
  } catch (e) {
    if (e instanceof TextInputError) throw e;
    throw new TranscriptError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/**
 * An option (or file) of one mode given to the other, which that mode would ignore unseen (an
 * --html never written, transcripts never read); undefined when there is none.
 */
function misplacedOption(values: { experiment?: boolean; live?: boolean; runs?: string; model?: string[]; limit?: string; summarizer?: string; "summarizer-llm"?: string; html?: string; caches?: boolean }, files: readonly string[]): string | undefined {
  if (!values.experiment) {
    if (values.live) return "--live applies to --experiment (transcripts need no model)";
    if (values.runs !== undefined) return "--runs applies to --experiment";
    return undefined;
  }
  const flag = (["limit", "summarizer", "summarizer-llm", "html", "caches"] as const).find((f) => values[f] !== undefined);
  if (flag !== undefined) return `--${flag} applies to the transcript comparison, not --experiment`;
  if (files.length > 0) return `--experiment runs its own scenarios and reads no files, got ${files.join(" ")}`;
  const models = values.model?.length ?? 0;
  if (models > 0 && !values.live) return "--model with --experiment applies to --live runs only";
  if (models > 1) return `--experiment --live takes one --model, got ${models}`;
  return undefined;
}

export async function runCompareCommand(args: string[], io: Io): Promise<number> {
  let values;
  let files: string[];
  try {
    const parsed = parseOptions({ args, allowPositionals: true, options: {
        strategy: { type: "string", multiple: true },
        limit: { type: "string" },
        model: { type: "string", multiple: true },
        summarizer: { type: "string" },
        "summarizer-llm": { type: "string" },
        json: { type: "string" },
        html: { type: "string" },
        caches: { type: "boolean" },
        experiment: { type: "boolean" },
        live: { type: "boolean" },
        runs: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    values = parsed.values;
    files = parsed.positionals;
  } catch (e) {
    io.stderr.write(`ptc compare: ${forTerminal((e as Error).message)}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const misplaced = misplacedOption(values, files);
  if (misplaced !== undefined) {
    io.stderr.write(`ptc compare: ${misplaced}\n`);
    return 2;
  }
  // Measured twice, a strategy made two rows of one name in every table, chart and report.
  const twice = repeatedStrategy(values.strategy ?? []);
  if (twice !== undefined) {
    const [first, again] = twice;
    io.stderr.write(forTerminal(`ptc compare: --strategy ${again} is given twice${first === again ? "" : ` (as ${first})`}: it would be measured twice\n`));
    return 2;
  }
  if (values.experiment) return runExperimentCommand({ ...values, model: values.model?.[0] }, io);
  if (files.length === 0) {
    io.stderr.write(`ptc compare: give at least one transcript file\n${USAGE}`);
    return 2;
  }
  const limit = values.limit === undefined ? Infinity : wholeNumber(values.limit);
  if (values.limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) {
    io.stderr.write(forTerminal(`ptc compare: --limit takes a whole number of at least 1, got "${values.limit}"\n`));
    return 2;
  }
  let strategies: StrategySpec[];
  let transcripts: Transcript[];
  // The summarizer of both tables, when it is a model.
  let summarizing: { llm?: Llm; summaryModel?: string } = {};
  const models = values.model ?? DEFAULT_MODELS;
  const llmModel = values["summarizer-llm"];
  try {
    checkModels(models);
    if (values.summarizer !== undefined && !["facts", "copy"].includes(values.summarizer)) throw new Error(`--summarizer takes facts or copy, got "${values.summarizer}"`);
    if (values.summarizer !== undefined && llmModel !== undefined) throw new Error("give --summarizer or --summarizer-llm, not both");
    strategies = withSummarizer((values.strategy ?? allStrategies()).map(parseStrategy), llmModel === undefined ? values.summarizer : "llm", llmModel);
    // Conversation id -> the file it came from: an id names its rows in the report and finds the
    // conversation in ptc view, so two conversations of one id could not be told apart.
    const origin = new Map<string, string>();
    transcripts = files.flatMap((f, i) => {
      // Read twice, a file's conversations would count twice in every total and average.
      if (namesOneOf(f, files.slice(0, i))) throw new Error(`${f} is given twice: its conversations would be counted twice`);
      const text = readInput(f);
      const kind = fileKind(text);
      // A saved PTC-Lisp run (ptc demo --trace-out, SubAgent's runToJson, a run state) is one transcript with its turn records.
      if (kind === "run" || kind === "trace" || kind === "run-state") {
        // Named by its file name, or by the path as given where an earlier file's name took it (runs/a/run.json, runs/b/run.json).
        const run = runTranscript(origin.has(basename(f)) ? f : basename(f), parseRun(text, f, kind).trace);
        if (run === undefined) throw new Error(`${f}: the run has no turns to compare`);
        if (origin.has(run.id)) throw new Error(`${f}: conversation id ${JSON.stringify(run.id)} is also the id of a conversation in ${origin.get(run.id)}: give each conversation its own id`);
        origin.set(run.id, f);
        return [run];
      }
      if (kind !== "transcripts" && kind !== "other") throw new Error(`${whatReads(kind, f)}, not ptc compare (which reads transcripts: JSON lines of {"messages": [...]}, or a saved PTC-Lisp run)`);
      const read = parseTranscripts(text, f, limit);
      for (const t of read) {
        if (origin.has(t.id)) throw new Error(`${f}: conversation id ${JSON.stringify(t.id)} is also the id of a conversation in ${origin.get(t.id)}: give each conversation its own id`);
      }
      for (const t of read) origin.set(t.id, f);
      return read;
    });
    if (transcripts.length === 0) throw new Error(`no transcripts in ${files.join(", ")}: nothing to compare`);
    checkMeasurable(transcripts, files.join(", "));
    // Kept and compared as recorded, but said: a strict provider would refuse these prompts.
    for (const t of transcripts) for (const p of t.problems ?? []) io.stderr.write(forTerminal(`ptc compare: warning: ${p}\n`));
    // "-" is standard output, not a file of that name; the two reports there would run into each other.
    if (values.json === "-" && values.html === "-") throw new Error("--json - and --html - both name standard output: give one of them a file");
    const json = values.json === "-" ? undefined : values.json;
    const html = values.html === "-" ? undefined : values.html;
    for (const [flag, file] of [["json", json], ["html", html]] as const) {
      if (file === undefined) continue;
      // A report written over a transcript file, or over the other report, loses that file.
      if (namesOneOf(file, files)) throw new Error(`--${flag} ${file} is one of the transcript files: writing the report there would overwrite it`);
      const problem = unwritable(file);
      if (problem !== undefined) throw new Error(`cannot write --${flag} ${file}: ${problem}`);
    }
    if (json !== undefined && html !== undefined && namesOneOf(json, [html])) throw new Error("--json and --html name the same file: the HTML would overwrite the JSON");
    // Made before the run, so an environment that names no server is told as a usage error, not a crash.
    if (llmModel !== undefined) summarizing = { llm: stopsWhenUnanswered(openaiLlm({ model: llmModel }), io), summaryModel: llmModel };
  } catch (e) {
    io.stderr.write(forTerminal(`ptc compare: ${(e as Error).message}\n`));
    return 2;
  }
  const toStdout = values.json === "-";
  const htmlToStdout = values.html === "-";
  try {
    const started = performance.now();
    const interactive = (io.stderr as { isTTY?: boolean }).isTTY === true;
    const report: CompareReport = await compareStrategies(transcripts, strategies, {
      models,
      ...summarizing,
      // Progress: a rewritten line at a terminal, a plain line now and then in a log.
      onProgress: (done: number, total: number) => {
        if (interactive) {
          if (done === total || done % 25 === 0) io.stderr.write(`\r… ${done}/${total} transcript runs${done === total ? "\n" : ""}`);
        } else if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0) io.stderr.write(`ptc compare: ${done}/${total} transcript runs\n`);
      },
    });
    // A summarizer model the table lacks (a local one) is priced by the fallback: the report says so.
    const unpriced = llmModel !== undefined && lookupPrice(llmModel) === undefined ? ` (not in the price table: its calls are priced at $${FALLBACK_MODEL_PRICE.input}/$${FALLBACK_MODEL_PRICE.output} per M input/output tokens)` : "";
    report.meta = { corpus: files, summarizer: llmModel === undefined ? (values.summarizer ?? "facts") : `llm:${llmModel}${unpriced}`, date: new Date().toISOString(), version: version(), runMs: performance.now() - started };
    // Labelled corpora (goal starts) also score the offline goal detector against the labels.
    const goals = transcripts.some((t) => t.goals !== undefined && t.goals.length > 1) ? await scoreDetector(domainGoalDetector(), transcripts) : undefined;
    const goalLine = goals === undefined ? "" : `${detectorLine("domain", goals)}\n`;
    const caches = values.caches === true ? await compareUnderCaches(transcripts, strategies, { model: models[0], ...summarizing }) : undefined;
    const json = JSON.stringify({ ...report, ...(goals === undefined ? {} : { goalDetector: goals }), ...(caches === undefined ? {} : { caches }) }, null, 2) + "\n";
    const html = (): string => renderHtml(report, undefined, { ...(goals === undefined ? {} : { goalDetector: { name: "domain", score: goals } }), ...(caches === undefined ? {} : { caches }) });
    if (toStdout) io.stdout.write(json);
    else if (htmlToStdout) io.stdout.write(html());
    else {
      // Failure lines quote transcript ids and what a strategy threw: no control characters reach the terminal.
      io.stdout.write(forTerminal(renderTable(report)) + "\n" + goalLine);
      if (caches !== undefined) io.stdout.write(`\nCost against full under each cache model (the one measure; far facts: last mentioned ${FAR_MESSAGES}+ messages earlier):\n${renderCacheTable(caches)}\n`);
    }
    const written = [values.json !== undefined && !toStdout ? write(values.json, json, io, files) : true, values.html !== undefined && !htmlToStdout ? write(values.html, html(), io, files) : true];
    // A strategy that failed on some transcripts is reported with them, the rest measured; the run still failed.
    const failed = report.rows.reduce((n, r) => n + r.failures.length, 0) + (caches?.rows.reduce((n, r) => n + r.failures.length, 0) ?? 0);
    if (failed > 0) io.stderr.write(`ptc compare: ${failed} strategy run${failed === 1 ? "" : "s"} on a transcript failed (listed in the report${caches === undefined ? "" : "s"}); the other figures leave them out\n`);
    return written.every(Boolean) && failed === 0 ? 0 : 1;
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

/**
 * The summarizer's client for one compare run, which stops asking once the server has not
 * answered a call (timed out or unreachable after the client's own retries): each call would
 * otherwise wait out the same timeouts again, per summary, conversation and strategy, holding the
 * command for hours. Later summaries fail at once, counted as the report's failed summaries.
 */
export function stopsWhenUnanswered(llm: Llm, io: Pick<Io, "stderr">): Llm {
  let silent: LlmError | undefined;
  return {
    name: llm.name,
    async complete(request) {
      if (silent !== undefined) throw new LlmError(silent.kind, `not asked: the summarizer did not answer an earlier call (${silent.message})`);
      try {
        return await llm.complete(request);
      } catch (e) {
        if (e instanceof LlmError && (e.kind === "timeout" || e.kind === "connection")) {
          silent = e;
          io.stderr.write(forTerminal(`ptc compare: the summarizer did not answer (${e.message}); the rest of the run goes without its summaries\n`));
        }
        throw e;
      }
    },
  };
}

/** Writes an output file; says why it could not (a folder made read-only during the run), without a stack trace. */
function write(file: string, text: string, io: Io, readFrom: readonly string[] = []): boolean {
  try {
    writeOutput(file, text, readFrom);
    return true;
  } catch (e) {
    io.stderr.write(forTerminal(`ptc compare: cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`));
    return false;
  }
}

async function runExperimentCommand(values: { strategy?: string[]; runs?: string; live?: boolean; model?: string; json?: string }, io: Io): Promise<number> {
  const runs = values.runs === undefined ? 1 : wholeNumber(values.runs);
  if (!(Number.isInteger(runs) && runs >= 1)) {
    io.stderr.write(forTerminal(`ptc compare: --runs takes a whole number of at least 1, got "${values.runs}"\n`));
    return 2;
  }
  const toStdout = values.json === "-";
  const problem = values.json === undefined || toStdout ? undefined : unwritable(values.json);
  if (problem !== undefined) {
    io.stderr.write(forTerminal(`ptc compare: cannot write --json ${values.json}: ${problem}\n`));
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
    const json = JSON.stringify({ experiment: rows }, null, 2) + "\n";
    // "-" is standard output, instead of the table (as for transcripts), not a file named "-".
    if (toStdout) {
      io.stdout.write(json);
      return 0;
    }
    io.stdout.write(`Goal experiment (${values.live ? "live" : "offline, scripted user, agent and judge"}): ${SCENARIOS.length} scenarios x ${PERSONAS.length} personas x ${runs} run${runs === 1 ? "" : "s"}\n${renderExperiment(rows)}\n`);
    return values.json === undefined || write(values.json, json, io) ? 0 : 1;
  } catch (e) {
    const message = (e as Error).message ?? String(e);
    if (e instanceof LlmError || message.startsWith("compaction:") || message.startsWith("--strategy")) {
      // A server's error text is quoted in its message.
      io.stderr.write(forTerminal(`ptc compare: ${message}\n`));
      return e instanceof LlmError && e.kind !== "config" ? 1 : 2;
    }
    throw e;
  }
}

