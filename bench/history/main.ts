// npm run bench:history — full history vs compressed history (default, the earlier timing and strict-prefix
// modes) over two sets of the same eleven multi-turn sessions: terse replies, and replies of
// realistic length. Per session and in total: input tokens summed over every prompt, the
// history part alone, the peak prompt, the cost with a prefix cache (cached tokens at
// 0.1x) and where that cost goes. Tokens are counted with the o200k_base tokenizer.
// `--json` prints the raw results.
import { BUDGET_FACTORS, CACHE_MODELS, measureSession, sweepPrintBudget, type BudgetSweep, type CacheBreakdown, type CacheName, type SessionResult } from "./measure.js";
import { round3Sessions, widePages } from "./sessions/round3.js";
import type { Session } from "./session.js";
import { sessions } from "./sessions/index.js";
import { realisticSessions } from "./sessions/realistic/index.js";
import { defaultViewOptions } from "../../src/history/view.js";

interface SetResult {
  name: string;
  results: SessionResult[];
}

const pct = (full: number, view: number): string => (full === 0 ? "-" : `${Math.round((1 - view / full) * 100)}%`);
const num = (n: number): string => Math.round(n).toLocaleString("en-US");
/** "12% lower" or "3% higher": the change from the full view's cost. */
const change = (full: number, view: number): string => {
  const d = Math.round((1 - view / full) * 100);
  return d >= 0 ? `${d}% lower` : `${-d}% higher`;
};
const CACHE_NAMES = Object.keys(CACHE_MODELS) as CacheName[];
const CACHE_LABEL: Record<CacheName, string> = { "token-prefix": "token-prefix cache (1,024 min, 128 step, reads 0.1x)", breakpoint: "breakpoint cache (1,024 min, reads 0.1x, writes 1.25x)" };
const MIN_LABEL: Record<CacheName, string> = { "token-prefix": "token-prefix cache from 4,096 tokens (gemini-2.5-pro: step 1, reads 0.25x)", breakpoint: "breakpoint cache from 4,096 tokens (claude-haiku-4)" };
const sum = <T>(rs: readonly T[], f: (r: T) => number): number => rs.reduce((s, r) => s + f(r), 0);
const md = (rows: string[][]): string => [rows[0], rows[0].map(() => "---"), ...rows.slice(1)].map((r) => `| ${r.join(" | ")} |`).join("\n");

function perSession(sets: readonly SetResult[]): string {
  const head = ["session", "kind", "turns", "replies", "avg reply", "history full", "compressed (saved)", "old timing (saved)", "strict (saved)", "peak full", "peak compr.", "cached cost full", "compressed", "old timing", "strict", "token-prefix full", "compressed", "breakpoint full", "compressed"];
  const rows = [head];
  const longest = Math.max(...sets.map((s) => s.results.length));
  for (let i = 0; i < longest; i++) {
    for (const set of sets) {
      const r = set.results[i];
      if (r === undefined) continue;
      rows.push([
        r.name,
        r.kind,
        String(r.turns),
        set.name,
        num(r.replyTokens),
        num(r.history.full),
        `${num(r.history.compressed)} (${pct(r.history.full, r.history.compressed)})`,
        `${num(r.history.previous)} (${pct(r.history.full, r.history.previous)})`,
        `${num(r.history.strict)} (${pct(r.history.full, r.history.strict)})`,
        num(r.compressed.fullPeak),
        num(r.compressed.viewPeak),
        num(r.compressed.fullCachedCost),
        `${num(r.compressed.viewCachedCost)} (${change(r.compressed.fullCachedCost, r.compressed.viewCachedCost)})`,
        `${num(r.previous.viewCachedCost)} (${change(r.previous.fullCachedCost, r.previous.viewCachedCost)})`,
        `${num(r.strict.viewCachedCost)} (${change(r.strict.fullCachedCost, r.strict.viewCachedCost)})`,
        ...CACHE_NAMES.flatMap((c) => [num(r.priced[c].full), `${num(r.priced[c].compressed)} (${change(r.priced[c].full, r.priced[c].compressed)})`]),
      ]);
    }
  }
  return md(rows);
}

/** Views no compression can match by much, for scale: what forgetting the history would save. */
const REFERENCES = [
  ["latestOnly", "only the latest turn, as sent (all earlier turns forgotten)"],
  ["noHistory", "no history at all (the system prompt and task alone)"],
] as const;

function totals(sets: readonly SetResult[], label: string, keep: (r: SessionResult) => boolean): string {
  const head = [label, ...sets.flatMap((s) => [`${s.name}: full`, "compressed", "old timing", "strict"])];
  const cells = (f: (rs: SessionResult[]) => [number, number, number, number], fmt: (full: number, v: number) => string): string[] =>
    sets.flatMap((s) => {
      const [full, c, p, st] = f(s.results.filter(keep));
      return [num(full), fmt(full, c), fmt(full, p), fmt(full, st)];
    });
  const fewer = (full: number, v: number): string => `${num(v)} (${pct(full, v)} fewer)`;
  const costly = (full: number, v: number): string => `${num(v)} (${change(full, v)})`;
  if (sets[0].results.filter(keep).length === 0) return "";
  const rows = [
    head,
    ["sessions, turns", ...sets.flatMap((s) => [`${s.results.filter(keep).length}, ${sum(s.results.filter(keep), (r) => r.turns)}`, "", "", ""])],
    ["mean reply tokens", ...sets.flatMap((s) => [num(sum(s.results.filter(keep), (r) => r.replyTokens * r.turns) / sum(s.results.filter(keep), (r) => r.turns)), "", "", ""])],
    ["input tokens, all prompts", ...cells((x) => [sum(x, (r) => r.compressed.fullTokens), sum(x, (r) => r.compressed.viewTokens), sum(x, (r) => r.previous.viewTokens), sum(x, (r) => r.strict.viewTokens)], fewer)],
    ["history tokens, all prompts", ...cells((x) => [sum(x, (r) => r.history.full), sum(x, (r) => r.history.compressed), sum(x, (r) => r.history.previous), sum(x, (r) => r.history.strict)], fewer)],
    ["largest prompt", ...cells((x) => [Math.max(...x.map((r) => r.compressed.fullPeak)), Math.max(...x.map((r) => r.compressed.viewPeak)), Math.max(...x.map((r) => r.previous.viewPeak)), Math.max(...x.map((r) => r.strict.viewPeak))], (_, v) => num(v))],
    ["cost with a prefix cache", ...cells((x) => [sum(x, (r) => r.compressed.fullCachedCost), sum(x, (r) => r.compressed.viewCachedCost), sum(x, (r) => r.previous.viewCachedCost), sum(x, (r) => r.strict.viewCachedCost)], costly)],
    ...CACHE_NAMES.flatMap((c) => [
      [`cost, ${CACHE_LABEL[c]}`, ...cells((x) => [sum(x, (r) => r.priced[c].full), sum(x, (r) => r.priced[c].compressed), NaN, sum(x, (r) => r.priced[c].strict)], (full, v) => (Number.isNaN(v) ? "-" : costly(full, v)))],
      [`sessions dearer than full, ${c}`, ...cells((x) => [0, x.filter((r) => r.priced[c].compressed > r.priced[c].full).length, NaN, x.filter((r) => r.priced[c].strict > r.priced[c].full).length], (_, v) => (Number.isNaN(v) ? "-" : num(v)))],
      ...REFERENCES.map(([key, text]) => [`reference, ${c}: ${text}`, ...cells((x) => [sum(x, (r) => r.priced[c].full), sum(x, (r) => r.priced[c][key]), NaN, NaN], (full, v) => (Number.isNaN(v) ? "" : costly(full, v)))]),
    ]),
    ...CACHE_NAMES.flatMap((c) => [
      [`cost, ${MIN_LABEL[c]}`, ...cells((x) => [sum(x, (r) => r.minimum[c].full), sum(x, (r) => r.minimum[c].compressed), NaN, NaN], (full, v) => (Number.isNaN(v) ? "-" : costly(full, v)))],
      [`sessions dearer than full, ${c} from 4,096 tokens`, ...cells((x) => [0, x.filter((r) => r.minimum[c].compressed > r.minimum[c].full).length, NaN, NaN], (_, v) => (Number.isNaN(v) ? "-" : num(v)))],
    ]),
    ["sessions costlier than full", ...cells((x) => [0, x.filter((r) => r.compressed.viewCachedCost > r.compressed.fullCachedCost).length, x.filter((r) => r.previous.viewCachedCost > r.previous.fullCachedCost).length, x.filter((r) => r.strict.viewCachedCost > r.strict.fullCachedCost).length], (_, v) => num(v))],
  ];
  return md(rows);
}

function costParts(sets: readonly SetResult[], keep: (r: SessionResult) => boolean): string {
  const head = ["set", "view", "new turns (uncached)", "previous turn rewritten", "older turns rewritten", "prompts breaking early", "shared, not served (minimum, steps)", "cached reads (x0.1)", "cost"];
  const rows = [head];
  for (const set of sets) {
    const rs = set.results.filter(keep);
    for (const view of ["full", "compressed", "previous", "strict"] as const) {
      const part = (f: (b: CacheBreakdown) => number): number => sum(rs, (r) => f(r.cache[view]));
      rows.push([
        set.name,
        view === "previous" ? "old timing" : view,
        num(part((b) => b.newTokens)),
        num(part((b) => b.previousRewritten)),
        num(part((b) => b.olderRewritten)),
        `${num(part((b) => b.earlyBreaks))} of ${num(sum(rs, (r) => Math.max(0, r.turns - 2)))}`,
        num(part((b) => b.sharedUnserved)),
        num(part((b) => b.cachedRead * 0.1)),
        num(part((b) => b.cost)),
      ]);
    }
  }
  return md(rows);
}

/**
 * The same sessions with a turn budget larger than the turns they use (the bench's own runs use
 * exactly their budget): total cost against full under both cache models, and the session-model
 * pairs dearer than full, the worst named.
 */
function budgetRows(sets: readonly SetResult[]): string {
  const head = ["turn budget", ...CACHE_NAMES.flatMap((c) => [`${c}: full`, "compressed", "sessions dearer"]), "dearer than full (dearest first)"];
  const rows = [head];
  const all = sets.flatMap((set) => set.results.map((r) => ({ set: set.name, r })));
  const at = (r: SessionResult, factor: number): Record<CacheName, { full: number; compressed: number }> => (factor === 1 ? r.priced : (r.budgets.find((b) => b.factor === factor) as SessionResult["budgets"][number]).priced);
  for (const factor of [1, ...BUDGET_FACTORS]) {
    const dearer: Array<{ name: string; by: number }> = [];
    const cells = CACHE_NAMES.flatMap((c) => {
      let full = 0;
      let compressed = 0;
      let count = 0;
      for (const { set, r } of all) {
        const p = at(r, factor)[c];
        full += p.full;
        compressed += p.compressed;
        if (p.compressed > p.full) {
          count++;
          dearer.push({ name: `${r.name} (${set}, ${c}) +${((p.compressed / p.full - 1) * 100).toFixed(1)}%`, by: p.compressed / p.full });
        }
      }
      return [num(full), `${num(compressed)} (${change(full, compressed)})`, `${count} of ${all.length}`];
    });
    const worst = dearer.sort((a, b) => b.by - a.by).map((d) => d.name);
    const named = worst.length > 4 ? [...worst.slice(0, 4), `${worst.length - 4} more`] : worst;
    rows.push([factor === 1 ? "1x (the runs above)" : `${factor}x`, ...cells, worst.length === 0 ? "none" : named.join("; ")]);
  }
  return md(rows);
}

/** The println token budgets the sweep compares (the default is marked), and the wide-line sessions it runs: rows per line x turns. */
const SWEEP_BUDGETS = [500, 1000, 1500, 2000] as const;
const SWEEP_SESSIONS = [2, 4, 8, 16].flatMap((rows) => [12, 30].map((turns) => widePages(rows, turns)));

/** Per wide-line session, compressed against full at each println token budget, under both cache models. */
function sweepRows(sweeps: readonly BudgetSweep[]): string {
  const head = ["session (rows per line x turns)", ...SWEEP_BUDGETS.flatMap((b) => CACHE_NAMES.map((c) => `${num(b)}${b === defaultViewOptions.printlnHistoryTokens ? " (default)" : ""}: ${c}`))];
  const rows = [head];
  const line = (name: string, full: (c: CacheName) => number, at: (b: number, c: CacheName) => number): string[] => [name, ...SWEEP_BUDGETS.flatMap((b) => CACHE_NAMES.map((c) => change(full(c), at(b, c))))];
  const at = (s: BudgetSweep, b: number, c: CacheName): number => (s.compressed.find((x) => x.tokens === b) as BudgetSweep["compressed"][number]).priced[c];
  for (const s of sweeps) rows.push(line(s.name, (c) => s.full[c], (b, c) => at(s, b, c)));
  rows.push(line("all", (c) => sum(sweeps, (s) => s.full[c]), (b, c) => sum(sweeps, (s) => at(s, b, c))));
  return md(rows);
}

async function measure(name: string, list: readonly Session[]): Promise<SetResult> {
  const results: SessionResult[] = [];
  for (const s of list) results.push(await measureSession(s));
  return { name, results };
}

async function main(): Promise<void> {
  const started = performance.now();
  const sets = [await measure("terse", sessions), await measure("realistic", realisticSessions), await measure("round 3", round3Sessions)];
  const sweeps: BudgetSweep[] = [];
  for (const s of SWEEP_SESSIONS) sweeps.push(await sweepPrintBudget(s, SWEEP_BUDGETS));
  if (process.argv.includes("--json")) {
    process.stdout.write(JSON.stringify({ sets, sweeps }, null, 2) + "\n");
    return;
  }
  const long = (r: SessionResult): boolean => r.turns >= 10;
  const lost = sets.flatMap((s) => s.results.flatMap((r) => r.lost.map((l) => `${s.name} ${r.name}: ${l}`)));
  const out = [
    "History compression benchmark: full history vs compressed (default: the design's timing) vs the earlier timing (keepLatestFull) vs compressed (strict prefix)",
    "Tokens: o200k_base, chat framing included. Cost, in token-equivalents: uncached tokens at 1x, tokens shared with the previous prompt's start at 0.1x where the cache serves them (token prefix: from 1,024 tokens on, in 128-token steps, unless a row says otherwise; breakpoint: up to an entry an earlier prompt wrote, writes at 1.25x).",
    "'history' is everything after the system prompt and the task (the part compression acts on), less each view's fixed note on earlier turns: the full view's on `Stored:` (in its system prompt) and the compressed view's summary legend (heading its first summary). Input tokens and costs count every token as sent.",
    "Two sets of the same eleven sessions, each turn doing the same work with the same outcome: 'terse' replies (a sentence, then a compact program)",
    "and 'realistic' replies (the reasoning paragraph and the commented, formatted program GPT-4-class models write in such loops).",
    "",
    "Per session",
    "",
    perSession(sets),
    "",
    "Sessions of 10+ turns",
    "",
    totals(sets, "10+ turns", long),
    "",
    "All sessions",
    "",
    totals(sets, "all", () => true),
    "",
    "Turn budget larger than the turns used (all sessions, each run again with a budget of 1.5-5 times its turns; it still stops where it did): cost in token-equivalents",
    "",
    budgetRows(sets),
    "",
    "Where the token-prefix cost goes (sessions of 10+ turns): uncached tokens by what they are, and cached reads",
    "",
    costParts(sets, long),
    "",
    "The println token budget (`printlnHistoryTokens`): sessions printing rows of orders as one wide line per turn, cost of compressed against full at each budget",
    "",
    sweepRows(sweeps),
    "",
    lost.length === 0
      ? "Nothing lost (both sets): every live definition is shown with its latest type and the most recent println lines are in the final prompt (default and strict); in every default-mode prompt no hidden value is shown (as sent), no live value is bare, every definition of a turn that printed nothing is shown in the next prompt (or the turn as written), every definition a later program read shows its sample once its output is not whole (until redefined), and at least half the println limit of earlier lines is shown when that many exist."
      : `LOST:\n${lost.join("\n")}`,
    `(${((performance.now() - started) / 1000).toFixed(1)} s)`,
  ];
  process.stdout.write(out.join("\n") + "\n");
  if (lost.length > 0) process.exitCode = 1;
}

await main();
