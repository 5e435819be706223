// How well a goal detector finds where a conversation turns to a new goal, against the labelled
// corpora (MultiWOZ, SGD): every user message after the first is a decision; the labelled goal
// starts (all but the first) are the positives.
import { percentText } from "../compaction/figures.js";
import type { GoalDetector } from "../compaction/goals.js";
import type { Transcript } from "./transcript.js";

export interface DetectorScore {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  /** Null when the detector claimed no boundary (no claim was right or wrong), not 0. */
  precision: number | null;
  /** Null when the labels hold no boundary to find. */
  recall: number | null;
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
  return { truePositives: tp, falsePositives: fp, falseNegatives: fn, precision: tp + fp === 0 ? null : tp / (tp + fp), recall: tp + fn === 0 ? null : tp / (tp + fn) };
}

/** The score as the reports print it. */
export function detectorLine(name: string, s: DetectorScore): string {
  const precision = s.precision === null ? "- (no boundary claimed)" : percentText(s.precision);
  const recall = s.recall === null ? "- (no labelled boundary)" : percentText(s.recall);
  return `goal boundaries, ${name} detector: precision ${precision}, recall ${recall} (${s.truePositives} found, ${s.falsePositives} false, ${s.falseNegatives} missed)`;
}
