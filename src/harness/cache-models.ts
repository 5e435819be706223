// Strategies side by side under several cache models at once: each transcript is replayed per
// strategy (once per kind of cache for a strategy laid out for its client's cache) and every
// prompt is priced by one meter per cache model (the project's one measure,
// src/compaction/measure.ts), so "cheaper than full" can be read under a token-prefix cache, a
// breakpoint cache with its write premium, and no cache. Also far-fact retention.
import { DEFAULT_PRICES, NO_CACHE, type ModelPrice } from "../compaction/prices.js";
import type { StrategyRegistry, StrategySpec } from "../compaction/registry.js";
import type { Llm } from "../llm/types.js";
import { cacheTableCells, costRatio, FAR_MESSAGES } from "../compaction/figures.js";
import { specLabel } from "./compare.js";
import { measure } from "./measure.js";
import type { Transcript } from "./transcript.js";

export { cacheTableCells, FAR_MESSAGES };

/** The three ways a provider bills a prompt, each with a real model's list prices from the one price table. */
export const CACHE_MODELS: Readonly<Record<string, ModelPrice>> = {
  /** OpenAI-style: the shared token prefix from 1,024 tokens on in 128-token steps, read at 0.1x (gpt-5). */
  "token-prefix": DEFAULT_PRICES["gpt-5"],
  /** Anthropic-style: hits only at earlier breakpoints (the end of the system prompt, the last message of each prompt, and where the strategy's `cacheBreakpoints` says), writes at 1.25x (claude-sonnet-4). */
  breakpoint: DEFAULT_PRICES["claude-sonnet-4"],
  /** Every input token at the list price (gpt-5's). */
  none: { ...DEFAULT_PRICES["gpt-5"], cache: NO_CACHE },
};

export interface CacheRow {
  strategy: string;
  inputTokens: number;
  /** 1 - inputTokens / full's. */
  reduction: number;
  /** Dollars per cache model (requests and the compaction's own calls), and the ratio to full's. */
  cost: Record<string, number>;
  costRatio: Record<string, number | null>;
  /** Probe facts kept where needed, all and far ones (null without probes). */
  retention: number | null;
  farRetention: number | null;
  farNeeded: number;
  llmCalls: number;
  /** Transcripts on which the strategy compacted at least once. */
  fired: number;
  /** Transcripts on which a summary failed (the prompts there went out without it). */
  failed: number;
}

export interface CacheReport {
  transcripts: number;
  models: string[];
  rows: CacheRow[];
}

export interface CacheCompareOptions {
  models?: Readonly<Record<string, ModelPrice>>;
  llm?: Llm;
  /** The model the LLM summarizer calls (prices its spend), when not the conversations'. */
  summaryModel?: string;
  /** The conversations' model, for context limits (usage-ratio). */
  model?: string;
  /** Where strategies given by name are found (default: every shipped strategy). */
  registry?: StrategyRegistry;
}

export async function compareUnderCaches(transcripts: readonly Transcript[], strategies: ReadonlyArray<StrategySpec | string>, options: CacheCompareOptions = {}): Promise<CacheReport> {
  const models = options.models ?? CACHE_MODELS;
  const names = Object.keys(models);
  const specs = strategies.some((s) => (typeof s === "string" ? s : s.name) === "full") ? [...strategies] : ["full", ...strategies];
  const rows: CacheRow[] = [];
  for (const spec of specs) {
    const cost: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    let inputTokens = 0;
    let needed = 0;
    let kept = 0;
    let farNeeded = 0;
    let farKept = 0;
    let llmCalls = 0;
    let fired = 0;
    let failed = 0;
    for (const t of transcripts) {
      let compacted = false;
      // Priced by measure, one meter per cache model: a strategy laid out for its client's cache
      // (the interpreter strategy) runs once per kind of cache, with its own breakpoints.
      const metrics = await measure(t, spec, {
        models: names,
        prices: models,
        ...(options.model === undefined ? {} : { model: options.model }),
        ...(options.llm === undefined ? {} : { llm: options.llm }),
        ...(options.summaryModel === undefined ? {} : { summaryModel: options.summaryModel }),
        ...(options.registry === undefined ? {} : { registry: options.registry }),
        onPrompt(p) {
          llmCalls += p.stats?.llmCalls ?? 0;
          if (p.events?.some((e) => e.kind === "compacted") === true) compacted = true;
          // Judged by the measure, as the compare table counts them; 1-2 character values apart there, left out here.
          for (const probe of p.probes) {
            if (probe.band === "short") continue;
            needed++;
            if (probe.kept) kept++;
            if (probe.distance >= FAR_MESSAGES) {
              farNeeded++;
              if (probe.kept) farKept++;
            }
          }
        },
      });
      names.forEach((n, k) => (cost[n] += metrics.costs[k] ?? 0));
      inputTokens += metrics.inputTokens;
      if (compacted) fired++;
      if (metrics.summaryFailures > 0) failed++;
    }
    rows.push({ strategy: specLabel(spec), inputTokens, reduction: 0, cost, costRatio: {}, retention: needed === 0 ? null : kept / needed, farRetention: farNeeded === 0 ? null : farKept / farNeeded, farNeeded, llmCalls, fired, failed });
  }
  const full = rows[specs.findIndex((s) => (typeof s === "string" ? s : s.name) === "full")];
  for (const row of rows) {
    row.reduction = full.inputTokens === 0 ? 0 : 1 - row.inputTokens / full.inputTokens;
    row.costRatio = Object.fromEntries(names.map((n) => [n, costRatio(row.cost[n], full.cost[n])]));
  }
  return { transcripts: transcripts.length, models: names, rows };
}

/** The report as a terminal table: tokens, cost against full under each cache model, retention, and where a strategy never fired. */
export function renderCacheTable(r: CacheReport): string {
  const { head, rows } = cacheTableCells(r);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
