// `ptc demo` and `ptc trace show`: the main job offline, live against a fake
// OpenAI-compatible server, recorded and replayed, and its trace read back turn by turn.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chmodSync, mkdtempSync, readdirSync, statSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { examples, findExample, type Example } from "../examples/index.js";
import { runFromJson, runToJson, type SavedRun } from "../src/agent/saved-run.js";
import { traceToJson } from "../src/trace/serialize.js";
import type { RunTrace } from "../src/trace/trace.js";
import { runExample } from "../examples/run.js";
import { scriptedLlm } from "../src/llm/index.js";
import { capture } from "./support/capture.js";
import { runDemoCommand } from "../src/cli/demo.js";
import { renderTurn, runTraceCommand } from "../src/cli/trace.js";
import { turnBudget } from "../src/history/settings.js";
import { renderComparison } from "../src/history/compare.js";
import { defaultViewOptions } from "../src/history/view.js";
import { MAX_INPUT_BYTES } from "../src/viewer/input.js";
import { olderTrace, pausedRunJson } from "./viewer/fixtures.js";
import { SubAgent } from "../src/agent/subagent.js";
import { tool } from "../src/agent/tools.js";
import { z } from "zod";

const dir = mkdtempSync(join(tmpdir(), "ptc-cli-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

const reviews = findExample("reviews") as Example;
const recovery = findExample("recovery") as Example;

describe("ptc demo", () => {
  it("runs the first example offline and shows the turns, the answer and the token use", async () => {
    const { code, out } = await capture((io) => runDemoCommand([], io));
    expect(code).toBe(0);
    expect(out).toContain(`Example: ${reviews.name}: ${reviews.title}`);
    expect(out).toContain("(offline, scripted replies)");
    expect(out.match(/^── Turn \d+: /gm)).toHaveLength(reviews.replies.length);
    expect(out).toContain("(def reviews (tool/search-reviews {:category data/category}))");
    expect(out).toMatch(/Tool calls \(2\):\n {2}search-reviews \{"category":"Electronics"\} → "Customer Review Summary/);
    expect(out).toContain("  - Monitor: Average rating 4.7/5");
    expect(out).toContain(`Answer: ${JSON.stringify(reviews.expected)}`);
    expect(out).toContain("Matches the expected answer.");
    expect(out).toMatch(/^Tokens: [\d,]+ in \([\d,]+ cached\) \/ [\d,]+ out over 3 LLM requests \(estimated/m);
  });

  it("shows the failing turn's error and the recovery", async () => {
    const { code, out } = await capture((io) => runDemoCommand(["recovery"], io));
    expect(code).toBe(0);
    expect(out).toMatch(/── Turn 2: error/);
    expect(out).toMatch(/Error at line 2, column \d+: type_error: \+ expects numbers/);
    expect(out).toContain(`Answer: ${JSON.stringify(recovery.expected)}`);
  });

  it("lists the examples", async () => {
    const { code, out } = await capture((io) => runDemoCommand(["--list"], io));
    expect(code).toBe(0);
    for (const e of examples) expect(out).toContain(`${e.name}`);
    expect(out).toContain(`${examples.length > 0 ? examples[0].title : ""}`);
  });

  // They were dropped unseen: --list --record out.jsonl exited 0 with no recording, --list reviews listed every example.
  it("refuses what --list would ignore: an example name or a run's options", async () => {
    for (const args of [["--list", "reviews"], ["--list", "--record", join(dir, "list.jsonl")], ["--list", "--live"], ["--list", "--full"], ["--list", "--trace-out", join(dir, "list.json")]]) {
      const r = await capture((io) => runDemoCommand(args, io));
      expect([r.code, r.out]).toEqual([2, ""]);
      expect(r.err).toMatch(/^ptc demo: --list lists the examples and runs none: it takes no (example name|other option)/);
    }
  });

  it("rejects an unknown example, unknown flags, and contradictory flags", async () => {
    const unknown = await capture((io) => runDemoCommand(["nope"], io));
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(`no example "nope". Examples: ${examples.map((e) => e.name).join(", ")}`);
    const flag = await capture((io) => runDemoCommand(["--bogus"], io));
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/Unknown option '--bogus'/);
    const both = await capture((io) => runDemoCommand(["--live", "--replay", "x.jsonl"], io));
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/exclude each other/);
  });

  it("explains what to set when --live has no model configured", async () => {
    vi.stubEnv("OPENAI_MODEL", "");
    vi.stubEnv("OPENAI_API_KEY", "");
    vi.stubEnv("OPENAI_BASE_URL", "");
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    const { code, err } = await capture((io) => runDemoCommand(["--live"], io));
    expect(code).toBe(2);
    expect(err).toMatch(/no model given/);
    expect(err).toMatch(/Set OPENAI_BASE_URL .*OPENAI_API_KEY and OPENAI_MODEL/);
  });

  it("records a run and replays it to the same answer", async () => {
    const file = join(dir, "reviews.jsonl");
    const rec = await capture((io) => runDemoCommand(["reviews", "--record", file], io));
    expect(rec.code).toBe(0);
    expect(rec.out).toContain(`Recording written to ${file}`);
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(reviews.replies.length);
    const rep = await capture((io) => runDemoCommand(["reviews", "--replay", file], io));
    expect(rep.code).toBe(0);
    expect(rep.out).toContain(`(replaying ${file})`);
    expect(rep.out).toContain("Matches the expected answer.");
    const tokens = (s: string) => s.match(/^Tokens: .* over \d+ LLM requests/m)?.[0];
    expect(tokens(rec.out)).toMatch(/over 3 LLM requests$/);
    expect(tokens(rep.out)).toBe(tokens(rec.out));
  });

  it("gives a recording made from a private one no more readers than it has, as the trace beside it", async () => {
    const replay = join(dir, "private.jsonl");
    expect((await capture((io) => runDemoCommand(["reviews", "--record", replay], io))).code).toBe(0);
    chmodSync(replay, 0o600);
    const copy = join(dir, "copy.jsonl");
    const trace = join(dir, "copy.json");
    const r = await capture((io) => runDemoCommand(["reviews", "--replay", replay, "--record", copy, "--trace-out", trace], io));
    expect(r.code).toBe(0);
    // The same records, but for how long each answer took (the replay's own wall-clock time: 0 ms, or 4 on a loaded machine).
    const records = (file: string): unknown[] => readFileSync(file, "utf8").trim().split("\n").map((line) => ({ ...(JSON.parse(line) as object), ms: 0 }));
    expect(records(copy)).toEqual(records(replay));
    expect(records(copy)).toHaveLength(reviews.replies.length);
    expect({ record: statSync(copy).mode & 0o777, trace: statSync(trace).mode & 0o777 }).toEqual({ record: 0o600, trace: 0o600 });
  });

  it("prints a replay hint that works, --compress included", async () => {
    const file = join(dir, "compressed.jsonl");
    const rec = await capture((io) => runDemoCommand(["reviews", "--compress", "--record", file], io));
    expect(rec.code).toBe(0);
    const hint = /replay it with ptc demo (.*)\)\n/.exec(rec.out)?.[1];
    expect(hint).toBe(`reviews --replay ${file} --compress`);
    const rep = await capture((io) => runDemoCommand((hint as string).split(" "), io));
    expect(rep.code).toBe(0);
    expect(rep.out).toContain("Matches the expected answer.");
  });

  it("checks --record and --trace-out paths before running anything", async () => {
    for (const flag of ["--record", "--trace-out"]) {
      const file = join(dir, "no-such-folder", "out.json");
      const r = await capture((io) => runDemoCommand(["reviews", flag, file], io));
      expect(r.code).toBe(2);
      expect(r.err).toContain(`cannot write ${flag} ${file}: the folder ${join(dir, "no-such-folder")} does not exist`);
      // Nothing ran: no header, no turns, no "Recording written".
      expect(r.out).toBe("");
      const folder = await capture((io) => runDemoCommand(["reviews", flag, dir], io));
      expect(folder.code).toBe(2);
      expect(folder.err).toContain("it is a folder");
    }
  });

  it("checks --timeout", async () => {
    const notLive = await capture((io) => runDemoCommand(["--timeout", "100"], io));
    expect(notLive.code).toBe(2);
    expect(notLive.err).toContain("--timeout applies to --live runs only");
    const bad = await capture((io) => runDemoCommand(["--live", "--timeout", "soon"], io));
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--timeout takes a whole number of milliseconds above 0, got "soon"');
  });

  it("fails with a clear message when a replay does not match the example", async () => {
    const file = join(dir, "other.jsonl");
    await capture((io) => runDemoCommand(["expenses", "--record", file], io));
    const { code, out } = await capture((io) => runDemoCommand(["reviews", "--replay", file], io));
    expect(code).toBe(1);
    expect(out).toMatch(/No answer: llm_error: .*request 1 differs from the recording/);
  });
});

describe("ptc demo --live against an OpenAI-compatible server", () => {
  let server: Server;
  let hang: NodeJS.Signals | false = false;
  let failures = 0;
  let failure = "fake overload";
  let next = 0;
  const bodies: Array<{ model: string; messages: Array<{ role: string; content: string }> }> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString("utf8")));
      req.on("end", () => {
        // The model never answers; Ctrl-C comes once the run waits for it (a timer could fire before the demo listens).
        if (hang) {
          // Unheard (nothing listens for the signal), the run would wait for ever: refuse the request instead.
          const heard = process.listenerCount(hang) > 0;
          process.emit(hang);
          if (!heard) res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `${hang} went unheard` } }));
          return;
        }
        if (failures > 0) {
          failures--;
          res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: failure } }));
          return;
        }
        bodies.push(JSON.parse(text) as (typeof bodies)[number]);
        const content = reviews.replies[next++] ?? "(fail \"script over\")";
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: `c${next}`,
            object: "chat.completion",
            created: 0,
            model: "fake-live",
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
            usage: { prompt_tokens: 1000 * next, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 500 } },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("asks the server each turn and reports the server's token counts", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("OPENAI_MODEL", "");
    const { code, out, err } = await capture((io) => runDemoCommand(["reviews", "--live", "--model", "fake-live"], io));
    expect(code).toBe(0);
    expect(out).toContain("LLM: openai:fake-live (live)");
    expect(err).toContain("… turn 1: waiting for openai:fake-live");
    expect(bodies).toHaveLength(3);
    expect(bodies.every((b) => b.model === "fake-live")).toBe(true);
    expect(bodies[2].messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(out).toContain("Tokens: 6,000 in (1,500 cached) / 150 out over 3 LLM requests\n");
    expect(out).toContain("Matches the expected answer.");
  });

  it("says when it retries, and takes the request timeout from --timeout", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("OPENAI_MODEL", "fake-live");
    bodies.length = 0;
    next = 0;
    failures = 1;
    const { code, out, err } = await capture((io) => runDemoCommand(["reviews", "--live", "--timeout", "5000"], io));
    expect(failures).toBe(0);
    // One retry line, with the status said once.
    expect(err).toMatch(/… openai:fake-live: HTTP 500: fake overload; retrying in \d+\.\d s \(retry 1\)\n/);
    expect(err.match(/retrying/g)).toHaveLength(1);
    expect(code).toBe(0);
    expect(out).toContain("Matches the expected answer.");
  });

  // The server's error text goes to the terminal in the retry line: a hostile or broken server's controls are written out.
  it("writes a server's control characters in its retry line out, never raw", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("OPENAI_MODEL", "fake-live");
    next = 0;
    failures = 1;
    failure = "\u001b]0;pwned\u0007\u001b[2Jover\u202Eload";
    try {
      const { code, err } = await capture((io) => runDemoCommand(["reviews", "--live", "--timeout", "5000"], io));
      expect(code).toBe(0);
      expect(err).toContain("HTTP 500: \\x1B]0;pwned\\x07\\x1B[2Jover\\u202Eload; retrying in");
      // eslint-disable-next-line no-control-regex
      expect(err).not.toMatch(/[\u001b\u0007\u202E]/);
    } finally {
      failure = "fake overload";
    }
  });

  it("ends a live run on Ctrl-C as aborted, still writing the trace", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("OPENAI_MODEL", "fake-live");
    hang = "SIGINT";
    const f = join(dir, "aborted.json");
    const listeners = process.listenerCount("SIGINT");
    const { code, out } = await capture((io) => runDemoCommand(["reviews", "--live", "--trace-out", f], io));
    hang = false;
    expect(code).toBe(1);
    expect(out).toMatch(/No answer: aborted/);
    expect(process.listenerCount("SIGINT")).toBe(listeners);
    expect((JSON.parse(readFileSync(f, "utf8")) as SavedRun).fail?.reason).toBe("aborted");
  });

  it("ends a live run on SIGTERM as on Ctrl-C: the trace and the recording written, no temporary file left beside them", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("OPENAI_MODEL", "fake-live");
    hang = "SIGTERM";
    const folder = mkdtempSync(join(dir, "term-"));
    const [f, rec] = [join(folder, "terminated.json"), join(folder, "terminated.jsonl")];
    const listeners = process.listenerCount("SIGTERM");
    const { code, out, err } = await capture((io) => runDemoCommand(["reviews", "--live", "--trace-out", f, "--record", rec], io));
    expect(err).not.toMatch(/cannot write/);
    hang = false;
    expect(out).toMatch(/No answer: aborted/);
    expect(code).toBe(1);
    expect(process.listenerCount("SIGTERM")).toBe(listeners);
    expect((JSON.parse(readFileSync(f, "utf8")) as SavedRun).fail?.reason).toBe("aborted");
    expect(readdirSync(folder).sort()).toEqual(["terminated.json", "terminated.jsonl"]);
    // The call the signal cut is recorded as it ended.
    const lines = readFileSync(rec, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { error?: { message: string } });
    expect(lines).toHaveLength(1);
    expect(lines[0].error?.message).toBeDefined();
  });
});

describe("ptc trace show", () => {
  let file: string;
  let trace: RunTrace;
  beforeAll(async () => {
    file = join(dir, "recovery.json");
    const { code } = await capture((io) => runDemoCommand(["recovery", "--trace-out", file], io));
    expect(code).toBe(0);
    trace = runFromJson(readFileSync(file, "utf8")).trace;
  });

  it("prints the run turn by turn: programs, tool calls, output, errors, definitions and tokens", async () => {
    const { code, out } = await capture((io) => runTraceCommand(["show", file], io));
    expect(code).toBe(0);
    expect(out).toContain("Task:\n  # ");
    expect(out).toContain(`Turns: ${trace.turns.length} · returned {:orders 9`);
    for (const t of trace.turns) {
      expect(out).toContain(`── Turn ${t.number}: `);
      expect(out).toContain((t.program ?? "").split("\n")[0]);
    }
    expect(out).toMatch(/Tool calls \(1\):\n {2}list-orders \{"status":"shipped"\} → \[/);
    expect(out).toMatch(/── Turn 2: error[\s\S]*Error at line 2, column \d+: type_error/);
    expect(out).toMatch(/Defined:\n {2}\(amount \[s\]\) "Parses a formatted total/);
    const inTotal = trace.turns.reduce((s, t) => s + t.usage.inputTokens, 0);
    expect(out).toContain(`Tokens: ${inTotal.toLocaleString("en-US")} in (`);
    expect(out).toContain("Returned: {:orders 9");
  });

  it("shows a call held for the host's approval as held: not counted as a call that ran, not as an error", async () => {
    const paused = join(dir, "paused.json");
    writeFileSync(paused, await pausedRunJson());
    const { code, out } = await capture((io) => runTraceCommand(["show", paused], io));
    expect(code).toBe(0);
    expect(out).toContain("· tool calls: 0 (1 held for the host's approval) ·");
    expect(out).toMatch(/Tool calls \(1\):\n {2}wipe \{\} held for the host's approval: it did not run \(\d+ ms\)/);
    expect(out).not.toContain("error: held");
  });

  it("shows where a paused turn's program stopped for the approval, not as an error the host caused", async () => {
    const paused = join(dir, "paused.json");
    writeFileSync(paused, await pausedRunJson());
    const { code, out } = await capture((io) => runTraceCommand(["show", paused], io));
    expect(code).toBe(0);
    expect(out).toMatch(/── Turn 2: paused[^\n]*\n[\s\S]*Paused at line 1, column 9, waiting for the host's approval\n1 \| \(return \(tool\/wipe \{\}\)\)\n {2}\| {9}\^/);
    expect(out).not.toContain("aborted by the host");
    // The run did not fail either: it waits.
    expect(out).toContain("Turns: 2 · paused: the run is waiting for the host's approval of tool/wipe (turn-2-call-1)\n");
  });

  it("reads a paused run's bare trace (no saved run) as paused, as the viewer does, not as a run that ended", async () => {
    const bare = join(dir, "paused-trace.json");
    writeFileSync(bare, JSON.stringify((JSON.parse(await pausedRunJson()) as { trace: unknown }).trace));
    const { code, out } = await capture((io) => runTraceCommand(["show", bare], io));
    expect(code).toBe(0);
    expect(out).toContain("Turns: 2 · paused: waiting for the host's approval\n");
    expect(out).not.toContain("without a return");
  });

  // A model's reply or a tool's output may hold terminal controls: printed raw, ESC sequences retitle
  // the window, clear the screen or recolour text, and a carriage return writes over the line.
  it("prints a file's control characters written out, never raw to the terminal", async () => {
    const attack = "\u001b]0;pwned\u0007\u001b[2Jgone\rover\u009b31m";
    const saved = JSON.parse(readFileSync(file, "utf8")) as { trace: { turns: Array<{ reply: string; prints: string[]; messages: Array<{ content: string }> }> } };
    const [first, second] = saved.trace.turns;
    first.reply += attack;
    first.prints.push(attack);
    // The messages a turn repeats from the one before are stored by reference; the second turn's own is the first's reply.
    second.messages[1].content += attack;
    const hostile = join(dir, "hostile.json");
    writeFileSync(hostile, JSON.stringify(saved));
    for (const args of [[], ["--turn", "1"], ["--turn", "2", "--messages"]]) {
      const { code, out } = await capture((io) => runTraceCommand(["show", hostile, ...args], io));
      expect(code).toBe(0);
      expect([...out].filter((c) => c !== "\n" && c !== "\t" && (c < " " || (c >= "\u007f" && c <= "\u009f")))).toEqual([]);
      expect(out).toContain("\\x1B]0;pwned\\x07\\x1B[2Jgone\\x0D");
      expect(out).toContain("over\\x9B31m");
    }
  });

  // Bidi overrides, embeddings and isolates reorder a line where a terminal applies them (VTE,
  // Konsole, mlterm): a program or a tool's output would read otherwise than it holds.
  it("prints a file's bidi controls written out, never raw to the terminal", async () => {
    const attack = 'ok (if admin? \u202E"nimda"\u202C \u2066x\u2069 \u200F\u061C)';
    const saved = JSON.parse(readFileSync(file, "utf8")) as { trace: { turns: Array<{ reply: string; prints: string[] }> } };
    saved.trace.turns[0].reply += attack;
    saved.trace.turns[0].prints.push(attack);
    const hostile = join(dir, "bidi.json");
    writeFileSync(hostile, JSON.stringify(saved));
    for (const args of [[], ["--turn", "1"], ["--turn", "1", "--messages"]]) {
      const { code, out } = await capture((io) => runTraceCommand(["show", hostile, ...args], io));
      expect(code).toBe(0);
      expect(out).not.toMatch(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
    }
    const { out } = await capture((io) => runTraceCommand(["show", hostile, "--turn", "1"], io));
    expect(out).toContain('(if admin? \\u202E"nimda"\\u202C \\u2066x\\u2069 \\u200F\\u061C)');
  });

  it("prints exactly the messages the LLM saw for one turn", async () => {
    const { code, out } = await capture((io) => runTraceCommand(["show", file, "--turn", "3", "--messages"], io));
    expect(code).toBe(0);
    const messages = trace.turns[2].messages;
    expect(messages.length).toBe(6);
    expect(out.match(/^=== message \d+ of 6: (system|user|assistant) \([\d,]+ chars\) ===$/gm)).toHaveLength(6);
    for (const m of messages) expect(out).toContain(m.content);
    // The third turn's prompt holds the second turn's failing program and its error feedback.
    expect(out).toContain(trace.turns[1].reply);
    expect(out).toContain(trace.turns[1].feedback as string);
  });

  it("prints one turn with the raw reply and the feedback", async () => {
    const { code, out } = await capture((io) => runTraceCommand(["show", file, "--turn", "2"], io));
    expect(code).toBe(0);
    expect(out).toContain("── Turn 2: error");
    expect(out).toContain("Reply:\n  Now I'll keep the February orders");
    expect(out).toMatch(/Feedback:\n {2}Error at line 2/);
  });

  it("rejects a missing turn, --messages without --turn, and bad turn numbers", async () => {
    const missing = await capture((io) => runTraceCommand(["show", file, "--turn", "9"], io));
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`no turn 9 (the run has ${trace.turns.length} turns)`);
    const noTurn = await capture((io) => runTraceCommand(["show", file, "--messages"], io));
    expect(noTurn.code).toBe(2);
    expect(noTurn.err).toMatch(/--messages needs --turn N/);
    const bad = await capture((io) => runTraceCommand(["show", file, "--turn", "two"], io));
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--turn expects a positive whole number/);
    // A whole number past what a count can hold is too large, not "no whole number".
    const huge = await capture((io) => runTraceCommand(["show", file, "--turn", "99999999999999999"], io));
    expect(huge.code).toBe(2);
    expect(huge.err).toBe('ptc trace show: --turn 99999999999999999 is too large (at most 9007199254740991)\n');
  });

  it("explains files it cannot use", async () => {
    const write = (name: string, text: string) => {
      const f = join(dir, name);
      writeFileSync(f, text);
      return f;
    };
    const cases: Array<[string, RegExp]> = [
      [join(dir, "absent.json"), /cannot read .*absent\.json \(ENOENT\)/],
      [write("broken.json", "{ turns: "), /broken\.json is not valid JSON/],
      [write("other.json", '{"hello": 1}'), /other\.json: not a ptc-lisp trace/],
      [write("no-usage.json", JSON.stringify({ ...trace, turns: [{ ...trace.turns[0], usage: undefined }] })), /no-usage\.json: not a ptc-lisp trace: at turns\.0\.usage/],
      [write("bad-run.json", JSON.stringify({ version: 1, trace })), /bad-run\.json: not a saved ptc-lisp run/],
    ];
    // ptc view's limit: up to the longest string (512 MB) a run of small JSON values took minutes and past 7 GB of memory to parse.
    const big = write("big.json", "");
    truncateSync(big, MAX_INPUT_BYTES + 1);
    cases.push([big, new RegExp(`big\\.json is too large to show \\(more than ${MAX_INPUT_BYTES} bytes\\)`)]);
    for (const [f, message] of cases) {
      const r = await capture((io) => runTraceCommand(["show", f], io));
      // Bad input, as for ptc eval.
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
    }
  });

  // The viewer replaced them by their place; ptc trace show printed the token 4 times (tool call, output, definition, value).
  it("shows no hidden context value an older trace kept, as the viewer does: its place instead", async () => {
    const secret = "sk-live-7f3a9c2e11";
    const lookup = tool({ description: "Looks a customer up.", input: z.object({ token: z.string() }), run: async ({ token }) => ({ echoed: token }) });
    const code = (body: string) => "```clojure\n" + body + "\n```";
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 3 });
    const step = await SubAgent.run(agent, {
      llm: scriptedLlm([code('(def r (tool/lookup {:token data/_token}))\n(println "got" (:echoed r))'), code('(println (str "token=" data/_token))'), code("(return :done)")]),
      context: { _token: secret },
    });
    const f = join(dir, "older.json");
    writeFileSync(f, olderTrace(runToJson(step), { _token: secret }));
    expect(readFileSync(f, "utf8")).toContain(secret);
    for (const args of [[], ["--turn", "1"], ["--turn", "2"], ["--compressed"], ["--full"]]) {
      const { code: exit, out } = await capture((io) => runTraceCommand(["show", f, ...args], io));
      expect(exit).toBe(0);
      expect(out).not.toContain(secret);
    }
    const { out } = await capture((io) => runTraceCommand(["show", f, "--turn", "1"], io));
    expect(out).toContain('lookup {"token":<hidden string from data/_token>}');
  });

  it("reads a bare trace as well as a saved run", async () => {
    const f = join(dir, "bare.json");
    writeFileSync(f, traceToJson(trace));
    const { code, out } = await capture((io) => runTraceCommand(["show", f], io));
    expect(code).toBe(0);
    expect(out).toContain(`Turns: 4 · returned {:orders 9`);
    expect(out).toContain("── Turn 4: returned");
  });

  it("says why a saved run ended without an answer", async () => {
    const stuck = await runExample(reviews, { llm: scriptedLlm(Array(reviews.maxTurns).fill(reviews.replies[0])) });
    const f = join(dir, "stuck.json");
    writeFileSync(f, runToJson(stuck));
    const { code, out } = await capture((io) => runTraceCommand(["show", f], io));
    expect(code).toBe(0);
    expect(out).toContain(`Turns: ${reviews.maxTurns} · no answer: max_turns_exceeded`);
  });

  it("shows a nested agent's turns inside the turn that called it", async () => {
    const f = join(dir, "budget.json");
    const demo = await capture((io) => runDemoCommand(["budget-alert", "--trace-out", f], io));
    expect(demo.code).toBe(0);
    expect(demo.out).toMatch(/^Nested agents: 1 run, [\d,]+ in \([\d,]+ cached\) \/ [\d,]+ out over 2 LLM requests$/m);
    const { code, out } = await capture((io) => runTraceCommand(["show", f], io));
    expect(code).toBe(0);
    expect(out).toMatch(/── Turn 1: ok[\s\S]*Nested agent category-analyst \(answered\):\n {2}│ Turns: 2 · returned/);
    expect(out).toContain("  │   (def rows (tool/list-expenses {:month data/month}))");
    expect(out).toMatch(/ {2}│ ── Turn 2: returned[\s\S]*── Turn 2: returned/);
  });

  // The nested line wrote "over 1 LLM requests" where the run's own line says "request".
  it("counts a nested agent's single LLM request in the singular", async () => {
    const recording = join(dir, "budget.jsonl");
    expect((await capture((io) => runDemoCommand(["budget-alert", "--record", recording], io))).code).toBe(0);
    // The analyst's two programs as one reply: its run takes one request, the outer run's requests are unchanged.
    const [outer1, nested1, nested2, outer2] = readFileSync(recording, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { response: { content: string } });
    const program = (c: { response: { content: string } }): string => /```clojure\n([\s\S]*?)```/.exec(c.response.content)?.[1] ?? "";
    nested1.response.content = `In one go.\n\n\`\`\`clojure\n${program(nested1)}${program(nested2)}\`\`\``;
    const once = join(dir, "budget-once.jsonl");
    writeFileSync(once, [outer1, nested1, outer2].map((c) => JSON.stringify(c)).join("\n") + "\n");
    const demo = await capture((io) => runDemoCommand(["budget-alert", "--replay", once], io));
    expect(demo.code).toBe(0);
    expect(demo.out).toMatch(/^Nested agents: 1 run, [\d,]+ in \([\d,]+ cached\) \/ [\d,]+ out over 1 LLM request$/m);
  });

  it("compares the full and the compressed prompt, with the compression figures", async () => {
    const { code, out } = await capture((io) => runTraceCommand(["show", file, "--compressed", "--turn", "3"], io));
    expect(code).toBe(0);
    expect(out).toMatch(/^Settings recorded in the trace: 5 turns, printlnHistoryLimit 15 \/ 1000 tokens \(dropped past 500\), errorContextTurns 1, errorWindowTurns 2, samples 3 items \/ 80 chars\nPrompt for turn 3: full \d+ tokens, compressed \d+ tokens/);
    expect(out).toMatch(/^Compression per prompt$/m);
    expect(out.match(/^ +\d+ +\d+ +\d+ +-?\d+%/gm)).toHaveLength(trace.turns.length);
    const last = await capture((io) => runTraceCommand(["show", file, "--compressed"], io));
    expect(last.out).toMatch(/\nPrompt for turn 5: /);
  });

  // Control characters are written out (ESC as \x1B) after the layout measured them as one
  // column each: every row holding one was 3 columns wider and pushed the gutter off its place.
  it("keeps the gutter in place on rows holding control characters (written out for the terminal)", async () => {
    const noisy = "\u001b[31mred\u001b[0m and a bell \u0007, \u202Eflipped";
    const f = join(dir, "controls.json");
    writeFileSync(f, traceToJson({ ...trace, turns: [{ ...trace.turns[0], reply: `${noisy.repeat(8)}\n(def a 1)` }, ...trace.turns.slice(1)] }));
    const { code, out } = await capture((io) => runTraceCommand(["show", f, "--compressed", "--turn", "2"], io));
    expect(code).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u202E]/);
    const lines = out.split("\n");
    const from = lines.findIndex((l) => l.startsWith("-- assistant (turn 1)"));
    const rows = lines.slice(from + 1, lines.indexOf("", from));
    expect(rows.join("")).toContain("\\x1B[31mred");
    expect(rows.length).toBeGreaterThan(3);
    expect(new Set(rows.map((r) => r.indexOf(" | ")))).toEqual(new Set([Math.floor((160 - 3) / 2)]));
  });

  // --full asks for every line uncut: the comparison cut the system prompt to 6 lines and
  // clipped long lines at the width all the same, unsaid.
  it("shows every line of the comparison uncut with --full", async () => {
    const cut = await capture((io) => runTraceCommand(["show", file, "--compressed"], io));
    expect(cut.out).toMatch(/^\.\.\. \(\d+ more lines, same in both views\)$/m);
    const { code, out } = await capture((io) => runTraceCommand(["show", file, "--compressed", "--full"], io));
    expect(code).toBe(0);
    expect(out).not.toMatch(/^\.\.\. \(\d+ (more )?lines, same in both views\)$/m);
    expect(out).not.toMatch(/\.\.\.$/m);
    // Each line of the system prompt and the task, in a column 78 characters wide where the views differ.
    for (const line of `${trace.system}\n${trace.task}`.split("\n")) {
      if (line.length <= 78) expect(out).toContain(line);
    }
  });

  it("rebuilds the compressed view with the settings the trace recorded, and says where they came from", async () => {
    const settings = trace.settings as NonNullable<RunTrace["settings"]>;
    expect(settings).toEqual({ maxTurns: recovery.maxTurns, toolsWithdrawn: true, maxPrintChars: 4000, model: "scripted:recovery", view: { ...defaultViewOptions }, strategy: { name: "full", options: {} } });
    const tight = { ...settings, view: { ...settings.view, printlnHistoryLimit: 1, errorContextTurns: 0, strictPrefix: true } };
    const f = join(dir, "tight.json");
    writeFileSync(f, traceToJson({ ...trace, settings: tight }));
    const { code, out } = await capture((io) => runTraceCommand(["show", f, "--compressed"], io));
    expect(code).toBe(0);
    const run = { maxTurns: tight.maxTurns, toolsWithdrawn: tight.toolsWithdrawn, maxPrintChars: tight.maxPrintChars };
    expect(out).toBe(`Settings recorded in the trace: ${recovery.maxTurns} turns, printlnHistoryLimit 1 / 1000 tokens (dropped past 500), errorContextTurns 0, errorWindowTurns 2, samples 3 items / 80 chars, strict prefix (payback within 15 prompts)\n${renderComparison(trace, run, tight.view)}\n`);
    expect(out).not.toContain(renderComparison(trace, run, defaultViewOptions));
    const bare = join(dir, "bare.json");
    writeFileSync(bare, traceToJson({ ...trace, settings: undefined }));
    const old = await capture((io) => runTraceCommand(["show", bare, "--compressed", "--max-turns", "7"], io));
    // A budget from --max-turns is the flag's, not the trace's; one turn is singular.
    const flagged = await capture((io) => runTraceCommand(["show", f, "--compressed", "--max-turns", "9"], io));
    expect(flagged.out).toMatch(/^Settings recorded in the trace: 9 turns \(from --max-turns\), printlnHistoryLimit 1 /);
    expect(old.out).toMatch(/^Settings defaults \(the trace records none\): 7 turns \(from --max-turns\), /);
    const one = join(dir, "one.json");
    writeFileSync(one, traceToJson({ ...trace, turns: trace.turns.slice(0, 1), settings: { ...tight, maxTurns: 1 } }));
    const single = await capture((io) => runTraceCommand(["show", one, "--compressed"], io));
    expect(single.code).toBe(0);
    expect(single.out).toMatch(/^Settings recorded in the trace: 1 turn, printlnHistoryLimit/);
    const broken = join(dir, "broken.json");
    writeFileSync(broken, traceToJson({ ...trace, settings: { ...settings, view: { ...settings.view, sampleItems: -2 } } }));
    const bad = await capture((io) => runTraceCommand(["show", broken, "--compressed"], io));
    expect(bad.code).toBe(2);
    // Checked when the trace is read, so every reader (show, view, compare) refuses it alike.
    expect(bad.err).toMatch(/broken\.json: not a ptc-lisp trace: at settings\.view\.sampleItems: /);
    for (const [field, value] of [["model", null], ["strategy", null], ["strategy", { name: 1 }]] as const) {
      const odd = join(dir, "odd.json");
      writeFileSync(odd, traceToJson({ ...trace, settings: { ...settings, [field]: value } as unknown as RunTrace["settings"] }));
      const r = await capture((io) => runTraceCommand(["show", odd, "--compressed"], io));
      expect(r.code).toBe(2);
      expect(r.err).toMatch(new RegExp(`odd\\.json: not a ptc-lisp trace: at settings\\.${field}`));
    }
  });

  it("reads the turn budget from the task message, and checks --compressed's flags", async () => {
    expect(turnBudget(trace)).toBe(recovery.maxTurns);
    expect(turnBudget({ ...trace, task: "no turn line" })).toBe(trace.turns.length);
    const far = await capture((io) => runTraceCommand(["show", file, "--compressed", "--turn", "9"], io));
    expect(far.code).toBe(2);
    expect(far.err).toMatch(/no prompt for turn 9/);
    const short = await capture((io) => runTraceCommand(["show", file, "--compressed", "--max-turns", "1"], io));
    expect(short.code).toBe(2);
    expect(short.err).toContain(`--max-turns 1 is fewer than the ${trace.turns.length} turns the run took`);
    expect(short.out).toBe("");
    const bad = await capture((io) => runTraceCommand(["show", file, "--compressed", "--max-turns", "0"], io));
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--max-turns expects a positive whole number/);
    const both = await capture((io) => runTraceCommand(["show", file, "--turn", "2", "--messages", "--compressed"], io));
    expect(both.code).toBe(2);
    // Without --compressed the turn budget shapes nothing: it was ignored unsaid, the run printed as if it were not given.
    const alone = await capture((io) => runTraceCommand(["show", file, "--max-turns", "20"], io));
    expect(alone.code).toBe(2);
    expect(alone.err).toBe("ptc trace show: --max-turns applies to --compressed (the turn budget the compressed prompt is built for)\n");
    expect(alone.out).toBe("");
  });

  it("prints usage for no arguments or an unknown subcommand", async () => {
    const none = await capture((io) => runTraceCommand([], io));
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/usage: ptc trace show FILE/);
    const other = await capture((io) => runTraceCommand(["list", file], io));
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/unknown command "list"/);
  });
});

describe("rendering a turn", () => {
  it("quotes docstrings as a program would write them", async () => {
    const step = await runExample(reviews);
    const turn = step.trace.turns[0];
    const doc = 'Ratings "as given", 0\\5';
    const shown = renderTurn({ ...turn, definitions: [{ name: "rated", doc, kind: "function", params: "[xs]", type: "function", sample: "#fn[rated]" }] });
    expect(shown).toContain('(rated [xs]) "Ratings \\"as given\\", 0\\\\5"');
  });
});
