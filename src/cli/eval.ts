// `ptc eval`: runs one PTC-Lisp program from an argument, a file or stdin and prints the
// result. Exit codes: 0 for a value, 1 when the program failed (an error or `(fail ...)`),
// 2 when the command line itself is wrong (so scripts can tell the two apart).
import { fstatSync } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { type ReadLimit, readStreamText, readText, TextInputError } from "../json/text-input.js";
import { forStream, forTerminal } from "./output.js";
import { Budget, contextJsonProblem, defaultLimits, type EvalResult, evaluate, formatError, isMap, isSet, type Limits, ours, parseContextJson, print, printSample, showStandIns, showStandInsIn, toHost, type Value, Vec } from "../lisp/index.js";

/** Where a command writes; the CLI passes the process streams, tests can pass buffers. */
export interface Io {
  stdin: NodeJS.ReadableStream;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

export const processIo = (): Io => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });

/** A command-line mistake: reported as `ptc <command>: <message>` with exit code 2. */
export class UsageError extends Error {}

/**
 * parseArgs for every command, refusing an option that takes one value given twice: parseArgs
 * keeps the last, so the first would be dropped unseen (--json a.json --json b.json wrote only
 * b.json; --ctx A --ctx B ran on B).
 */
export function parseOptions<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const given = new Map<string, string | undefined>();
  for (const t of parseArgs({ ...config, tokens: true }).tokens ?? []) {
    const option = t.kind === "option" ? config.options?.[t.name] : undefined;
    if (t.kind !== "option" || option?.type !== "string" || option.multiple === true) continue;
    const first = given.get(t.name);
    if (given.has(t.name)) throw new UsageError(`--${t.name} is given twice (${JSON.stringify(first)}, then ${JSON.stringify(t.value)}): give it once`);
    given.set(t.name, t.value);
  }
  return parseArgs(config);
}

/**
 * A count or port given on the command line, or NaN: digits only. Number() reads much that is no
 * count ("1e3" as 1000, "0x10" as 16, "1.0" as 1, " 2" as 2, "" as 0), so --turn 0x10 showed turn 16.
 */
export function wholeNumber(raw: string): number {
  return /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
}

export const EVAL_USAGE = `Usage: ptc eval [options] (-e SOURCE | FILE | -)

Runs a PTC-Lisp program and prints its result as EDN on stdout.

  -e, --expr SOURCE     the program text
  FILE                  read the program from a file
  -                     read the program from stdin
      --ctx JSON        context data (a JSON object), readable as data/key or ctx/key
      --ctx-file FILE   context data from a JSON file
      --limit NAME=N    override a sandbox limit, e.g. --limit timeoutMs=5000 (repeatable)
      --isolation MODE  worker (default): run the program in a worker thread with a hard
                        heap cap; none: in this process (faster start, no hard stop)
      --json            print the result as JSON (println output then goes to stderr); a
                        result JSON cannot write fails: one holding Infinity or NaN, or a
                        map with keys that are one JSON key (:a and "a")
  -h, --help            show this help

Exit status: 0 on a value, 1 when the program fails (error or (fail ...)) or its result cannot
be written as --json asks, 2 on a usage error.
Errors are printed on stderr as "<kind>: <message> (line L, column C)" with the source line.
`;

/** Options shared by `ptc eval` and `ptc repl`. */
export const SANDBOX_OPTIONS = {
  ctx: { type: "string" },
  "ctx-file": { type: "string" },
  limit: { type: "string", multiple: true },
  isolation: { type: "string" },
} as const;

/** Reads --isolation: where programs run (a worker thread unless told otherwise). */
export function parseIsolation(flag: string | undefined): "none" | "worker" {
  if (flag === undefined) return "worker";
  if (flag === "none" || flag === "worker") return flag;
  throw new UsageError(`--isolation must be worker or none, got '${flag}'`);
}

/** --ctx / --ctx-file as JSON text, and which flag gave it (undefined when neither is given). */
export function ctxText(ctx: string | undefined, ctxFile: string | undefined): { text: string; what: string } | undefined {
  if (ctx !== undefined && ctxFile !== undefined) throw new UsageError("give either --ctx or --ctx-file, not both");
  if (ctx !== undefined) return { text: ctx, what: "--ctx" };
  if (ctxFile !== undefined) return { text: readInput(ctxFile, "--ctx-file"), what: `--ctx-file ${ctxFile}` };
  return undefined;
}

/** Reads --ctx / --ctx-file into a context object here (the REPL's, kept for every program it runs). */
export function loadCtx(ctx: string | undefined, ctxFile: string | undefined): Record<string, unknown> | undefined {
  const given = ctxText(ctx, ctxFile);
  if (given === undefined) return undefined;
  try {
    // Parsed whole: each program the REPL runs reads it within its own limits.
    return parseContextJson(given.text, undefined, { maxCollectionSize: Infinity }, () => undefined);
  } catch (e) {
    const problem = contextJsonProblem(e);
    if (problem === null) throw e;
    throw new UsageError(given.what + problem);
  }
}

/** Parses repeated `--limit name=value` flags, checking names and values before anything runs. */
export function parseLimits(flags: readonly string[] | undefined): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const flag of flags ?? []) {
    const eq = flag.indexOf("=");
    const name = eq < 0 ? flag : flag.slice(0, eq);
    if (eq < 0) throw new UsageError(`--limit expects NAME=VALUE, e.g. --limit timeoutMs=5000, got '${flag}'`);
    if (!Object.hasOwn(defaultLimits, name)) {
      throw new UsageError(`unknown limit '${name}'; known limits: ${Object.keys(defaultLimits).join(", ")}`);
    }
    // Underscores as digit separators, as in the README's tables (1_000_000).
    const value = Number(flag.slice(eq + 1).replaceAll("_", ""));
    if (!(value > 0) || !Number.isFinite(value)) throw new UsageError(`limit '${name}' must be a positive number, got '${flag.slice(eq + 1)}'`);
    out[name as keyof Limits] = value;
  }
  return out;
}

// Input that is not UTF-8 (or too large for text) is a mistake in the command's input: exit 2, as for a missing file.
function readInput(path: string, what: string, limit?: ReadLimit): string {
  try {
    return readText(path, what === "file" ? path : `${what} ${path}`, limit);
  } catch (e) {
    if (e instanceof TextInputError) throw new UsageError(e.message);
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${what} '${path}'${code === "ENOENT" ? ": no such file" : code ? ` (${code})` : ""}`);
  }
}

/**
 * The most bytes a program's text may have: maxSourceChars characters of three bytes (UTF-8's
 * most for one UTF-16 unit) and a byte-order mark. Past it the evaluator refuses the program
 * anyway; reading on (< /dev/zero, up to the most a string holds) would only cost memory and time.
 */
export function programLimit(limits: Partial<Limits>): ReadLimit {
  const chars = limits.maxSourceChars ?? defaultLimits.maxSourceChars;
  return { bytes: 3 * chars + 3, what: "run as a program", why: `the limit is maxSourceChars=${chars} characters` };
}

async function readStdin(stream: NodeJS.ReadableStream, limit: ReadLimit): Promise<string> {
  // Node ends a stream over a folder at once, with no error: `ptc eval - < dir` read as an empty program.
  const fd = (stream as { fd?: unknown }).fd;
  if (typeof fd === "number" && isFolder(fd)) throw new UsageError("standard input is a folder, not a program");
  try {
    return await readStreamText(stream as AsyncIterable<Buffer | string>, "standard input", limit);
  } catch (e) {
    if (e instanceof TextInputError) throw new UsageError(e.message);
    throw e;
  }
}

function isFolder(fd: number): boolean {
  try {
    return fstatSync(fd).isDirectory();
  } catch {
    return false;
  }
}

/** Bounds on how much of a result the REPL shows (a person reads it; `ptc eval` prints it all for pipes). */
export interface Preview {
  maxItems: number;
  maxChars: number;
}

/** The result cut to `preview`, with a note saying what was cut and how to see the rest. */
function previewOf(v: Value, preview: Preview): string {
  const sample = printSample(v, { maxItems: preview.maxItems, maxChars: preview.maxChars, maxDepth: Infinity, note: false });
  if (!sample.truncated) return sample.text;
  if (typeof v === "string") return `${sample.text}\n;; shown in part (${v.length.toLocaleString("en-US")} characters); use count or subs to look at parts of it`;
  const size = v instanceof Vec || isMap(v) || isSet(v) ? `${v.size.toLocaleString("en-US")} items` : "a large value";
  return `${sample.text}\n;; shown in part (${size}); use count, take or get to look at parts of it`;
}

/**
 * The first number in `value` (plain JSON) that JSON cannot write, and where (`Infinity at
 * .a[0]`): JSON.stringify would write it as null. Walked without recursion, as the data may be
 * nested as deep as a program's limits allow; the place is spelled only for the one found.
 */
function nonFiniteAt(value: unknown): string | undefined {
  interface Place {
    v: unknown;
    key: string | number | undefined;
    up: Place | undefined;
  }
  const spell = (p: Place): string => {
    let path = "";
    for (let at: Place | undefined = p; at?.key !== undefined; at = at.up) {
      const k = at.key;
      path = `${typeof k === "number" ? `[${k}]` : /^[A-Za-z_][\w-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}${path}`;
    }
    return path;
  };
  const stack: Place[] = [{ v: value, key: undefined, up: undefined }];
  for (let p = stack.pop(); p !== undefined; p = stack.pop()) {
    const v = p.v;
    if (typeof v === "number" && !Number.isFinite(v)) return p.key === undefined ? String(v) : `${String(v)} at ${spell(p)}`;
    if (typeof v !== "object" || v === null) continue;
    // Pushed last to first, so the first place in the printed order is the one named.
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], key: i, up: p });
    else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: (v as Record<string, unknown>)[keys[i]], key: keys[i], up: p });
    }
  }
  return undefined;
}

const UNBOUNDED: Limits = { ...defaultLimits, maxFuel: Infinity, maxBoundaryValues: Infinity, maxBoundaryChars: Infinity, maxStringLength: Infinity, maxNestingDepth: Infinity };

/**
 * Writes what a program printed and its result. Shared with the REPL so both show results
 * the same way. Returns the exit code.
 */
export function report(r: EvalResult, io: Io, json = false, preview?: Preview): number {
  const printed = json ? io.stderr : io.stdout;
  // Hidden context (_ keys) is printed and quoted as the model would see it, its stand-ins shown; the value is the host's.
  for (const line of r.prints) printed.write(forStream(printed, showStandIns(line) + "\n"));
  if (!r.ok) {
    io.stderr.write(forStream(io.stderr, showStandIns(formatError(r.error)) + "\n"));
    return 1;
  }
  // A failure's reason is reported as an agent's run reports it (step.fail): hidden values as stand-ins. A value is the host's.
  const failed = r.outcome === "fail";
  const lisp = failed && r.marks !== undefined ? r.marks.hide(r.lisp) : r.lisp;
  let plain = r.value;
  if (json) {
    // JSON keys are strings: converted as a tool's arguments are, so two keys that become one
    // (:a and "a") fail instead of one value silently replacing the other. The result already
    // crossed within the run's limits once, so this walk needs none of its own.
    try {
      plain = toHost(lisp, Infinity, new Budget(UNBOUNDED), true);
      // JSON strings, as step.fail.details holds them.
      if (lisp !== r.lisp) plain = showStandInsIn(plain);
    } catch (e) {
      const own = ours(e);
      if (own === null || !("message" in own)) throw e;
      io.stderr.write(`ptc eval: the result cannot be written as JSON: ${own.message}; run without --json to print it\n`);
      return 1;
    }
    const unwritable = nonFiniteAt(plain);
    if (unwritable !== undefined) {
      io.stderr.write(`ptc eval: the result holds ${unwritable}, which JSON cannot write: run without --json to print it\n`);
      return 1;
    }
  }
  const text = json ? JSON.stringify(plain ?? null) : preview ? previewOf(lisp, preview) : print(lisp);
  // Printed and JSON text escape C0 controls but not C1 (CSI, U+009B, starts the same sequences as ESC [).
  if (failed) {
    io.stderr.write(forStream(io.stderr, `fail: ${showStandIns(text)}\n`));
    return 1;
  }
  io.stdout.write(forStream(io.stdout, text + "\n"));
  return 0;
}

export async function runEvalCommand(args: string[], io: Io = processIo()): Promise<number> {
  try {
    const { values, positionals } = parseOptions({
      args,
      // Repeatable only to be counted: a second -e is a second program, which would otherwise replace the first unseen.
      options: { expr: { type: "string", short: "e", multiple: true }, json: { type: "boolean" }, help: { type: "boolean", short: "h" }, ...SANDBOX_OPTIONS },
      allowPositionals: true,
    });
    if (values.help) {
      io.stdout.write(EVAL_USAGE);
      return 0;
    }
    const sources = (values.expr?.length ?? 0) + positionals.length;
    if (sources !== 1) {
      throw new UsageError(sources === 0 ? "no program given: use -e SOURCE, a FILE, or - for stdin" : "give exactly one program: -e SOURCE, a FILE, or -");
    }
    const limits = parseLimits(values.limit);
    const isolation = parseIsolation(values.isolation);
    const ctx = ctxText(values.ctx, values["ctx-file"]);
    const file = positionals[0];
    const source = values.expr?.[0] ?? (file === "-" ? await readStdin(io.stdin, programLimit(limits)) : readInput(file, "file", programLimit(limits)));
    // The context goes as text, parsed as the run's first work (in the worker by default), so
    // one too big to read within the time limit ends the run instead of stalling this thread.
    const result = await evaluate(source, ctx === undefined ? { limits, isolation } : { ctxJson: ctx.text, limits, isolation });
    const problem = ctx !== undefined && !result.ok ? contextJsonProblem(result.error) : null;
    if (problem !== null) throw new UsageError((ctx as { what: string }).what + problem);
    return report(result, io, values.json === true);
  } catch (e) {
    return usageFailure("eval", e, io, EVAL_USAGE);
  }
}

/** Reports a usage mistake (or parseArgs' own complaint) with the command's synopsis (its usage up to the first blank line), and returns exit code 2. */
export function usageFailure(command: string, e: unknown, io: Io, usage?: string): number {
  // parseArgs reports unknown or malformed options as TypeErrors with an ERR_PARSE_ARGS_* code.
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const parseArgsError = typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
  if (!(e instanceof UsageError) && !parseArgsError) throw e;
  const name = command === "" ? "ptc" : `ptc ${command}`;
  const synopsis = usage === undefined ? "" : `${usage.split("\n\n")[0]}\n`;
  io.stderr.write(`${name}: ${forTerminal((e as Error).message)}\n${synopsis}Run '${name} --help' for ${usage === undefined ? "usage" : "the options"}.\n`);
  return 2;
}
