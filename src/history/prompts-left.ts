// How many prompts a rewrite of the compressed view is expected to be repaid over: the one count
// every payback decision of the view uses (println cuts, summarizing a function turn or a fixed
// error, dropping a superseded line).

/**
 * The prompts a rewrite must pay back within. The turn budget is only an upper bound on a run's
 * length: a run often returns long before it, and a rewrite priced over the whole budget left is a
 * bet on prompts that never come (bench:history, "Turn budget" rows: facts-read-late 6.2% and
 * log-triage 4.7% dearer than full at budgets 1.5-5x; random agent runs at 5x up to 1.33x). A short
 * horizon bounds the bet: a rewrite is made only when the next 8 prompts repay it. Measured against
 * the alternatives (docs/history.md, "Every rewrite pays"): 12 left facts-read-late 0.4% dearer;
 * "as many prompts again as the run has had" (min(budget left, turns so far)) left it 1.2% dearer
 * and gave up 5 points of history tokens on the bench's terse sessions; 7 or fewer gave up 2-5.
 */
export const PAYBACK_HORIZON = 8;

/**
 * Prompts left, this one included, for a prompt over `visible` turns of a run of `maxTurns`: the
 * budget left, at most {@link PAYBACK_HORIZON}. A pure function of the prompt where a decision is
 * first made, so every later prompt, asking the same question about it, decides the same.
 */
export function promptsLeft(maxTurns: number, visible: number): number {
  return Math.max(0, Math.min(maxTurns - visible, PAYBACK_HORIZON));
}
