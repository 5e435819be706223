// Strategies side by side under several cache models at once: each transcript is replayed per
// strategy (once per kind of cache for a strategy laid out for its client's cache) and every
// prompt is priced by one meter per cache model (the project's one measure,
// src/compaction/measure.ts), so "cheaper than full" can be read under a token-prefix cache, a
// breakpoint cache with its write premium, and no cache. Also far-fact retention.
import { DEFAULT_PRICES, NO_CACHE, type ModelPrice } from "../compaction/prices.js";
import type { StrategyRegistry, StrategySpec } from "../compaction/registry.js";
import type { Llm } from "../llm/types.js";
import { cacheTableCells, costRatio, FAR_MESSAGES, reductionOf } from "../compaction/figures.js";
import { checkMeasurable, checkRegistry, checkStrategies, specLabel } from "./compare.js";
import { measure, StrategyFailure } from "./measure.js";
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
  /** 1 - inputTokens / full's; null when measured on no request (the strategy failed on every transcript). */
  reduction: number | null;
  /** Dollars per cache model (requests and the compaction's own calls), and the ratio to full's (null as the reduction is). */
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
  /** Transcripts on which the strategy itself failed (threw, or no result within timeoutMs): every figure of the row, and full's it is compared with, leaves them out. */
  failures: Array<{ id: string; message: string }>;
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
  /** Most milliseconds one compaction call may take (measure's default); past it that strategy fails on that transcript. */
  timeoutMs?: number;
}

/** One transcript's figures under one strategy, kept apart until every row is measured (each row is compared with full on the transcripts both were measured on). */
interface Cell {
  cost: number[];
  inputTokens: number;
  needed: number;
  kept: number;
  farNeeded: number;
  farKept: number;
  llmCalls: number;
  compacted: boolean;
  summaryFailed: boolean;
}

export async function compareUnderCaches(transcripts: readonly Transcript[], strategies: ReadonlyArray<StrategySpec | string>, options: CacheCompareOptions = {}): Promise<CacheReport> {
  checkMeasurable(transcripts, "compareUnderCaches");
  checkRegistry(options.registry, "compareUnderCaches");
  await checkStrategies(strategies, options.llm, options.registry, options.timeoutMs);
  const models = options.models ?? CACHE_MODELS;
  const names = Object.keys(models);
  const specs = strategies.some((s) => (typeof s === "string" ? s : s.name) === "full") ? [...strategies] : ["full", ...strategies];
  const cells: Array<Array<Cell | { failed: string }>> = [];
  for (const spec of specs) {
    const row: Array<Cell | { failed: string }> = [];
    for (const t of transcripts) {
      const cell: Cell = { cost: [], inputTokens: 0, needed: 0, kept: 0, farNeeded: 0, farKept: 0, llmCalls: 0, compacted: false, summaryFailed: false };
      try {
        // Priced by measure, one meter per cache model: a strategy laid out for its client's cache
        // (the interpreter strategy) runs once per kind of cache, with its own breakpoints.
        const metrics = await measure(t, spec, {
          models: names,
          prices: models,
          ...(options.model === undefined ? {} : { model: options.model }),
          ...(options.llm === undefined ? {} : { llm: options.llm }),
          ...(options.summaryModel === undefined ? {} : { summaryModel: options.summaryModel }),
          ...(options.registry === undefined ? {} : { registry: options.registry }),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          onPrompt(p) {
            cell.llmCalls += p.stats?.llmCalls ?? 0;
            if (p.events?.some((e) => e.kind === "compacted") === true) cell.compacted = true;
            // Judged by the measure, as the compare table counts them; 1-2 character values apart there, left out here.
            for (const probe of p.probes) {
              if (probe.band === "short") continue;
              cell.needed++;
              if (probe.kept) cell.kept++;
              if (probe.distance >= FAR_MESSAGES) {
                cell.farNeeded++;
                if (probe.kept) cell.farKept++;
              }
            }
          },
        });
        cell.cost = names.map((_, k) => metrics.costs[k] ?? 0);
        cell.inputTokens = metrics.inputTokens;
        cell.summaryFailed = metrics.summaryFailures > 0;
        row.push(cell);
      } catch (e) {
        // One strategy failing on one conversation ends that cell, not the run.
        if (!(e instanceof StrategyFailure)) throw e;
        row.push({ failed: e.message });
      }
    }
    cells.push(row);
  }
  const fullAt = specs.findIndex((s) => (typeof s === "string" ? s : s.name) === "full");
  const measured = (c: Cell | { failed: string }): c is Cell => !("failed" in c);
  const rows = specs.map((spec, i): CacheRow => {
    const cost: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    const fullCost: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    let inputTokens = 0;
    let fullTokens = 0;
    let needed = 0;
    let kept = 0;
    let farNeeded = 0;
    let farKept = 0;
    let llmCalls = 0;
    let fired = 0;
    let failed = 0;
    const failures: CacheRow["failures"] = [];
    cells[i].forEach((c, k) => {
      const full = cells[fullAt][k];
      if (!measured(c)) failures.push({ id: transcripts[k].id, message: c.failed });
      if (!measured(c) || !measured(full)) return;
      names.forEach((n, m) => {
        cost[n] += c.cost[m];
        fullCost[n] += full.cost[m];
      });
      inputTokens += c.inputTokens;
      fullTokens += full.inputTokens;
      needed += c.needed;
      kept += c.kept;
      farNeeded += c.farNeeded;
      farKept += c.farKept;
      llmCalls += c.llmCalls;
      if (c.compacted) fired++;
      if (c.summaryFailed) failed++;
    });
    const reduction = reductionOf(inputTokens, fullTokens);
    return {
      strategy: specLabel(spec),
      inputTokens,
      reduction,
      cost,
      costRatio: Object.fromEntries(names.map((n) => [n, reduction === null ? null : costRatio(cost[n], fullCost[n])])),
      retention: needed === 0 ? null : kept / needed,
      farRetention: farNeeded === 0 ? null : farKept / farNeeded,
      farNeeded,
      llmCalls,
      fired,
      failed,
      failures,
    };
  });
  return { transcripts: transcripts.length, models: names, rows };
}

/** The report as a terminal table: tokens, cost against full under each cache model, retention, and where a strategy never fired. */
export function renderCacheTable(r: CacheReport): string {
  const { head, rows } = cacheTableCells(r);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
