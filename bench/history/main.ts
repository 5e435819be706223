// npm run bench:history — full history vs compressed history (default and strict-prefix
// modes) over realistic multi-turn sessions: input tokens summed over every prompt, the
// history part alone, the peak prompt, and the cost with a prefix cache (cached tokens at
// 0.1x). Tokens are counted with the o200k_base tokenizer. `--json` prints raw results.
import { measureSession, type SessionResult } from "./measure.js";
import { sessions } from "./sessions/index.js";

const pct = (full: number, view: number): string => (full === 0 ? "-" : `${Math.round((1 - view / full) * 100)}%`);
const num = (n: number): string => Math.round(n).toLocaleString("en-US");
/** "12% lower" or "3% higher": the change from the full view's cost. */
const change = (full: number, view: number): string => {
  const d = Math.round((1 - view / full) * 100);
  return d >= 0 ? `${d}% lower` : `${-d}% higher`;
};

function table(results: readonly SessionResult[]): string {
  const head = ["session", "kind", "turns", "full in", "compr. in", "saved", "history full", "history compr.", "saved", "strict", "saved", "peak full", "peak compr.", "cached cost full", "compr.", "strict"];
  const rows = results.map((r) => [
    r.name,
    r.kind,
    String(r.turns),
    num(r.compressed.fullTokens),
    num(r.compressed.viewTokens),
    pct(r.compressed.fullTokens, r.compressed.viewTokens),
    num(r.history.full),
    num(r.history.compressed),
    pct(r.history.full, r.history.compressed),
    num(r.history.strict),
    pct(r.history.full, r.history.strict),
    num(r.compressed.fullPeak),
    num(r.compressed.viewPeak),
    num(r.compressed.fullCachedCost),
    `${num(r.compressed.viewCachedCost)} (${change(r.compressed.fullCachedCost, r.compressed.viewCachedCost)})`,
    `${num(r.strict.viewCachedCost)} (${change(r.strict.fullCachedCost, r.strict.viewCachedCost)})`,
  ]);
  const lines = [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`);
  return lines.join("\n");
}

function total(label: string, results: readonly SessionResult[]): string {
  const sum = (f: (r: SessionResult) => number): number => results.reduce((s, r) => s + f(r), 0);
  const full = sum((r) => r.compressed.fullTokens);
  const compressed = sum((r) => r.compressed.viewTokens);
  const strict = sum((r) => r.strict.viewTokens);
  const hFull = sum((r) => r.history.full);
  const hCompressed = sum((r) => r.history.compressed);
  const hStrict = sum((r) => r.history.strict);
  const cFull = sum((r) => r.compressed.fullCachedCost);
  const cCompressed = sum((r) => r.compressed.viewCachedCost);
  const cStrict = sum((r) => r.strict.viewCachedCost);
  return [
    `${label} (${results.length} sessions, ${sum((r) => r.turns)} turns):`,
    `  input tokens       full ${num(full)}  compressed ${num(compressed)} (${pct(full, compressed)} fewer)  strict ${num(strict)} (${pct(full, strict)} fewer)`,
    `  history tokens     full ${num(hFull)}  compressed ${num(hCompressed)} (${pct(hFull, hCompressed)} fewer)  strict ${num(hStrict)} (${pct(hFull, hStrict)} fewer)`,
    `  peak prompt        full ${num(Math.max(...results.map((r) => r.compressed.fullPeak)))}  compressed ${num(Math.max(...results.map((r) => r.compressed.viewPeak)))}  strict ${num(Math.max(...results.map((r) => r.strict.viewPeak)))}`,
    `  cached cost        full ${num(cFull)}  compressed ${num(cCompressed)} (${change(cFull, cCompressed)})  strict ${num(cStrict)} (${change(cFull, cStrict)})`,
  ].join("\n");
}

async function main(): Promise<void> {
  const started = performance.now();
  const results: SessionResult[] = [];
  for (const s of sessions) results.push(await measureSession(s));
  if (process.argv.includes("--json")) {
    process.stdout.write(JSON.stringify(results, null, 2) + "\n");
    return;
  }
  const lost = results.flatMap((r) => r.lost.map((l) => `${r.name}: ${l}`));
  const out = [
    "History compression benchmark: full history vs compressed (default) vs compressed (strict prefix)",
    "Tokens: o200k_base, chat framing included. Cost: uncached tokens at 1x, tokens shared with the previous prompt's start at 0.1x, in token-equivalents.",
    "'history' is everything after the system prompt and the task (the part compression acts on); the system prompt is the agent's real one.",
    "",
    table(results),
    "",
    total("All sessions", results),
    "",
    total("Sessions of 10+ turns", results.filter((r) => r.turns >= 10)),
    "",
    lost.length === 0 ? "Nothing live lost: every live definition is shown with its latest type and the most recent println lines are in the final prompt (both modes)." : `LOST:\n${lost.join("\n")}`,
    `(${((performance.now() - started) / 1000).toFixed(1)} s)`,
  ];
  process.stdout.write(out.join("\n") + "\n");
  if (lost.length > 0) process.exitCode = 1;
}

await main();
