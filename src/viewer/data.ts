// The files given → the page's data: runs (nested ones included) and reports, message
// texts stored once, and every string scrubbed of hidden context values.
import { PAGE_DATA_VERSION, type FileEntry, type PageData, type ReportView, type RunView } from "./model.js";
import type { ViewerInput } from "./input.js";
import { projectReport } from "./report.js";
import { projectRun } from "./run.js";
import { findHiddenValues, scrubber, scrubDeep, type HiddenValues } from "./scrub.js";
import { TextTable } from "./texts.js";

export function buildPageData(inputs: readonly ViewerInput[], title = "ptc view"): PageData {
  const table = new TextTable();
  const files: FileEntry[] = [];
  const runs: RunView[] = [];
  const reports: ReportView[] = [];
  const hidden: HiddenValues = new Map();
  let runCount = 0;
  for (const input of inputs) {
    if (input.kind === "run") {
      findHiddenValues(input.source.trace, hidden);
      const id = `r${++runCount}`;
      projectRun(input.source, input.name, id, table, runs);
      files.push({ name: input.name, kind: "run", id });
    } else {
      const id = `c${reports.length + 1}`;
      reports.push(projectReport(input.report, input.name, id));
      files.push({ name: input.name, kind: "report", id });
    }
  }
  const data: PageData = { version: PAGE_DATA_VERSION, title, texts: table.texts, files, runs, reports };
  return hidden.size === 0 ? data : scrubDeep(data, scrubber(hidden));
}
