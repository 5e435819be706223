// The traps a new user fell into on the command line: a command started without what it needs
// (it must refuse with exit 2 and its usage, never run half-configured), and a file handed to
// the wrong command (it must name the command that reads it).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { runCli } from "../src/cli/commands.js";
import { stopsWhenUnanswered } from "../src/cli/compare.js";
import { LlmError } from "../src/llm/errors.js";
import type { Llm } from "../src/llm/types.js";
import { decodeText, TextInputError } from "../src/json/text-input.js";
import { constants } from "node:buffer";
import { saveRun } from "../src/agent/resume.js";
import { runStateToJson } from "../src/trace/run-state.js";
import { SubAgent } from "../src/agent/subagent.js";
import { scriptedLlm } from "../src/llm/scripted.js";
import { chatsJsonl, compareReportJson, savedExample } from "./viewer/fixtures.js";
import { MAX_INPUT_BYTES } from "../src/viewer/input.js";
import { CONFIG_FILE_LIMIT } from "../src/proxy/config-file.js";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `ptc ARGS` in-process. */
async function ptc(args: string[]): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io = { stdin: Readable.from([""]), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

const dir = mkdtempSync(join(tmpdir(), "ptc-traps-"));
const file = (name: string): string => join(dir, name);

beforeAll(async () => {
  writeFileSync(file("run.json"), await savedExample("recovery"));
  writeFileSync(file("report.json"), await compareReportJson());
  writeFileSync(file("chats.jsonl"), chatsJsonl());
  writeFileSync(file("experiment.json"), JSON.stringify({ experiment: [] }));
  writeFileSync(file("no-upstream.json"), JSON.stringify({}));
  writeFileSync(file("empty-token"), "\n");
  const agent = SubAgent.create({ prompt: "Count", output: z.number(), maxTurns: 1 });
  const step = await SubAgent.run(agent, { llm: scriptedLlm(["```clojure\n(println 1)\n```"]) });
  writeFileSync(file("state.json"), runStateToJson(saveRun(step, agent)));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Number() reads much that is no count: "1e3" as 1000, "0x10" as 16, "1.0" as 1, " 2" as 2, so
// --turn 0x10 showed turn 16 and --runs 1e2 ran a hundred times.
describe("a count on the command line is digits only", () => {
  it.each([
    [["trace", "show", "RUN", "--turn", "1e0"], "--turn"],
    [["trace", "show", "RUN", "--turn", "0x1"], "--turn"],
    [["trace", "show", "RUN", "--turn", "1.0"], "--turn"],
    [["trace", "show", "RUN", "--turn", " 1"], "--turn"],
    [["trace", "show", "RUN", "--compressed", "--max-turns", "2e1"], "--max-turns"],
    [["compare", "CHATS", "--limit", "1e0"], "--limit"],
    [["compare", "--experiment", "--runs", "0x1"], "--runs"],
    [["demo", "--live", "--timeout", "1e4"], "--timeout"],
  ])("ptc %j refuses %s with exit 2", async (args, flag) => {
    const r = await ptc(args.map((a) => (a === "RUN" ? file("run.json") : a === "CHATS" ? file("chats.jsonl") : a)));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(flag);
    expect(r.stderr).toMatch(/whole number/);
  });
});

describe("a command without what it needs refuses with exit 2 and its usage", () => {
  it.each([
    [["eval"], "usage: ptc eval"],
    [["view"], "usage: ptc view FILE"],
    [["trace", "show"], "usage: ptc trace show FILE"],
    [["compare"], "usage: ptc compare FILE"],
    [["proxy"], "usage: ptc proxy --upstream URL"],
    [["proxy", "--port", "0", "--db", ":memory:"], "usage: ptc proxy --upstream URL"],
    // Two homes for the state: one would be ignored unseen.
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--state-dir", dir], "give --state-dir or --db, not both"],
    // An empty token file (a token written from an unset variable) would serve with the admin routes off, unsaid.
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--admin-token-file", file("empty-token")], `the admin token file ${file("empty-token")} is empty`],
    // So is an empty --admin-token "$TOKEN" (the variable unset), behind a warning about ps that says nothing of it.
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--admin-token", ""], "--admin-token is empty"],
    // The file was ignored without a word: its token was answered 401 while the argument's worked.
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--admin-token", "a", "--admin-token-file", file("empty-token")], "give --admin-token or --admin-token-file, not both"],
    // Past the longest timer Node keeps, the drain waited 1 ms: in-flight requests were cut at once on SIGTERM.
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--drain-timeout", "99999999999"], '--drain-timeout must be a number of milliseconds from 0 to 2147483647, got "99999999999"'],
    // Read as Number(), an empty value (--drain-timeout "$UNSET") was 0: in-flight requests cut at once on SIGTERM.
    // (An address it cannot listen on: accepted, the proxy fails to start instead of serving.)
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--host", "192.0.2.1", "--port", "0", "--db", ":memory:", "--drain-timeout", ""], '--drain-timeout must be a number of milliseconds from 0 to 2147483647, got ""'],
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--host", "192.0.2.1", "--port", "0", "--db", ":memory:", "--drain-timeout", " "], '--drain-timeout must be a number of milliseconds from 0 to 2147483647, got " "'],
  ])("ptc %s", async (args, usage) => {
    const r = await ptc(args);
    expect(r.code).toBe(2);
    expect(r.stderr.toLowerCase()).toContain(usage.toLowerCase());
    expect(r.stdout).not.toContain("listening");
  });

  it("ptc proxy on an address it cannot listen on says so, without the host's error class", async () => {
    // 192.0.2.1 is a documentation address (TEST-NET-1), never this machine's.
    const r = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--host", "192.0.2.1", "--port", "0", "--db", ":memory:"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("ptc proxy: cannot listen on 192.0.2.1:0 (EADDRNOTAVAIL)\n");
  });

  it("ptc proxy with a config file that names no upstream stops instead of serving requests that must fail", async () => {
    const r = await ptc(["proxy", "--config", file("no-upstream.json"), "--port", "0", "--db", ":memory:"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no upstream: ${file("no-upstream.json")} names none`);
    expect(r.stderr).toContain("usage: ptc proxy --upstream URL");
  });
});

describe("a file given to the wrong command names the right one", () => {
  it("ptc trace show on a compare report points to ptc view", async () => {
    const r = await ptc(["trace", "show", file("report.json")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file("report.json")} is a ptc compare report: ptc view ${file("report.json")} shows it`);
    expect(r.stderr).not.toMatch(/Invalid input/);
  });

  it("ptc trace show on transcripts points to ptc compare, on experiment results says nothing reads them", async () => {
    expect((await ptc(["trace", "show", file("chats.jsonl")])).stderr).toContain(`ptc compare ${file("chats.jsonl")} measures`);
    expect((await ptc(["trace", "show", file("experiment.json")])).stderr).toContain("goal-experiment results");
  });

  it("ptc compare measures a recorded run (interpreter-summaries among its strategies) and points a report to view", async () => {
    const run = await ptc(["compare", file("run.json")]);
    expect(run.stderr).not.toContain("is a recorded agent run");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout, run.stdout).toContain("interpreter-summaries");
    const report = await ptc(["compare", file("report.json")]);
    expect(report.code).toBe(2);
    expect(report.stderr).toContain(`ptc view ${file("report.json")} shows it`);
  });

  it("ptc compare warns of a tool result without its call, naming file and line, and compares the conversation as recorded", async () => {
    const ok = { id: "ok", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] };
    const orphan = { id: "orphan", messages: [{ role: "user", content: "do it" }, { role: "tool", tool_call_id: "x1", content: "stray" }, { role: "assistant", content: "done" }] };
    writeFileSync(file("orphan.jsonl"), `${JSON.stringify(ok)}\n${JSON.stringify(orphan)}\n`);
    const run = await ptc(["compare", file("orphan.jsonl"), "--strategy", "sliding-window"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`ptc compare: warning: ${file("orphan.jsonl")}:2: message 1: tool result without its call: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)`);
    expect(run.stderr).not.toContain("orphan.jsonl:1:");
    expect(run.stdout).toContain("2 transcripts");
    expect(run.stdout).toContain(`\ndata problems in 1 of 2 transcripts (compared as recorded):\n  ${file("orphan.jsonl")}:2: message 1: tool result without its call`);
    // The JSON report says it too, not only the terminal.
    const json = await ptc(["compare", file("orphan.jsonl"), "--strategy", "sliding-window", "--json", "-"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ transcripts: 2, dataProblems: [{ id: "orphan", problems: [expect.stringContaining(`${file("orphan.jsonl")}:2: message 1: tool result without its call`)] }] });
  });

  it("ptc compare refuses an output it cannot write before it runs, and a file without transcripts, with exit 2", async () => {
    writeFileSync(file("empty.jsonl"), "");
    writeFileSync(file("one.jsonl"), '{"id":"a","messages":[{"role":"tool","content":"x"}]}\n');
    const cases: Array<[string[], string]> = [
      [["compare", file("empty.jsonl")], `no transcripts in ${file("empty.jsonl")}: nothing to compare`],
      [["compare", file("chats.jsonl"), "--json", join(dir, "missing", "x.json")], `cannot write --json ${join(dir, "missing", "x.json")}: the folder ${join(dir, "missing")} does not exist`],
      [["compare", file("chats.jsonl"), "--html", dir], `cannot write --html ${dir}: it is a folder`],
      [["compare", "--experiment", "--json", join(dir, "missing", "e.json")], `cannot write --json ${join(dir, "missing", "e.json")}`],
    ];
    for (const [args, message] of cases) {
      const r = await ptc(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`ptc compare: ${message}`);
      expect(r.stdout).toBe("");
    }
    // A transcript holding no request to measure is refused as having nothing to compare, not a
    // crash, nor a table of zeros whose 1.000x reads as "no saving".
    const one = await ptc(["compare", file("one.jsonl")]);
    expect([one.code, one.stdout]).toEqual([2, ""]);
    expect(one.stderr).toContain(`ptc compare: ${file("one.jsonl")}: nothing to compare: none of the 1 transcripts has an assistant reply after its first message`);
  });

  it("a run state saved for resuming is shown by trace show and view, not refused", async () => {
    const shown = await ptc(["trace", "show", file("state.json")]);
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("(println 1)");
    const out = file("state.html");
    const viewed = await ptc(["view", file("state.json"), "--out", out]);
    expect(viewed.stderr).toBe("");
    expect(viewed.code).toBe(0);
  });
});

describe("an empty output name is refused before the work", () => {
  // An unset variable (--json "$OUT") gives an empty name: the run (hours with a live model)
  // went ahead and failed at its last step with "cannot write  (ENOENT)" and exit 1.
  it.each([
    [["compare", file("chats.jsonl"), "--json", ""], "ptc compare: cannot write --json : the file name is empty"],
    [["compare", file("chats.jsonl"), "--html", ""], "ptc compare: cannot write --html : the file name is empty"],
    [["demo", "--trace-out", ""], "ptc demo: cannot write --trace-out : the file name is empty"],
    [["demo", "--record", ""], "ptc demo: cannot write --record : the file name is empty"],
    [["view", file("run.json"), "--out", ""], "ptc view: cannot write --out : the file name is empty"],
  ])("ptc %s", async (args, message) => {
    const r = await ptc(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe("");
  });
});

describe("an output folder that takes no new file is refused before the work", () => {
  // A folder of another user, or a read-only file system: the run went ahead (with a live model,
  // paid for) and failed at its last step with "cannot write ... (EACCES)", exit 1. Root passes
  // every permission, so for root the folder is one the kernel refuses (sysfs).
  const closed = (): string => {
    if (process.getuid?.() === 0) return "/sys";
    const folder = join(dir, "closed");
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o555);
    return folder;
  };
  it.each([
    [(f: string) => ["demo", "--trace-out", join(f, "t.json")], "ptc demo: cannot write --trace-out "],
    [(f: string) => ["compare", file("chats.jsonl"), "--json", join(f, "r.json")], "ptc compare: cannot write --json "],
    [(f: string) => ["view", file("run.json"), "--out", join(f, "p.html")], "ptc view: cannot write --out "],
  ])("%#", async (args, message) => {
    const folder = closed();
    const r = await ptc(args(folder));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${message}${join(folder, "")}`);
    expect(r.stderr).toMatch(/does not take new files \((EACCES|EROFS|EPERM)\)/);
    expect(r.stdout).toBe("");
  });
});

describe("ptc demo's output files are files: - is refused, not written as a file named -", () => {
  // Standard output carries the run's turns; the trace or recording would run into them.
  it.each([["--trace-out"], ["--record"]])("ptc demo %s -", async (flag) => {
    const r = await ptc(["demo", flag, "-"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`ptc demo: ${flag} - would write into the run's turns on standard output: give a file name`);
    expect(r.stdout).toBe("");
    expect(existsSync(join(process.cwd(), "-"))).toBe(false);
  });
});

describe("an output that names an input is refused before it is lost", () => {
  it("ptc demo will not write --record or --trace-out over the recording it replays, nor both to one file", async () => {
    const recording = file("demo-rec.jsonl");
    const made = await ptc(["demo", "--record", recording]);
    expect(made.code, made.stderr).toBe(0);
    const before = readFileSync(recording, "utf8");
    const cases: Array<[string[], string]> = [
      [["demo", "--replay", recording, "--record", recording, "--compress"], `--record ${recording} is the recording to replay: writing there would overwrite it`],
      [["demo", "--replay", recording, "--trace-out", recording], `--trace-out ${recording} is the recording to replay: writing there would overwrite it`],
      [["demo", "--record", file("both.json"), "--trace-out", file("both.json")], "--record and --trace-out name the same file: the trace would overwrite the recording"],
    ];
    for (const [args, message] of cases) {
      const r = await ptc(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`ptc demo: ${message}`);
      expect(readFileSync(recording, "utf8")).toBe(before);
    }
    expect(existsSync(file("both.json"))).toBe(false);
  });
});

describe("a file saved in another encoding", () => {
  it("with a byte-order mark is read by trace show, view and compare; one not UTF-8 is refused with where", async () => {
    const bom = file("bom-run.json");
    writeFileSync(bom, `\ufeff${readFileSync(file("run.json"), "utf8")}`);
    const shown = await ptc(["trace", "show", bom]);
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    const viewed = await ptc(["view", bom, "--out", file("bom.html")]);
    expect(viewed.stderr).toBe("");
    expect(viewed.code).toBe(0);
    const compared = await ptc(["compare", bom, "--strategy", "sliding-window"]);
    expect(compared.code, compared.stderr).toBe(0);
    const latin1 = file("latin1.jsonl");
    writeFileSync(latin1, Buffer.concat([Buffer.from(chatsJsonl()), Buffer.from('{"id":"x","messages":[{"role":"user","content":"Z\xfcrich"}]}\n', "latin1")]));
    const lines = chatsJsonl().split("\n").length;
    for (const command of [["trace", "show"], ["view"], ["compare"]]) {
      const r = await ptc([...command, latin1]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${latin1} is not UTF-8 text: byte 0xFC at line ${lines}, column 50`);
    }
    // ptc proxy's config file: a conversation's settings were kept under "Z\uFFFDrich", which no request names.
    const config = file("latin1-config.json");
    writeFileSync(config, Buffer.from('{\n  "conversations": { "Z\xfcrich": { "disabled": true } }\n}\n', "latin1"));
    const proxy = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--config", config]);
    expect(proxy.code, proxy.stderr).toBe(2);
    expect(proxy.stderr).toContain(`ptc proxy: cannot read the config file ${config}: ${config} is not UTF-8 text: byte 0xFC at line 2, column 24`);
    // With a byte-order mark, as some editors save it, it is read (JSON.parse refused the mark as an unexpected character).
    const bomConfig = file("bom-config.json");
    writeFileSync(bomConfig, `\ufeff${JSON.stringify({ upstream: "http://127.0.0.1:1/v1", drainTimeoutMs: 0 })}`);
    const stop = Promise.resolve();
    const { runProxyCommand } = await import("../src/cli/proxy.js");
    let out = "";
    let err = "";
    const code = await runProxyCommand(["--config", bomConfig, "--port", "0", "--db", ":memory:"], { stdin: Readable.from([""]), stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } }, stop);
    expect(code, err).toBe(0);
    expect(out).toContain("listening on");
  });
});

describe("a JSON input with a mistake", () => {
  it("is named by line and column (not a character position) by every command that reads one", async () => {
    // A hand-edited file: the comma after "a": 1 is missing on line 3.
    const broken = '{\n  "version": 2,\n  "a": 1\n  "b": 2\n}\n';
    const json = file("broken.json");
    writeFileSync(json, broken);
    const jsonl = file("broken.jsonl");
    writeFileSync(jsonl, `${chatsJsonl().trimEnd()}\n{"id": "x" "messages": []}\n`);
    const line = chatsJsonl().trimEnd().split("\n").length + 1;
    const cases: Array<[string[], string]> = [
      [["eval", "--ctx-file", json, "-e", "1"], "line 4, column 3"],
      [["repl", "--ctx-file", json], "line 4, column 3"],
      [["trace", "show", json], "line 4, column 3"],
      [["view", json, "--out", file("broken.html")], "line 4, column 3"],
      [["proxy", "--config", json, "--db", ":memory:"], "line 4, column 3"],
      [["compare", jsonl], `${jsonl}:${line}:12: not valid JSON`],
    ];
    for (const [args, where] of cases) {
      const r = await ptc(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(where);
      expect(r.stderr).not.toContain("position");
    }
    // Cut off at the end: where it ends.
    writeFileSync(json, '{\n  "turns": [\n');
    expect((await ptc(["trace", "show", json])).stderr).toContain("Unexpected end of JSON input at line 3, column 1");
  });
});

describe("an option that takes one value, given twice", () => {
  it("is refused with exit 2 by every command, instead of the first value being dropped unseen", async () => {
    const cases: string[][] = [
      ["eval", "--ctx", "{}", "--ctx={\"a\": 1}", "-e", "data/a"],
      ["repl", "--isolation", "none", "--isolation", "worker"],
      ["view", file("run.json"), "--out", file("a.html"), "--out", file("b.html")],
      ["compare", file("chats.jsonl"), "--json", file("a.json"), "--json", file("b.json")],
      ["trace", "show", file("run.json"), "--turn", "1", "--turn", "2"],
      ["demo", "--trace-out", file("t1.json"), "--trace-out", file("t2.json")],
      ["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--port", "1"],
    ];
    for (const args of cases) {
      const r = await ptc(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/--(ctx|isolation|out|json|turn|trace-out|port) is given twice/);
    }
    for (const f of ["a.html", "b.html", "a.json", "b.json", "t1.json", "t2.json"]) expect(existsSync(file(f))).toBe(false);
  });
});

describe("an input file too large to be a string", () => {
  it("is refused as too large, not misreported as not UTF-8 (600 MB of zeros was 'byte 0x00 at column 536870889')", () => {
    // Zeroed pages the check never reads: the length alone decides.
    const bytes = new Uint8Array(constants.MAX_STRING_LENGTH + 1);
    expect(() => decodeText(bytes, "huge.json")).toThrow(TextInputError);
    expect(() => decodeText(bytes, "huge.json")).toThrow(`huge.json is too large to read as text (${bytes.length} bytes; the most is ${constants.MAX_STRING_LENGTH})`);
  });
});

describe("ptc compare --summarizer-llm with no server configured", () => {
  it("is a usage error (exit 2, what to set), not an internal error with a stack trace", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    vi.stubEnv("OPENAI_BASE_URL", "");
    try {
      const r = await ptc(["compare", file("chats.jsonl"), "--summarizer-llm", "gpt-4o-mini"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("ptc compare: openaiLlm: no API key");
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("ptc compare's summarizer when its server does not answer", () => {
  it("is asked no more after one call times out: the rest fail at once, instead of each waiting out the timeouts again", async () => {
    let asked = 0;
    const silent: Llm = {
      name: "silent",
      complete: () => {
        asked++;
        return Promise.reject(new LlmError("timeout", "openai: no reply within 120000 ms"));
      },
    };
    let stderr = "";
    const llm = stopsWhenUnanswered(silent, { stderr: { write: (s: string) => (stderr += s) } });
    const request = { messages: [{ role: "user" as const, content: "summarize" }] };
    for (let i = 0; i < 5; i++) await expect(llm.complete(request)).rejects.toMatchObject({ kind: "timeout" });
    expect(asked).toBe(1);
    await expect(llm.complete(request)).rejects.toThrow("not asked: the summarizer did not answer an earlier call (openai: no reply within 120000 ms)");
    expect(stderr).toBe("ptc compare: the summarizer did not answer (openai: no reply within 120000 ms); the rest of the run goes without its summaries\n");
  });

  it("is still asked after an answer it could not use (a rate limit, a bad reply)", async () => {
    let asked = 0;
    const busy: Llm = {
      name: "busy",
      complete: () => {
        asked++;
        return Promise.reject(new LlmError("rate_limit", "429"));
      },
    };
    const llm = stopsWhenUnanswered(busy, { stderr: { write: () => true } });
    for (let i = 0; i < 3; i++) await expect(llm.complete({ messages: [] })).rejects.toMatchObject({ kind: "rate_limit" });
    expect(asked).toBe(3);
  });
});

describe("an input without an end (/dev/zero)", () => {
  // A recording is read as ptc trace show reads a run: --replay /dev/zero was read to the most a string holds (1 GB resident, 9 s) to be refused.
  it.skipIf(!existsSync("/dev/zero"))("is read no further than the limit of what it is and refused as too large (it was read until memory ran out)", async () => {
    for (const [args, what, max] of [[["trace", "show", "/dev/zero"], "show", MAX_INPUT_BYTES], [["demo", "--replay", "/dev/zero"], "replay", MAX_INPUT_BYTES]] as const) {
      const r = await ptc([...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`/dev/zero is too large to ${what} (more than ${max} bytes)`);
    }
  });
  // A program is at most maxSourceChars characters (3 bytes each at most in UTF-8): reading half a gigabyte to refuse it was memory and time for nothing.
  it("as a program on standard input (ptc eval - < /dev/zero), read no further than a program may be, and refused with exit 2", async () => {
    let read = 0;
    const zeros = new Readable({ read() { read += 1 << 16; this.push(Buffer.alloc(1 << 16)); } });
    let stderr = "";
    const code = await runCli(["eval", "-"], { stdin: zeros, stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } });
    expect([code, stderr.split("\n")[0]]).toEqual([2, "ptc eval: standard input is too large to run as a program (more than 600003 bytes; the limit is maxSourceChars=200000 characters)"]);
    expect(read).toBeLessThan(1 << 20);
    const raised = await runCli(["eval", "--limit", "maxSourceChars=10", "-"], { stdin: Readable.from(["(+ 1 2 3 4 5 6 7)"]), stdout: { write: () => true }, stderr: { write: () => true } });
    expect(raised).toBe(1);
  });
  it.skipIf(!existsSync("/dev/zero"))("as a program file (ptc eval /dev/zero), likewise", async () => {
    const r = await ptc(["eval", "/dev/zero"]);
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([2, "ptc eval: /dev/zero is too large to run as a program (more than 600003 bytes; the limit is maxSourceChars=200000 characters)"]);
  });
  // Read first until the process died of std::bad_alloc, then to the most a string holds (1 GB resident, 8.5 s): a token is a line.
  it.skipIf(!existsSync("/dev/zero"))("as ptc proxy's admin token file, read no further than a token may be", async () => {
    const r = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--admin-token-file", "/dev/zero"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ptc proxy: cannot read the admin token file: /dev/zero is too large to be an admin token (more than 65536 bytes)");
    expect(r.stdout).not.toContain("listening");
  });
  it("as a recording to replay that is a regular file past the limit, refused before reading it", async () => {
    const big = join(dir, "big.jsonl");
    writeFileSync(big, "");
    truncateSync(big, MAX_INPUT_BYTES + 1);
    const r = await ptc(["demo", "reviews", "--replay", big]);
    expect([r.code, r.stderr]).toEqual([2, `ptc demo: replay: ${big} is too large to replay (more than ${MAX_INPUT_BYTES} bytes)\n`]);
    expect(r.stdout).toBe("");
  });
  // Read to the most a string holds (536,870,888 bytes) to be refused: a config file is small.
  it.skipIf(!existsSync("/dev/zero"))("as ptc proxy's config file, read no further than a config file may be", async () => {
    const r = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--config", "/dev/zero"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`ptc proxy: cannot read the config file /dev/zero: /dev/zero is too large to be a config file (more than ${CONFIG_FILE_LIMIT.bytes} bytes)`);
    expect(r.stdout).not.toContain("listening");
  }, 60_000);
  it("as ptc proxy's config file that is a regular file past the limit, refused before reading it", async () => {
    const big = join(dir, "big-config.json");
    writeFileSync(big, "");
    truncateSync(big, CONFIG_FILE_LIMIT.bytes + 1);
    const r = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--config", big]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot read the config file ${big}: ${big} is too large to be a config file (more than ${CONFIG_FILE_LIMIT.bytes} bytes)`);
    expect(r.stdout).not.toContain("listening");
  });
  // A line past the longest program can never run, as for ptc eval -: it was read to half a gigabyte (730 MB resident, 3 s) to be refused.
  it("as a line without an end on ptc repl's input (ptc repl < /dev/zero), read no further than a program may be", async () => {
    let read = 0;
    const zeros = new Readable({ read() { read += 1 << 16; this.push(Buffer.alloc(1 << 16)); } });
    let stderr = "";
    const code = await runCli(["repl"], { stdin: zeros, stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } });
    expect(code).toBe(2);
    expect(stderr).toBe("ptc repl: standard input line 1 is too long to run as a program (more than 600003 bytes; the limit is maxSourceChars=200000 characters)\n");
    expect(read).toBeLessThan(1 << 20);
    const raised = await runCli(["repl", "--limit", "maxSourceChars=10"], { stdin: Readable.from(["(+ 1 2 3 4 5 6 7 8 9 10 11 12 13 14)\n"]), stdout: { write: () => true }, stderr: { write: (s: string) => (stderr = s) } });
    expect([raised, stderr]).toEqual([2, "ptc repl: standard input line 1 is too long to run as a program (more than 33 bytes; the limit is maxSourceChars=10 characters)\n"]);
  });

  it("as an entry of ptc repl's input that never closes (yes '(' | ptc repl): it ends once past maxSourceChars", async () => {
    const lines = Readable.from((function* () {
      yield "(def a 1)\n(do\n";
      for (;;) yield "(def b 2)\n";
    })());
    let stdout = "";
    let stderr = "";
    const code = await runCli(["repl", "--limit", "maxSourceChars=1000"], { stdin: lines, stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    expect(code).toBe(1);
    expect(stdout).toBe("#'a\n");
    expect(stderr).toMatch(/^source_too_large: the program is 100\d characters long, over the limit of 1000\n/);
    expect(stderr).toContain("ptc repl: the entry was still open after 100");
  });
});

describe("a blank port (--port=\"$PORT\" with PORT unset)", () => {
  it("is refused by ptc view and ptc proxy instead of serving on a random port", async () => {
    const view = await ptc(["view", file("run.json"), "--port", ""]);
    expect(view.code).toBe(2);
    expect(view.stderr).toContain('--port expects a port number from 0 to 65535, got ""');
    const proxy = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--db", ":memory:", "--port", " "]);
    expect(proxy.code).toBe(2);
    expect(proxy.stderr).toContain("--port must be a port number, got  ");
  });
});

// A name or value from the command line echoed in a diagnostic (a file name from a listing, a
// value from a script) is text as a terminal should show it, as a file's names already were.
describe("control characters in an argument are written out in the diagnostic that echoes it", () => {
  const E = "\x1b]0;pwned\x07\x1b[2J\u202e";
  const rows: string[][] = [
    [E],
    ["help", E],
    ["reference", E],
    ["eval", E],
    ["eval", `--${E}`],
    ["eval", "--ctx-file", E, "-e", "1"],
    ["eval", "--limit", `${E}=1`, "-e", "1"],
    ["eval", "--limit", `timeoutMs=${E}`, "-e", "1"],
    ["eval", "--isolation", E, "-e", "1"],
    ["demo", E],
    ["demo", "a", E],
    ["demo", "--timeout", E, "--live"],
    ["demo", "--trace-out", join("/nonexistent", E)],
    ["trace", E],
    ["trace", "show", "--turn", E, "x.json"],
    ["trace", "show", "--max-turns", E, "x.json"],
    ["view", "--host", E, "x.json"],
    ["view", "--port", E, "x.json"],
    ["view", "x.json", "--out", join("/nonexistent", E)],
    ["compare", `--${E}`],
    ["compare", "--limit", E, "x.jsonl"],
    ["compare", "--experiment", "--runs", E],
    ["compare", "--experiment", "--json", join("/nonexistent", E)],
    ["proxy", "--upstream", E],
    ["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", E],
    ["proxy", "--upstream", "http://127.0.0.1:1/v1", "--drain-timeout", E],
    ["proxy", "--upstream", "http://127.0.0.1:1/v1", "--db", ":memory:", "--admin-token-file", E],
  ];
  for (const args of rows) {
    it(`ptc ${JSON.stringify(args)}`, async () => {
      const r = await ptc(args);
      expect(r.code).toBe(2);
      // Echoed (as forTerminal writes it, or inside a JSON string), never raw.
      expect(r.stderr).toMatch(/(\\x1B|\\u001b)\]0;pwned.*\\u202E/);
      // eslint-disable-next-line no-control-regex
      expect(r.stdout + r.stderr).not.toMatch(/[\x1b\x07\u202e]/);
    });
  }
});

// An unset variable (--replay "$REC") gave "cannot read  (ENOENT)", a blank where the name goes, and --config '' started the proxy on the defaults.
describe("an empty input file name", () => {
  it.each([
    [["demo", "reviews", "--replay", ""], "ptc demo: replay: the file name is empty\n"],
    [["trace", "show", ""], "ptc trace show: the file name is empty\n"],
    [["view", ""], "ptc view: the file name is empty\n"],
    [["compare", ""], "ptc compare: the file name is empty\n"],
    [["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--admin-token-file", ""], "ptc proxy: cannot read the admin token file: the file name is empty\n"],
  ])("ptc %j says the file name is empty, exit 2", async (args, stderr) => {
    const r = await ptc(args);
    expect([r.code, r.stderr, r.stdout]).toEqual([2, stderr, ""]);
  });
  it("as ptc proxy --config, refused before starting", async () => {
    const r = await ptc(["proxy", "--upstream", "http://127.0.0.1:1/v1", "--port", "0", "--db", ":memory:", "--config", ""]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ptc proxy: --config: the file name is empty\n/);
    expect(r.stdout).toBe("");
  });
});
