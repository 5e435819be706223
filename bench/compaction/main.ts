// `npm run bench:compaction`: the strategies side by side on the shared corpora (a sample of
// each, from ../shared/corpora) and the projection speed on a 300-message conversation.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compact } from "../../src/compaction/compact.js";
import type { StrategySpec } from "../../src/compaction/registry.js";
import { domainGoalDetector, heuristicGoalDetector } from "../../src/compaction/goals.js";
import { defaultStrategies } from "../../src/history/registry.js";
import { percentText } from "../../src/compaction/figures.js";
import { compareStrategies, renderTable, type CompareReport, type StrategyRow } from "../../src/harness/compare.js";
import { detectorLine, scoreDetector } from "../../src/harness/goals.js";
import { loadTranscripts, type Transcript } from "../../src/harness/transcript.js";
import { codingSessions, multiGoalChats, ptcSessions } from "./sets.js";
import { agentLoops } from "./agent-loops.js";
import type { ChatMessage } from "../../src/llm/types.js";

const corpora = join(dirname(fileURLToPath(import.meta.url)), "../../../shared/corpora");

// Dialogues change goals; agent runs are one task with many tool steps (unit=step there).
const SETS: Array<{ file: string; sample: number; strategies: StrategySpec[] }> = [
  { file: "multiwoz21.jsonl", sample: 60, strategies: dialogue() },
  { file: "sgd.jsonl", sample: 60, strategies: dialogue() },
  { file: "oasst_en100.jsonl", sample: 95, strategies: dialogue() },
  { file: "taubench_airline.jsonl", sample: 40, strategies: agent() },
  { file: "sweagent.jsonl", sample: 22, strategies: agent() },
  { file: "miniswe_swebench.jsonl", sample: 12, strategies: agent() },
];

// Each summarizing strategy with the facts summarizer, and the tightest one with the copy
// baseline beside it; the sliding window at the same kept tail for the far-fact comparison.
function dialogue(): StrategySpec[] {
  return [
    { name: "sliding-window", options: { turns: 2 } },
    { name: "sliding-window", options: { turns: 3 } },
    { name: "recap", options: {} },
    { name: "rolling-summary", options: {} },
    { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } },
    { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2 } },
    { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2, summaryRatio: 0.3 } },
    { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2, summarizer: "copy" } },
    { name: "goal-boundary", options: {} },
    { name: "usage-ratio", options: { threshold: 0.8 } },
    { name: "cost-trigger", options: {} },
  ] as StrategySpec[];
}

function agent(): StrategySpec[] {
  return [
    { name: "sliding-window", options: { turns: 6, unit: "step" } },
    { name: "rolling-summary", options: { unit: "step" } },
    { name: "rolling-summary", options: { unit: "step", summaryMaxTokens: 2000 } },
    { name: "rolling-summary", options: { unit: "step", summarizer: "copy" } },
    { name: "usage-ratio", options: {} },
    { name: "cost-trigger", options: {} },
    { name: "observation-masking", options: {} },
    { name: "mask-then-summarize", options: {} },
  ] as StrategySpec[];
}

const MODELS = ["gpt-4o", "claude-sonnet-4"];

const pct = (x: number | null): string => (x === null ? "-" : percentText(x));
// A row measured on no request (its strategy failed everywhere) ranks below every other.
const saved = (r: StrategyRow): number => r.reduction ?? -Infinity;
const summarizing = (r: StrategyRow): boolean => r.kind === "strategy" && r.triggered && !r.strategy.startsWith("sliding-window") && r.strategy !== "full" && !/summarizer=copy/.test(r.strategy);

/**
 * The two claims, checked on the report: against each sliding window, the summarizing
 * row (facts summarizer) with the most far facts (last said > 6 messages back) among those at
 * equal or better reduction; and the summarizing row with the most far facts at ≥ 40% fewer tokens.
 */
function verdict(r: CompareReport): string {
  if (r.rows[0].retentionByDistance.beyond6 === null) return "verdict: no probe facts said more than 6 messages before they are needed";
  const best = (rows: StrategyRow[]): StrategyRow | undefined => rows.reduce<StrategyRow | undefined>((a, x) => (a === undefined || (x.retentionByDistance.beyond6 ?? 0) > (a.retentionByDistance.beyond6 ?? 0) ? x : a), undefined);
  const lines = r.rows
    .filter((w) => w.kind === "strategy" && w.triggered && w.strategy.startsWith("sliding-window"))
    .map((w) => {
      const s = best(r.rows.filter((x) => summarizing(x) && saved(x) >= saved(w)));
      if (s === undefined) return `verdict: ${w.strategy} (${pct(w.reduction)} fewer tokens, far facts ${pct(w.retentionByDistance.beyond6)}): no summarizing row saves as much`;
      const [sf, wf] = [s.retentionByDistance.beyond6 ?? 0, w.retentionByDistance.beyond6 ?? 0];
      const outcome = sf > wf ? "summary keeps more" : sf === 1 && wf === 1 ? "both keep every far fact" : "summary does NOT keep more";
      return `verdict: ${w.strategy} ${pct(w.reduction)} fewer tokens, far facts ${pct(w.retentionByDistance.beyond6)}; ${s.strategy} ${pct(s.reduction)}, far facts ${pct(s.retentionByDistance.beyond6)} (${outcome})`;
    });
  const forty = best(r.rows.filter((x) => summarizing(x) && saved(x) >= 0.4));
  lines.push(
    forty === undefined
      ? "verdict: no summarizing row sends 40% fewer tokens than full"
      : `verdict: at ≥ 40% fewer tokens, ${forty.strategy} keeps ${pct(forty.retentionByDistance.beyond6)} of far facts (${pct(forty.reduction)} fewer)${(forty.retentionByDistance.beyond6 ?? 0) >= 0.8 ? "" : " (below 80%)"}`,
  );
  return lines.join("\n");
}

function detectors(transcripts: readonly Transcript[]): Promise<string> {
  return Promise.all([scoreDetector(domainGoalDetector(), transcripts), scoreDetector(heuristicGoalDetector(), transcripts)]).then(([d, h]) =>
    [d, h].map((s, k) => detectorLine(k === 0 ? "domain" : "heuristic (old)", s)).join("\n"),
  );
}

async function speed(): Promise<void> {
  const messages: ChatMessage[] = [{ role: "system", content: "You are an agent." }, { role: "user", content: "Fix the failing test in the repository." }];
  for (let i = 0; messages.length < 300; i++) {
    messages.push({ role: "assistant", content: `Step ${i}: looking at file ${i}.`, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `cat src/module_${i}.py` }) } }] });
    messages.push({ role: "tool", tool_call_id: `c${i}`, content: `def f_${i}(x):\n    return x * ${i}\n`.repeat(20) });
  }
  console.log(`\nProjection speed, one 300-message tool-calling conversation (token counts warm, median of 20):`);
  for (const name of ["full", "sliding-window", "recap", "usage-ratio", "rolling-summary", "goal-boundary", "cost-trigger", "observation-masking", "mask-then-summarize"]) {
    const spec = { name, options: name === "sliding-window" || name === "rolling-summary" ? { unit: "step" } : {} } as StrategySpec;
    await compact(messages, spec, { registry: defaultStrategies });
    const times: number[] = [];
    for (let k = 0; k < 20; k++) {
      const t = performance.now();
      await compact(messages, spec, { registry: defaultStrategies });
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const ms = times[10];
    console.log(`  ${name.padEnd(20)} ${ms.toFixed(3)} ms   ${((ms * 1000) / messages.length).toFixed(2)} µs per message`);
  }
}

async function main(): Promise<void> {
  if (!existsSync(corpora)) {
    console.log(`The shared corpora are not at ${corpora}: clone the project beside the shared/ folder. Measuring speed only.`);
  } else {
    for (const set of SETS) {
      const transcripts: Transcript[] = loadTranscripts(join(corpora, set.file), set.sample);
      const started = performance.now();
      const report = await compareStrategies(transcripts, set.strategies, { models: MODELS });
      report.meta = { corpus: [`${set.file} (first ${transcripts.length})`], summarizer: "facts unless the options say copy", date: new Date().toISOString(), version: "bench", runMs: performance.now() - started };
      console.log(`\n${set.file}`);
      console.log(renderTable(report));
      console.log(verdict(report));
      // Goal labels are scored on the whole corpus, not just the sample.
      if (transcripts.some((t) => t.goals !== undefined)) console.log(await detectors(loadTranscripts(join(corpora, set.file))));
    }
    await agentLoops(corpora);
  }
  const own: Array<{ label: string; transcripts: Transcript[]; strategies: StrategySpec[] }> = [
    { label: "own multi-goal chats (20)", transcripts: multiGoalChats(20), strategies: dialogue() },
    { label: "own coding sessions with large tool outputs (10)", transcripts: codingSessions(10), strategies: agent() },
    { label: "PTC-Lisp agent sessions (bench/history and examples)", transcripts: await ptcSessions(), strategies: [{ name: "interpreter-summaries", options: {} }, ...agent()] as StrategySpec[] },
  ];
  for (const set of own) {
    const report = await compareStrategies(set.transcripts, set.strategies, { models: MODELS });
    console.log(`\n${set.label}`);
    console.log(renderTable(report));
    if (set.transcripts.some((t) => t.goals !== undefined)) console.log(await detectors(set.transcripts));
  }
  await speed();
}

await main();
