// The files given → the page's data: runs (nested ones included) and reports, message
// texts stored once, and every string scrubbed of hidden context values.
import { PAGE_DATA_VERSION, type FileEntry, type PageData, type ReportView, type RunView } from "./model.js";
import { ViewerInputError, type ViewerInput } from "./input.js";
import { projectReport } from "./report.js";
import { defaultPair, pickTranscript, replayMessages, replaySideBySide, specOf, type ReplayTranscript } from "./sidebyside.js";
import { projectRun } from "./run.js";
import { findHiddenValues, scrubber, scrubDeep, type HiddenValues } from "./scrub.js";
import { TextTable } from "./texts.js";
import type { RunTrace } from "../trace/trace.js";

/**
 * Prompt messages, over every turn of every run shown, that a page holds at most. Each turn's
 * prompt is rebuilt and compared whole (as sent and as the full history), so the work grows
 * with the square of a run's turns: a 19.6 MB trace of 2,600 turns built 78 s.
 */
export const MAX_PROMPT_MESSAGES = 1_000_000;

/**
 * Messages the full history's prompts hold over the requests of a transcript shown side by
 * side, at most. Each request replays both strategies over the messages before it, so the work
 * grows with the square of the transcript's replies: 3,000 replies (9 million) built 7.5 s.
 */
export const MAX_REPLAY_MESSAGES = 10_000_000;

/**
 * The messages a run's prompts hold, its nested runs' included: per turn the prompt as sent or
 * the full history rebuilt beside it, whichever is longer (a windowed strategy sends a few
 * messages of a history that grows by each turn's reply and feedback).
 */
function promptMessages(trace: RunTrace): number {
  let n = 0;
  let full = 2;
  for (const turn of trace.turns) {
    n += Math.max(turn.messages.length, full);
    full += turn.feedback === undefined ? 1 : 2;
    for (const nested of turn.nested ?? []) n += promptMessages(nested.trace);
  }
  return n;
}

/**
 * The page's data. Transcripts given with a report show one of them under two of the
 * report's strategies (full and the one that saved most); async for that replay.
 */
export async function buildPageData(inputs: readonly ViewerInput[], title = "ptc view"): Promise<PageData> {
  const table = new TextTable();
  const files: FileEntry[] = [];
  const runs: RunView[] = [];
  const reports: ReportView[] = [];
  const hidden: HiddenValues = new Map();
  let runCount = 0;
  let messages = 0;
  const transcripts: ReplayTranscript[] = inputs.flatMap((i) => (i.kind === "transcripts" ? i.transcripts : []));
  for (const input of inputs) {
    if (input.kind === "run") {
      messages += promptMessages(input.source.trace);
      if (messages > MAX_PROMPT_MESSAGES) {
        throw new ViewerInputError(`${input.name} is too large to view: the prompts of the runs shown hold ${messages.toLocaleString("en-US")} messages in all (the limit is ${MAX_PROMPT_MESSAGES.toLocaleString("en-US")}; each turn's prompt is shown whole, as sent and as the full history)`);
      }
      findHiddenValues(input.source.trace, hidden);
      const id = `r${++runCount}`;
      projectRun(input.source, input.name, id, table, runs);
      files.push({ name: input.name, kind: "run", id });
    } else if (input.kind === "report") {
      const id = `c${reports.length + 1}`;
      const view = projectReport(input.report, input.name, id);
      const transcript = pickTranscript(view, transcripts);
      const replayed = transcript === undefined ? 0 : replayMessages(transcript);
      if (transcript !== undefined && replayed > MAX_REPLAY_MESSAGES) {
        view.note = `${transcript.id} is too long to show side by side: its requests' prompts hold ${replayed.toLocaleString("en-US")} messages in all (the limit is ${MAX_REPLAY_MESSAGES.toLocaleString("en-US")})`;
      } else if (transcript !== undefined) {
        const pair = defaultPair(view);
        const options = (label: string) => input.report.rows.find((r) => r.strategy === label)?.options;
        try {
          const sideBySide = await replaySideBySide(transcript, [specOf(pair[0], options(pair[0])), specOf(pair[1], options(pair[1]))], pair, table);
          // A request is a reply to replay: with none there is no column to draw.
          if (sideBySide.requests.length > 0) view.sideBySide = sideBySide;
          else view.note = `${transcript.id} has no request to replay: no assistant reply follows its first message`;
        } catch (e) {
          // A strategy this version cannot rebuild still leaves the report worth showing.
          view.note = `${transcript.id} cannot be replayed under ${pair.join(" and ")}: ${(e as Error).message}`;
        }
      } else if (transcripts.length > 0) {
        view.note = "none of the transcripts given is one this report measured";
      }
      reports.push(view);
      files.push({ name: input.name, kind: "report", id });
    }
  }
  const data: PageData = { version: PAGE_DATA_VERSION, title, texts: table.texts, messages: table.messages, files, runs, reports };
  return scrubDeep(data, scrubber(hidden));
}
