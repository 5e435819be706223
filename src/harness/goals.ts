// How well a goal detector finds where a conversation turns to a new goal, against the labelled
// corpora (MultiWOZ, SGD): every user message after the first is a decision; the labelled goal
// starts (all but the first) are the positives.
import type { GoalDetector } from "../compaction/goals.js";
import type { Transcript } from "./transcript.js";

export interface DetectorScore {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
}

export async function scoreDetector(detector: GoalDetector, transcripts: readonly Transcript[]): Promise<DetectorScore> {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const t of transcripts) {
    if (t.goals === undefined || t.goals.length === 0) continue;
    const starts = new Set(t.goals.slice(1).map((g) => g.start));
    const users = t.messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
    let goalStart = t.goals[0].start;
    for (const i of users) {
      if (i <= t.goals[0].start) continue;
      const said = (await detector.isNewGoal(t.messages, i, goalStart, {})).newGoal;
      const truth = starts.has(i);
      if (said && truth) tp++;
      else if (said) fp++;
      else if (truth) fn++;
      // The detector continues from what it decided, as the strategy does.
      if (said) goalStart = i;
    }
  }
  return { truePositives: tp, falsePositives: fp, falseNegatives: fn, precision: tp + fp === 0 ? 0 : tp / (tp + fp), recall: tp + fn === 0 ? 0 : tp / (tp + fn) };
}
