// The agent-loop table of `npm run bench:compaction`: observation masking and the
// mask-then-summarize hybrid against full, the sliding window, the rolling summary and the cost
// trigger on the coding and tool-use corpora, priced under a token-prefix cache, a breakpoint
// cache and no cache (the one measure), with far-fact retention; then whether the hybrid beats
// both of its parts.
import { join } from "node:path";
import type { StrategySpec } from "../../src/compaction/registry.js";
import { CACHE_MODELS, compareUnderCaches, FAR_MESSAGES, renderCacheTable, type CacheRow } from "../../src/harness/cache-models.js";
import { loadTranscripts, type Transcript } from "../../src/harness/transcript.js";
import { costRatioText, percentText } from "../../src/compaction/figures.js";
import { codingSessions } from "./sets.js";

const MASKING: StrategySpec = { name: "observation-masking" };
const ROLLING: StrategySpec = { name: "rolling-summary", options: { unit: "step" } };
/** The hybrid with a budget the coding runs reach (its default, 32k tokens, is a context safety net they never pass once masked). */
const HYBRID: StrategySpec = { name: "mask-then-summarize", options: { trigger: { name: "token-threshold", options: { maxTokens: 8000 } } } };

export const AGENT_LOOP_STRATEGIES: StrategySpec[] = [
  { name: "sliding-window", options: { turns: 6, unit: "step" } },
  ROLLING,
  { name: "cost-trigger" },
  MASKING,
  // The paper's setting (M = 10), the boundary moving on every step.
  { name: "observation-masking", options: { turns: 10, polling: 1 } },
  { name: "mask-then-summarize" },
  HYBRID,
];

const SETS = [
  { file: "miniswe_swebench.jsonl", sample: Infinity, coding: true },
  { file: "sweagent.jsonl", sample: Infinity, coding: true },
  { file: "taubench_airline.jsonl", sample: 60, coding: false },
];

function row(rows: CacheRow[], label: string): CacheRow {
  const r = rows.find((x) => x.strategy === label);
  if (r === undefined) throw new Error(`bench: no row for ${label}`);
  return r;
}

/** Whether the hybrid beats both of its parts on cost (each cache model) at equal or better far-fact retention, in words. */
function verdict(rows: CacheRow[]): string {
  const label = (s: StrategySpec): string => (s.options === undefined ? s.name : `${s.name}:${Object.entries(s.options).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(",")}`);
  const h = row(rows, label(HYBRID));
  const parts = [row(rows, label(MASKING)), row(rows, label(ROLLING))];
  const lines = parts.map((p) => {
    const costs = Object.keys(CACHE_MODELS).map((m) => `${m} ${costRatioText(h.costRatio[m], h.cost[m])} vs ${costRatioText(p.costRatio[m], p.cost[m])}${h.cost[m] <= p.cost[m] ? "" : " (dearer)"}`);
    const far = h.farRetention === null || p.farRetention === null ? "no far facts" : `far facts ${percentText(h.farRetention)} vs ${percentText(p.farRetention)}${h.farRetention >= p.farRetention ? "" : " (fewer)"}`;
    return `  hybrid vs ${p.strategy}: ${costs.join(", ")}; ${far}`;
  });
  return lines.join("\n");
}

export async function agentLoops(corpora: string): Promise<void> {
  console.log(`\nAgent loops under three cache models (token-prefix: gpt-5, 1,024-token minimum, 128-token steps, reads 0.1x; breakpoint: claude-sonnet-4, a breakpoint on each prompt's last message, writes 1.25x; none; cost against full; far facts: last mentioned ${FAR_MESSAGES}+ messages before the request that needs them):`);
  const sets: Array<{ label: string; transcripts: Transcript[]; coding: boolean }> = SETS.map((s) => {
    const transcripts = loadTranscripts(join(corpora, s.file), s.sample);
    return { label: `${s.file} (${transcripts.length})`, transcripts, coding: s.coding };
  });
  sets.push({ label: "own coding sessions with large tool outputs (10)", transcripts: codingSessions(10), coding: true });
  for (const set of sets) {
    const report = await compareUnderCaches(set.transcripts, AGENT_LOOP_STRATEGIES, { model: "gpt-4o" });
    console.log(`\n${set.label}`);
    console.log(renderCacheTable(report));
    if (set.coding) console.log(verdict(report.rows));
  }
}
