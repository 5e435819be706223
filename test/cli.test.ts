// The `ptc` CLI as users run it. Commands run in-process through the bin's own dispatch
// (runCli), which keeps this file fast; a few tests spawn the built bin to check what only a
// real process shows (shebang, exit status, flushed output). `npm test` builds first (pretest);
// a missing build is made here so the file also runs on its own.
import { execFileSync, spawn } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/commands.js";
import { loadCtx, parseLimits, UsageError } from "../src/cli/eval.js";
import { needsMore } from "../src/cli/repl.js";
import { evaluate, print } from "../src/lisp/evaluate.js";
import { outcome } from "./support/process.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string>; version: string };
const BIN = join(root, pkg.bin.ptc);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `ptc ARGS` in-process with `input` as stdin, through the same dispatch as the bin. */
async function ptc(args: string[], input = ""): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io = { stdin: Readable.from([input]), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** Runs the built bin as a process with the given arguments and stdin, with a hard time limit. */
function spawnPtc(args: string[], input = "", opts: { direct?: boolean } = {}): Promise<Run> {
  const child = opts.direct ? spawn(BIN, args, { cwd: root }) : spawn(process.execPath, [BIN, ...args], { cwd: root });
  const done = outcome(child, 60_000);
  child.stdin.end(input);
  return done;
}

/** How the interpreter prints a literal, so expectations do not hard-code printer details. */
async function edn(source: string): Promise<string> {
  const r = await evaluate(source);
  if (!r.ok) throw new Error(r.error.message);
  return print(r.lisp);
}

let tmp: string;

beforeAll(async () => {
  if (!existsSync(BIN)) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
  tmp = mkdtempSync(join(tmpdir(), "ptc-cli-"));
  // ptc eval and ptc repl run programs in worker threads: started here, not inside a test's time.
  await Promise.all([evaluate("nil", { isolation: "worker" }), evaluate("nil", { isolation: "worker" })]);
}, 300_000);

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe.concurrent("ptc eval", () => {
  it("evaluates -e and prints EDN on stdout, keeping floats as floats", async () => {
    const r = await ptc(["eval", "-e", "(/ 10 4)"]);
    expect(r).toEqual({ code: 0, stdout: "2.5\n", stderr: "" });
    const f = await ptc(["eval", "--expr", "(* 2.0 3)"]);
    expect(f.stdout).toBe("6.0\n");
  });

  it("reads a program from a file", async () => {
    const file = join(tmp, "prog.clj");
    writeFileSync(file, "(defn sq [x] (* x x))\n(sq 12)\n");
    const r = await ptc(["eval", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("144\n");
  });

  it("reads a program from stdin with -", async () => {
    const r = await ptc(["eval", "-"], "(def n 6)\n(* n 7)");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("42\n");
  });

  // Node ends a stream over a folder at once, with no error: `ptc eval - < dir` ran an empty program, printed nil and exited 0.
  it("refuses a folder as standard input with -", async () => {
    const fd = openSync(tmp, "r");
    try {
      let stdout = "";
      let stderr = "";
      const io = { stdin: Object.assign(Readable.from([]), { fd }), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } };
      expect(await runCli(["eval", "-"], io)).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(/^ptc eval: standard input is a folder, not a program\n/);
    } finally {
      closeSync(fd);
    }
  });

  it("passes --ctx as data/ keys, keywordizing object keys", async () => {
    const r = await ptc(["eval", "-e", "data/order", "--ctx", '{"order": {"id": 7, "total": 2.5, "tags": ["a"]}}']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe((await edn('{:id 7 :total 2.5 :tags ["a"]}')) + "\n");
  });

  it("reads --ctx-file", async () => {
    const file = join(tmp, "ctx.json");
    writeFileSync(file, JSON.stringify({ n: 41 }));
    const r = await ptc(["eval", "-e", "(inc data/n)", "--ctx-file", file]);
    expect(r.stdout).toBe("42\n");
  });

  it("prints plain JSON with --json, and println output on stderr then", async () => {
    const r = await ptc(["eval", "--json", "-e", '(println "note") data/x', "--ctx", '{"x": {"a": [1, 2.5]}}']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ a: [1, 2.5] });
    expect(r.stderr).toBe("note\n");
  });

  // JSON.stringify writes them as null: [(/ 1.0 0) 1] printed [null,1] with exit 0.
  it("refuses with --json a result holding a number JSON cannot write (Infinity, NaN) instead of printing null", async () => {
    for (const [source, where] of [["[(/ 1.0 0) 1]", "Infinity at [0]"], ["{:a {:b ##NaN}}", "NaN at .a.b"], ["(/ -1.0 0)", "-Infinity"]]) {
      const r = await ptc(["eval", "--json", "--isolation", "none", "-e", source]);
      expect([r.code, r.stdout, r.stderr]).toEqual([1, "", `ptc eval: the result holds ${where}, which JSON cannot write: run without --json to print it\n`]);
    }
    const edn = await ptc(["eval", "--isolation", "none", "-e", "[(/ 1.0 0) 1]"]);
    expect([edn.code, edn.stdout]).toEqual([0, "[##Inf 1]\n"]);
  });

  // JSON has string keys only: {:a 1 "a" 2} printed {"a":2}, one value lost with exit 0.
  it("refuses with --json a map whose keys are one JSON key (:a and \"a\", 1 and \"1\") instead of dropping one", async () => {
    for (const [source, keys] of [['{:a 1 "a" 2}', ':a and "a", which are both "a"'], ['[{1 :x "1" :y}]', '1 and "1", which are both "1"']]) {
      for (const isolation of ["none", "worker"]) {
        const r = await ptc(["eval", "--json", "--isolation", isolation, "-e", source]);
        expect([r.code, r.stdout]).toEqual([1, ""]);
        expect(r.stderr).toBe(`ptc eval: the result cannot be written as JSON: a map crossing out of the program has the keys ${keys} for the host; run without --json to print it\n`);
      }
    }
    const edn = await ptc(["eval", "--isolation", "none", "-e", '{:a 1 "a" 2}']);
    expect([edn.code, edn.stdout]).toEqual([0, '{:a 1 "a" 2}\n']);
  });

  it("shows hidden context (_ keys) as stand-ins in println output and errors, and the value as it is", async () => {
    const ctx = ["--ctx", '{"_tok": "K7Z2Q9-B3M8X4"}'];
    const r = await ptc(["eval", "-e", '(println data/_tok) (str data/_tok "!")', ...ctx]);
    expect(r).toEqual({ code: 0, stdout: '<hidden string from data/_tok>\n"K7Z2Q9-B3M8X4!"\n', stderr: "" });
    const e = await ptc(["eval", "-e", "(+ 1 data/_tok)", ...ctx]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("got string <hidden string from data/_tok>");
    expect(e.stderr).not.toMatch(/[\uE000\uE001]/);
  });

  // A failure's reason is reported as an agent's run reports it (step.fail), its hidden values
  // stand-ins: `fail: "bad K7Z2Q9-B3M8X4"` went to stderr beside a println that showed a stand-in.
  it.each([
    [[], '(fail (str "bad " data/_tok))', "fail: <hidden string derived from data/_tok>\n"],
    [[], "(fail {:why :expired :tok data/_tok})", "fail: {:why :expired :tok <hidden string from data/_tok>}\n"],
    [["--json"], "(fail {:why :expired :tok data/_tok})", 'fail: {"why":"expired","tok":"<hidden string from data/_tok>"}\n'],
  ])("shows a failure's reason computed from hidden context as stand-ins (%j %s)", async (flags, program, stderr) => {
    for (const isolation of ["none", "worker"]) {
      const r = await ptc(["eval", ...flags, "--isolation", isolation, "-e", program, "--ctx", '{"_tok": "K7Z2Q9-B3M8X4"}']);
      expect(r).toEqual({ code: 1, stdout: "", stderr });
    }
  });

  it("prints println output on stdout before the value", async () => {
    const r = await ptc(["eval", "-e", '(println "a" 1) (println "b") :done']);
    expect(r.stdout).toBe("a 1\nb\n:done\n");
  });

  it("writes what a program prints, and its error text, safe for a terminal at one; as it is to a file or pipe", async () => {
    // ESC ] 0 ; ... BEL retitles the window; ESC [ 2 J clears the screen.
    const program = '(println "\\u001b]0;owned\\u0007\\u001b[2J") (throw (ex-info "\\u001b[31mred" {}))';
    const run = async (tty: boolean): Promise<Run> => {
      let stdout = "";
      let stderr = "";
      const io = { stdin: Readable.from([""]), stdout: { isTTY: tty, write: (s: string) => (stdout += s) }, stderr: { isTTY: tty, write: (s: string) => (stderr += s) } };
      const code = await runCli(["eval", "-e", program], io);
      return { code, stdout, stderr };
    };
    const terminal = await run(true);
    expect(terminal.code).toBe(1);
    expect(terminal.stdout + terminal.stderr).not.toContain("\x1b");
    expect(terminal.stdout).not.toContain("\x07");
    expect(terminal.stdout).toBe("\\x1B]0;owned\\x07\\x1B[2J\n");
    expect(terminal.stderr).toMatch(/^exception: \\x1B\[31mred/);
    const piped = await run(false);
    expect(piped.stdout).toBe("\x1b]0;owned\x07\x1b[2J\n");
    expect(piped.stderr.startsWith("exception: \x1b[31mred")).toBe(true);
  });

  it("writes the result and a (fail ...) value safe for a terminal too: the printer leaves C1 controls (CSI, U+009B) as they are", async () => {
    const run = async (tty: boolean, args: string[]): Promise<Run> => {
      let stdout = "";
      let stderr = "";
      const io = { stdin: Readable.from([""]), stdout: { isTTY: tty, write: (s: string) => (stdout += s) }, stderr: { isTTY: tty, write: (s: string) => (stderr += s) } };
      const code = await runCli(["eval", ...args], io);
      return { code, stdout, stderr };
    };
    // Host data (a scraped page in the context) shown as the result: CSI 2 J clears the screen.
    const ctx = ["--ctx", JSON.stringify({ page: "a\u009b2Jb" })];
    for (const json of [[], ["--json"]]) {
      const value = await run(true, [...ctx, ...json, "-e", "data/page"]);
      expect(value.code).toBe(0);
      expect(value.stdout).toBe('"a\\x9B2Jb"\n');
      const failed = await run(true, [...ctx, ...json, "-e", "(fail data/page)"]);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toBe('fail: "a\\x9B2Jb"\n');
      expect((await run(false, [...ctx, ...json, "-e", "data/page"])).stdout).toBe('"a\u009b2Jb"\n');
    }
  });

  it("reports a program error on stderr with kind, position and caret, exit 1", async () => {
    const r = await ptc(["eval", "-e", '(let [x 1]\n  (+ x "a"))']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.split("\n");
    expect(lines[0]).toMatch(/^type_error: .*\(line 2, column 3\)$/);
    expect(lines[1]).toBe('2 |   (+ x "a"))');
    expect(lines[2]).toBe("  |   ^");
  });

  it("reports a read error with the opener's position", async () => {
    const r = await ptc(["eval", "-"], "(+ 1\n   (* 2 3)");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^parse_error: .*\(line 1, column 1\)\n1 \| \(\+ 1\n {2}\| \^/);
  });

  it("exits 1 with the reason on stderr when the program ends with (fail ...)", async () => {
    const r = await ptc(["eval", "-e", '(fail {:reason "no data"})']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('fail: {:reason "no data"}\n');
  });

  it("applies --limit overrides", async () => {
    const r = await ptc(["eval", "-e", "(loop [i 0] (if (< i 100) (recur (inc i)) i))", "--limit", "maxLoopIterations=10"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^loop_limit_exceeded: /);
    const ok = await ptc(["eval", "-e", "(loop [i 0] (if (< i 100) (recur (inc i)) i))", "--limit", "maxLoopIterations=1_000"]);
    expect(ok.stdout).toBe("100\n");
  });

  it("rejects bad JSON, a non-object ctx, unknown limits and missing files with exit 2", async () => {
    const bad = await ptc(["eval", "-e", "1", "--ctx", "{oops"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^ptc eval: --ctx is not valid JSON/);
    const arr = await ptc(["eval", "-e", "1", "--ctx", "[1]"]);
    expect(arr.code).toBe(2);
    expect(arr.stderr).toMatch(/must be a JSON object/);
    const limit = await ptc(["eval", "-e", "1", "--limit", "fuel=1"]);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toMatch(/unknown limit 'fuel'; known limits: timeoutMs/);
    const missing = await ptc(["eval", join(tmp, "nope.clj")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no such file/);
  });

  it("refuses a program or context file that is not UTF-8, saying where, instead of replacing its characters; reads one with a BOM", async () => {
    const ctx = join(tmp, "latin1.json");
    writeFileSync(ctx, Buffer.from('{"city":\n "Z\xfcrich"}', "latin1"));
    const r = await ptc(["eval", "--ctx-file", ctx, "-e", "data/city"]);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toContain(`ptc eval: --ctx-file ${ctx} is not UTF-8 text: byte 0xFC at line 2, column 4`);
    const program = join(tmp, "latin1.clj");
    writeFileSync(program, Buffer.from('(str "caf\xe9")', "latin1"));
    const p = await ptc(["eval", program]);
    expect(p).toMatchObject({ code: 2, stdout: "" });
    expect(p.stderr).toContain(`ptc eval: ${program} is not UTF-8 text: byte 0xE9 at line 1, column 10`);
    const bom = join(tmp, "bom.json");
    writeFileSync(bom, '\ufeff{"a": 1}');
    expect(await ptc(["eval", "--ctx-file", bom, "-e", "data/a"])).toEqual({ code: 0, stdout: "1\n", stderr: "" });
  });

  it("needs exactly one program", async () => {
    const none = await ptc(["eval"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no program given/);
    const two = await ptc(["eval", "-e", "1", "file.clj"]);
    expect(two.code).toBe(2);
    // A second -e is a second program (as with sed or perl), not a replacement for the first.
    const repeated = await ptc(["eval", "-e", '(println "first")', "-e", "2"]);
    expect(repeated).toMatchObject({ code: 2, stdout: "" });
    expect(repeated.stderr).toMatch(/give exactly one program/);
    const unknown = await ptc(["eval", "--bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--bogus'/);
  });
});

describe.concurrent("ptc repl", () => {
  it("keeps definitions between entries and joins multi-line entries", async () => {
    const r = await ptc(["repl"], "(defn sq [x]\n  (* x x))\n(sq 7)\n\n(def xs [1\n2])\n(sq (+ 1 (sq 2)))\nxs\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("#'sq\n49\n#'xs\n25\n[1 2]\n");
  });

  it("at a terminal, Ctrl-C stops the entry that is running and the session goes on", { timeout: 120_000 }, async () => {
    // A terminal's input: readline reads keys from it, and Ctrl-C (\x03) is its SIGINT.
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const terminal = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
    let stdout = "";
    terminal.on("data", (d: Buffer) => (stdout += d.toString()));
    let stderr = "";
    const io = { stdin, stdout: terminal, stderr: { write: (s: string) => (stderr += s) } };
    const done = runCli(["repl", "--limit", "timeoutMs=20000", "--limit", "maxFuel=1e15", "--limit", "maxLoopIterations=1e15"], io);
    stdin.write("(loop [i 0] (recur (inc i)))\r");
    // Pressed until the run ends: a press before the entry starts only says how to leave.
    while (!stderr.includes("\n")) {
      stdin.write("\x03");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(stderr).toMatch(/^aborted: /);
    stdin.write("(+ 1 2)\r");
    stdin.end();
    expect(await done).toBe(0);
    expect(stdout).toMatch(/\n3\r?\n/);
  });

  it("shows errors with the caret and keeps going; a failed entry defines nothing", async () => {
    const r = await ptc(["repl"], '(def a 1) (+ a "x")\n(def b 2)\nb\na\n');
    expect(r.stdout).toBe("#'b\n2\n");
    expect(r.stderr).toMatch(/^type_error: .*\n1 \| \(def a 1\) \(\+ a "x"\)\n {2}\| {11}\^/);
    expect(r.stderr).toMatch(/unbound_var/);
  });

  it("reports an error's line as the script's line, not the entry's: in the entry, in a function an earlier entry defined, and a delimiter's opening line", async () => {
    const r = await ptc(["repl"], '(def a 1)\n(+ 1\n  "x")\n(def b 2)\n\n(foo)\n');
    expect(r.stderr).toContain('(line 2, column 1)\n2 | (+ 1\n  | ^\n');
    expect(r.stderr).toContain("(line 6, column 2)\n6 | (foo)\n  |  ^\n");
    const earlier = await ptc(["repl"], ':help\n(def a 1)\n\n(defn f [x]\n  (+ x "s"))\n(f 1)\n');
    expect(earlier.stderr).toContain('(in code defined by an earlier program) (line 5, column 3)\n5 |   (+ x "s"))\n  |   ^\n');
    const mismatched = await ptc(["repl"], "(def a 1)\n\n(+ 1\n 2]\n");
    expect(mismatched.stderr).toMatch(/^parse_error: mismatched delimiter: '\(' opened at line 3, column 1 is closed by '\]' \(line 4, column 3\)\n4 \| {2}2\]\n/);
    // Left open when the input ends: where it was opened, in the script.
    const open = await ptc(["repl"], "(def a 1)\n\n[1 2\n(+ 1\n");
    expect(open.stderr).toMatch(/the innermost opened at line 4, column 1\) \(line 4, column 1\)\n4 \| \(\+ 1\n/);
    // Ten lines on, the gutter widens and the caret stays under the column.
    const wide = await ptc(["repl"], `${"\n".repeat(11)}(foo)\n`);
    expect(wide.stderr).toContain("(line 12, column 2)\n12 | (foo)\n   |  ^\n");
  });

  it(":defs shows a docstring's terminal controls written out at a terminal, not acted on", async () => {
    let out = "";
    const stdout = { isTTY: true, write: (t: string) => ((out += t), true) };
    const io = { stdin: Readable.from(['(defn f "doc \\u001b]0;pwned\\u0007 \\u009b2J" [x] x)\n:defs\n']), stdout, stderr: { write: () => true } };
    expect(await runCli(["repl"], io)).toBe(0);
    expect(out).toContain("f — doc \\x1B]0;pwned\\x07 \\x9B2J\n");
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\x1b\x07\x9b]/);
  });

  it("answers :help and :defs, evaluates other keywords, stops at :quit", async () => {
    const r = await ptc(["repl"], ":help\n(def k 1)\n:defs\n:k\n:quit\n(def never 1)\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(":quit");
    expect(r.stdout).toContain("#'k\nk\n:k\n");
    expect(r.stdout).not.toContain("never");
  });

  it("reports an entry left unfinished at end of input, and exits 1 for it", async () => {
    const r = await ptc(["repl"], "(+ 1\n");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^parse_error: unbalanced/);
  });

  it("given a script on stdin, exits 1 when an entry failed (as ptc eval does), though the later entries still run", async () => {
    for (const script of ['(/ 1 0)\n(+ 1 2)\n', '(fail "no")\n(+ 1 2)\n', "(def a 1)\n(undefined-fn)\na\n"]) {
      const r = await ptc(["repl"], script);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/\n?(3|1)\n$/);
    }
    expect((await ptc(["repl"], "(def a 1)\n(+ a 2)\n")).code).toBe(0);
  });

  it("refuses a script piped in that is not UTF-8, saying where, as ptc eval does, instead of replacing its characters", async () => {
    // Latin-1 é on line 2; the entry before it runs, none from the bad line on.
    const bytes = Buffer.from('(+ 1 2)\n(def n "caf\xe9")\n(println n)\n', "latin1");
    let stdout = "";
    let stderr = "";
    const io = { stdin: Readable.from([bytes]), stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } };
    expect(await runCli(["repl"], io)).toBe(2);
    expect(stdout).toBe("3\n");
    expect(stderr).toBe("ptc repl: standard input is not UTF-8 text: byte 0xE9 at line 2, column 12 (save it as UTF-8)\n");
    // Split inside a character and with Windows line ends, UTF-8 reads as it is; a BOM is dropped.
    const text = Buffer.from('\ufeff(def n "café ☕")\r\n(count n)\r\n', "utf8");
    const split = { ...io, stdin: Readable.from([text.subarray(0, 14), text.subarray(14, 22), text.subarray(22)]) };
    stdout = "";
    stderr = "";
    expect(await runCli(["repl"], split)).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toBe("#'n\n6\n");
  });

  it("accepts --ctx", async () => {
    const r = await ptc(["repl", "--ctx", '{"n": 2}'], "(* data/n 21)\n");
    expect(r.stdout).toBe("42\n");
  });

  it("shows a large result in part, saying so", async () => {
    const r = await ptc(["repl", "--limit", "timeoutMs=1e9"], "(vec (range 100000))\n(apply str (repeat 5000 \"ab\"))\n[1 2 3]\n");
    const [vector, note, text, textNote, small] = r.stdout.trimEnd().split("\n");
    expect(vector.startsWith("[0 1 2 ")).toBe(true);
    expect(vector.endsWith(" 99 ...]")).toBe(true);
    expect(note).toBe(";; shown in part (100,000 items); use count, take or get to look at parts of it");
    expect(text.length).toBeLessThanOrEqual(4_000);
    expect(textNote).toBe(";; shown in part (10,000 characters); use count or subs to look at parts of it");
    expect(small).toBe("[1 2 3]");
  });
});

describe.concurrent("ptc", () => {
  it("prints the version and help", async () => {
    const v = await ptc(["--version"]);
    expect(v).toEqual({ code: 0, stdout: `ptc-lisp ${pkg.version}\n`, stderr: "" });
    const h = await ptc(["--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^Usage: ptc <command>/);
    const e = await ptc(["eval", "--help"]);
    expect(e.stdout).toMatch(/^Usage: ptc eval/);
  });

  it("answers ptc help COMMAND with that command's help, as ptc COMMAND --help does", async () => {
    for (const cmd of ["eval", "repl", "compare", "view", "proxy", "reference", "demo", "trace"]) {
      const viaHelp = await ptc(["help", cmd]);
      const viaFlag = await ptc([cmd, "--help"]);
      expect(viaHelp).toEqual(viaFlag);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toMatch(new RegExp(`^usage: ptc ${cmd}`, "i"));
    }
    const unknown = await ptc(["help", "evl"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'evl'/);
  });

  // --help and -h before a command name were refused with exit 2 ("Unexpected argument 'eval'").
  it("answers ptc --help COMMAND and ptc -h COMMAND as ptc help COMMAND", async () => {
    for (const flag of ["--help", "-h"]) {
      for (const cmd of ["eval", "proxy", "reference"]) {
        const r = await ptc([flag, cmd]);
        expect(r).toEqual(await ptc(["help", cmd]));
        expect(r.code).toBe(0);
      }
      const unknown = await ptc([flag, "evl"]);
      expect([unknown.code, unknown.stdout]).toEqual([2, ""]);
      expect(unknown.stderr).toMatch(/unknown command 'evl'/);
    }
  });

  it("rejects unknown commands and no command with exit 2", async () => {
    const r = await ptc(["evl"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'evl'/);
    expect((await ptc([])).code).toBe(2);
  });

  it("is an executable bin with a shebang", { timeout: 60_000 }, async () => {
    accessSync(BIN, constants.X_OK);
    const r = await spawnPtc(["eval", "-e", "(+ 40 2)"], "", { direct: true });
    expect(r.stdout).toBe("42\n");
  });

  it("sets the process exit status and writes all output when run as a process", { timeout: 180_000 }, async () => {
    const failed = await spawnPtc(["eval", "-"], '(println "before") (+ 1 "a")');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("before\n");
    expect(failed.stderr).toMatch(/^type_error: /);
    const usage = await spawnPtc(["nope"]);
    expect(usage.code).toBe(2);
    // (A time limit no loaded machine meets: the test is about output, not speed.)
    const big = await spawnPtc(["eval", "-e", "(vec (range 100000))", "--limit", "timeoutMs=1e9"]);
    expect(big.code).toBe(0);
    // ptc eval prints the whole value for pipes (the REPL cuts it for a person).
    expect(big.stdout.length).toBeGreaterThan(500_000);
  });

  it("ends quietly when its reader stops early (ptc ... | head -1), with no EPIPE stack trace", { timeout: 120_000 }, async () => {
    // Far more output than a pipe holds, so writes go on after the reader has gone.
    const child = spawn(process.execPath, [BIN, "eval", "-e", "(vec (range 200000))", "--limit", "timeoutMs=1e9"], { cwd: root });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it.skipIf(!existsSync("/dev/full"))("says it cannot write its output to a full disk, with exit 1 and no stack trace", { timeout: 120_000 }, async () => {
    const full = openSync("/dev/full", "w");
    const child = spawn(process.execPath, [BIN, "eval", "-e", "(+ 1 2)"], { cwd: root, stdio: ["ignore", full, "pipe"] });
    closeSync(full);
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("ptc: cannot write to standard output (ENOSPC): the output is lost\n");
    expect(code).toBe(1);
  });

  it("runs the program in a worker from the built JS by default, with the same output as --isolation none", async () => {
    const program = '(println "hi") (def xs (mapv inc (range 5))) {:sum (reduce + xs) :xs xs}';
    const [isolated, inProcess] = [await spawnPtc(["eval", "-e", program]), await spawnPtc(["eval", "--isolation", "none", "-e", program])];
    expect(isolated).toEqual(inProcess);
    expect(isolated.stdout).toBe("hi\n{:sum 15 :xs [1 2 3 4 5]}\n");
    const spin = await spawnPtc(["eval", "--limit", "timeoutMs=300", "--limit", "maxFuel=1e15", "--limit", "maxLoopIterations=1e15", "-e", "(loop [i 0] (recur (inc i)))"]);
    expect(spin.code).toBe(1);
    expect(spin.stderr).toMatch(/^timeout: the program ran longer than 300 ms/);
    const bad = await spawnPtc(["eval", "--isolation", "thread", "-e", "1"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--isolation must be worker or none");
  }, 240_000);
});

describe("ptc reference", () => {
  it("prints the language reference generated from the registry", async () => {
    const r = await ptc(["reference"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("## Special forms");
    for (const name of ["sum-by", "pmap", "where", "extract-int"]) expect(r.stdout).toContain(name);
  });

  it("answers --help with its usage, not the reference, and refuses arguments", async () => {
    const h = await ptc(["reference", "--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^usage: ptc reference \[--builtins\]\n/);
    expect(h.stdout).not.toContain("## Special forms");
    const extra = await ptc(["reference", "maps"]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/takes no arguments/);
    const all = await ptc(["reference", "--builtins"]);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain("sum-by [key coll] - Sum of (key item) over coll");
    expect(all.stdout).toMatch(/^ {2}\(sum-by .* ;=> /m);
  });
});

describe("every command writes through the Io it is given", () => {
  // A host running the CLI in-process (as these tests do) gets all of a command's output, and
  // none of it escapes to the process's own streams.
  it("ptc demo and ptc trace show, their output and their errors", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ptc-cli-io-"));
    try {
      const stray: string[] = [];
      const spies = [process.stdout, process.stderr].map((s) => {
        const original = s.write.bind(s);
        s.write = ((chunk: string) => (stray.push(String(chunk)), true)) as typeof s.write;
        return () => void (s.write = original);
      });
      let runs: Record<string, Run>;
      const file = join(dir, "run.json");
      try {
        runs = {
          list: await ptc(["demo", "--list"]),
          help: await ptc(["demo", "--help"]),
          bad: await ptc(["demo", "nope"]),
          demo: await ptc(["demo", "reviews", "--trace-out", file]),
          show: await ptc(["trace", "show", file]),
          turn: await ptc(["trace", "show", file, "--turn", "1", "--messages"]),
          missing: await ptc(["trace", "show", join(dir, "none.json")]),
          usage: await ptc(["trace"]),
        };
      } finally {
        for (const restore of spies) restore();
      }
      expect(stray).toEqual([]);
      expect(runs.list.stdout).toContain("reviews");
      expect(runs.help.stdout).toMatch(/^usage: ptc demo/);
      expect(runs.bad).toMatchObject({ code: 2, stderr: expect.stringContaining('no example "nope"') });
      expect(runs.demo).toMatchObject({ code: 0, stdout: expect.stringContaining("Matches the expected answer.") });
      expect(runs.show).toMatchObject({ code: 0, stdout: expect.stringContaining("── Turn 1:") });
      expect(runs.turn.stdout).toMatch(/^=== message 1 of/);
      expect(runs.missing).toMatchObject({ code: 2, stderr: expect.stringContaining("cannot read") });
      expect(runs.usage).toMatchObject({ code: 2, stderr: expect.stringContaining("ptc trace show FILE") });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the README's CLI examples", () => {
  // Each `# stops: KIND` comment in the README's CLI block is a claim about what happens.
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const claims = [...readme.matchAll(/^npx ptc (eval .*?)\s+# stops: (\w+)/gm)].map((m) => ({ command: m[1], kind: m[2] }));

  it("finds the limit examples", () => {
    expect(claims.map((c) => c.kind)).toEqual(["loop_limit_exceeded", "timeout"]);
  });

  for (const { command, kind } of claims) {
    it(`ptc ${command} stops with ${kind}`, async () => {
      // The README quotes with single quotes; split outside them as a shell would.
      const args = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
      // A claim that another limit stops the program must not depend on the machine being fast
      // enough to reach it within the default time limit.
      const r = await ptc(kind === "timeout" ? args : [...args, "--limit", "timeoutMs=1e9"]);
      expect(r.code).toBe(1);
      expect(r.stderr.split(":")[0]).toBe(kind);
    });
  }
});

describe("the package", () => {
  it("resolves import { evaluate } from \"ptc-lisp\" inside the checkout (self-reference through exports)", () => {
    const script = 'import { evaluate, print } from "ptc-lisp"; const r = await evaluate("(+ 1 2 3)"); process.stdout.write(r.ok ? print(r.lisp) : "error " + r.error.kind);';
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: join(root, "test"), encoding: "utf8" });
    expect(out).toBe("6");
  });
});

describe("CLI helpers", () => {
  it("needsMore waits for closers, ignoring brackets in strings, comments and char literals", () => {
    expect(needsMore("(+ 1")).toBe(true);
    expect(needsMore("(+ 1 2)")).toBe(false);
    expect(needsMore('(str "(")')).toBe(false);
    expect(needsMore('(str "abc')).toBe(true);
    expect(needsMore('(str "a\\"")')).toBe(false);
    expect(needsMore("(str \\( 1)")).toBe(false);
    expect(needsMore("(+ 1 ; )\n")).toBe(true);
    expect(needsMore("{:a [1 #{2}]}")).toBe(false);
    expect(needsMore(")")).toBe(false);
    expect(needsMore('#"[a-z"')).toBe(false);
  });

  it("parseLimits checks names and values", () => {
    expect(parseLimits(["timeoutMs=5000", "maxFuel=1e6"])).toEqual({ timeoutMs: 5000, maxFuel: 1e6 });
    expect(() => parseLimits(["timeoutMs"])).toThrow(UsageError);
    expect(() => parseLimits(["timeoutMs=-1"])).toThrow(/positive number/);
    expect(() => parseLimits(["timeoutMs=abc"])).toThrow(/positive number/);
    expect(() => parseLimits(["__proto__=1"])).toThrow(/unknown limit/);
  });

  it("loadCtx accepts objects only and not both sources", () => {
    expect(loadCtx('{"a": 1}', undefined)).toEqual({ a: 1 });
    expect(loadCtx(undefined, undefined)).toBeUndefined();
    expect(() => loadCtx("null", undefined)).toThrow(/must be a JSON object/);
    expect(() => loadCtx("{}", "f.json")).toThrow(/not both/);
  });
});
