// `ptc view FILE...`: the web viewer for agent runs (saved runs and traces) and `ptc compare
// --json` reports. Serves one page on a loopback address, or writes it to a file with --out.
import { basename } from "node:path";
import { parseTranscripts, TranscriptError } from "../harness/transcript.js";
import { buildPageData } from "../viewer/data.js";
import { inputLimit, readViewerInput, ViewerInputError, type ViewerInput } from "../viewer/input.js";
import { contentSecurityPolicy, renderPage, ViewerAssetsError } from "../viewer/page.js";
import { isLoopback, serveViewer } from "../viewer/server.js";
import { parseOptions, usageFailure, UsageError, wholeNumber, type Io } from "./eval.js";
import { forTerminal, namesOneOf, unwritable, writeOutput } from "./output.js";
import { readText, TextInputError } from "../json/text-input.js";

const USAGE = `usage: ptc view FILE... [--port N] [--host ADDRESS] [--out FILE|-]

Shows agent runs and compaction reports in a web page: per turn the program, output, tool
calls, definitions, error and tokens, the prompt as sent beside the full history with the
change from the previous turn, and token charts. FILE is a saved run or a trace (ptc demo
--trace-out FILE writes one) or a ptc compare --json report; transcripts (.jsonl) given with
a report show one of them under two of its strategies side by side (full and the one that
saved most).

  --port N         the port to serve on (default: any free port; the URL is printed)
  --host ADDRESS   a loopback address to serve on (default 127.0.0.1)
  --out FILE       write the page to FILE (one self-contained HTML file) instead of serving;
                   - writes it to standard output
`;

/** Reads and checks every file; a problem with any is reported and nothing is shown. */
export function readInputs(files: readonly string[]): ViewerInput[] {
  return files.map((file) => {
    let text: string;
    try {
      text = readText(file, file, inputLimit("view"));
    } catch (e) {
      if (e instanceof TextInputError) throw new ViewerInputError(e.message);
      throw new ViewerInputError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (!file.endsWith(".jsonl")) return readViewerInput(file, text);
    try {
      return { kind: "transcripts", name: file, transcripts: parseTranscripts(text, file) };
    } catch (e) {
      if (e instanceof TranscriptError) throw new ViewerInputError(e.message);
      throw e;
    }
  });
}

function port(raw: string | undefined): number {
  if (raw === undefined) return 0;
  // Digits only: Number("") is 0, any free port, which no client of a chosen port finds.
  const n = wholeNumber(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port expects a port number from 0 to 65535, got "${raw}"`);
  return n;
}

/** Resolves when the process is asked to stop. */
function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

export async function runViewCommand(args: string[], io: Io, stopped: () => Promise<void> = untilStopped): Promise<number> {
  let values;
  let files: string[];
  let listen: { host: string; port: number };
  try {
    const parsed = parseOptions({ args, allowPositionals: true, options: { port: { type: "string" }, host: { type: "string" }, out: { type: "string" }, help: { type: "boolean", short: "h" } } });
    values = parsed.values;
    files = parsed.positionals;
    listen = { host: values.host ?? "127.0.0.1", port: port(values.port) };
    if (values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    if (files.length === 0) throw new UsageError("give at least one file: a saved run, a trace or a ptc compare --json report");
    if (!isLoopback(listen.host)) throw new UsageError(`--host must be a loopback address (127.0.0.1, ::1 or localhost), got "${listen.host}": the viewer shows traces, which may hold private data`);
    if (values.out !== undefined && (values.port !== undefined || values.host !== undefined)) throw new UsageError("--out writes a file and serves nothing: it takes no --port or --host");
    // "-" is standard output, not a file of that name.
    const out = values.out === "-" ? undefined : values.out;
    // The page would replace the trace or report it shows, which is then lost.
    if (out !== undefined && namesOneOf(out, files)) throw new UsageError(`--out ${values.out} is one of the files to show: writing the page there would overwrite it`);
    // Checked before the page is built (a long run's takes a minute), not when it is written.
    const problem = out === undefined ? undefined : unwritable(out);
    if (problem !== undefined) throw new UsageError(`cannot write --out ${values.out}: ${problem}`);
  } catch (e) {
    return usageFailure("view", e, io, USAGE);
  }
  let page: string;
  let csp: string;
  try {
    const inputs = readInputs(files);
    if (inputs.some((i) => i.kind === "transcripts") && !inputs.some((i) => i.kind === "report")) {
      throw new ViewerInputError("transcripts (.jsonl) are shown beside the ptc compare report that measured them: give the report's --json file too");
    }
    const title = files.length === 1 ? `ptc view: ${basename(files[0])}` : `ptc view: ${files.length} files`;
    page = renderPage(await buildPageData(inputs, title));
    csp = contentSecurityPolicy();
  } catch (e) {
    if (!(e instanceof ViewerInputError) && !(e instanceof ViewerAssetsError)) throw e;
    io.stderr.write(forTerminal(`ptc view: ${e.message}\n`));
    return 2;
  }
  if (values.out === "-") {
    io.stdout.write(page);
    return 0;
  }
  if (values.out !== undefined) {
    try {
      writeOutput(values.out, page, files);
    } catch (e) {
      // The command line was right and the page made: its loss is a failed run (exit 1), as for ptc compare and ptc demo.
      io.stderr.write(forTerminal(`ptc view: cannot write ${values.out} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`));
      return 1;
    }
    io.stdout.write(`wrote ${values.out} (${(Buffer.byteLength(page) / 1024).toFixed(1)} KB)\n`);
    return 0;
  }
  let server;
  try {
    server = await serveViewer(page, csp, listen);
  } catch (e) {
    io.stderr.write(`ptc view: cannot listen on ${listen.host}:${listen.port} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
    return 2;
  }
  io.stdout.write(`ptc view: ${files.length} file${files.length === 1 ? "" : "s"} at ${server.url} (Ctrl-C stops)\n`);
  await stopped();
  await server.close();
  return 0;
}
