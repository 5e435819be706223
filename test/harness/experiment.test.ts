// The seed-004 goal experiment, end to end: offline with the scripted roles, and live against a
// fake OpenAI-compatible server on 127.0.0.1 through the same client an app would use.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/commands.js";
import { efficiency, parseVerdict, PERSONAS, renderExperiment, runConversation, runExperiment, SCENARIOS, scriptedRoles } from "../../src/harness/experiment.js";

const cli = async (args: string[]) => {
  let stdout = "";
  let stderr = "";
  const code = await runCli(["compare", ...args], { stdin: Readable.from([""]), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  return { code, stdout, stderr };
};

describe("the judge's verdict", () => {
  it("counts the goals marked true, and nothing for an unreadable answer", () => {
    expect(parseVerdict('{"goals": [true, false, true]}', 3)).toBe(2);
    expect(parseVerdict('Verdict: {"goals":[true,true]} done', 2)).toBe(2);
    expect(parseVerdict('{"goals": [true, true, true]}', 2)).toBe(2);
    expect(parseVerdict("all good", 2)).toBe(0);
    expect(parseVerdict('{"goals": "yes"}', 2)).toBe(0);
  });
});

describe("offline experiment", () => {
  // docs/compaction.md's table is what the experiment measures: it said 42.4% / 2.11 for
  // rolling-summary and 56.2% / 2.27 for cost-trigger long after both measured 41.2% / 2.05 and 55.0% / 2.22.
  it("measures offline the figures docs/compaction.md shows, row by row", async () => {
    const doc = readFileSync(new URL("../../docs/compaction.md", import.meta.url), "utf8");
    const table = doc.slice(doc.indexOf("| strategy | token reduction | goal success | efficiency | compacted in |"));
    const specs: Record<string, string | { name: string; options: Record<string, unknown> }> = {
      full: "full",
      "sliding-window, 3 turns": { name: "sliding-window", options: { turns: 3 } },
      "rolling-summary": "rolling-summary",
      "goal-boundary": "goal-boundary",
      "cost-trigger": "cost-trigger",
      "observation-masking": "observation-masking",
      "mask-then-summarize, 1,500-token budget": { name: "mask-then-summarize", options: { trigger: { name: "token-threshold", options: { maxTokens: 1500 } } } },
    };
    const shown = table.split("\n").slice(2).filter((l) => l.startsWith("| ")).map((l) => l.split("|").slice(1, -1).map((c) => c.trim()));
    expect(shown.map((r) => r[0])).toEqual(Object.keys(specs));
    const rows = await runExperiment(Object.values(specs), scriptedRoles);
    const percent = (x: number): string => (x === 0 ? "0%" : x === 1 ? "100%" : `${(100 * x).toFixed(1)}%`);
    const measured = rows.map((r, i) => [shown[i][0], percent(r.reduction), percent(r.gsr), r.efficiency === 0 ? "0" : r.efficiency.toFixed(2), r.acted === 0 ? "-" : `${r.acted}/${r.conversations}`]);
    expect(measured).toEqual(shown);
  });

  it("full history meets every goal; a one-turn window forgets the details and fails goals", async () => {
    const [scenario, persona] = [SCENARIOS[3], PERSONAS[0]];
    const full = await runConversation(scenario, persona, "full", scriptedRoles(scenario, persona));
    expect(full.goalsMet).toBe(scenario.goals.length);
    expect(full.inputTokens).toBe(full.fullTokens);
    const window = await runConversation(scenario, persona, { name: "sliding-window", options: { turns: 1 } }, scriptedRoles(scenario, persona));
    expect(window.inputTokens).toBeLessThan(window.fullTokens);
    expect(window.goalsMet).toBeLessThan(scenario.goals.length);
  });

  it("reports reduction, goal success, accuracy drop and efficiency = reduction / (1 + drop), both in percent as the seed has it", async () => {
    const rows = await runExperiment([{ name: "sliding-window", options: { turns: 2 } }], scriptedRoles);
    expect(rows.map((r) => r.strategy)).toEqual(["full", "sliding-window:turns=2"]);
    const [full, window] = rows;
    expect(full).toMatchObject({ conversations: SCENARIOS.length * PERSONAS.length, reduction: 0, gsr: 1, accuracyDrop: 0, efficiency: 0 });
    expect(window.reduction).toBeGreaterThan(0);
    expect(window.accuracyDrop).toBeCloseTo(1 - window.gsr, 10);
    expect(window.efficiency).toBeCloseTo((100 * window.reduction) / (1 + 100 * window.accuracyDrop), 10);
  });

  it("efficiency is savings per point of goal success lost: the seed's sliding window (45% saved, 78% success) scores 2.0", () => {
    // In fractions (0.45 / 1.22 = 0.37) a window forgetting 81% of the goals scored about as well as masking that forgot none.
    expect(efficiency(0.45, 0.22)).toBeCloseTo(45 / 23, 10);
    expect(efficiency(0.311, 0)).toBeCloseTo(31.1, 10);
    expect(efficiency(0.515, 0.81)).toBeLessThan(efficiency(0.311, 0) / 10);
    // A strategy that met more goals than full lost none (a live run's noise): no division by zero or below.
    expect(efficiency(0.3, -0.01)).toBeCloseTo(30, 10);
    expect(efficiency(0.3, -0.5)).toBeCloseTo(30, 10);
  });

  it("with the agent's lookups in the conversations, masking old results keeps every goal and still saves tokens", async () => {
    const [scenario, persona] = [SCENARIOS[3], PERSONAS[1]];
    const full = await runConversation(scenario, persona, "full", scriptedRoles(scenario, persona));
    const masked = await runConversation(scenario, persona, "observation-masking", scriptedRoles(scenario, persona));
    expect(masked.compacted).toBe(true);
    expect(masked.goalsMet).toBe(full.goalsMet);
    expect(masked.inputTokens).toBeLessThan(full.inputTokens);
  });

  it("refuses an unknown strategy before any conversation, not after those of the strategies before it", async () => {
    // Live, each conversation is three paid models: --strategy sliding-window --strategy nosuch held
    // the full and sliding-window conversations before failing.
    let conversations = 0;
    const counting = (s: (typeof SCENARIOS)[number], p: (typeof PERSONAS)[number]) => (conversations++, scriptedRoles(s, p));
    await expect(runExperiment([{ name: "sliding-window", options: { turns: 2 } }, "nosuch"], counting)).rejects.toThrow(/^compaction: unknown strategy "nosuch"/);
    expect(conversations).toBe(0);
  });

  it("refuses a summarizer that needs a model before any conversation (the agent's prompts are compacted without one)", async () => {
    let conversations = 0;
    const counting = (s: (typeof SCENARIOS)[number], p: (typeof PERSONAS)[number]) => (conversations++, scriptedRoles(s, p));
    await expect(runExperiment([{ name: "rolling-summary", options: { summarizer: "llm" } }], counting)).rejects.toThrow(/^compaction: summarizer "llm" needs an llm/);
    expect(conversations).toBe(0);
  });

  it("says when a strategy never compacted", async () => {
    const rows = await runExperiment([{ name: "usage-ratio", options: { threshold: 0.99 } }, { name: "sliding-window", options: { turns: 2 } }], scriptedRoles);
    expect(rows.map((r) => r.acted)).toEqual([0, 0, expect.any(Number)]);
    expect(rows[2].acted).toBeGreaterThan(0);
    const text = renderExperiment(rows);
    expect(text).toMatch(/\nusage-ratio:threshold=0.99 .* never\n/);
    expect(text).toMatch(/usage-ratio:threshold=0.99 never compacted/);
    expect(text).not.toMatch(/sliding-window:turns=2 never compacted/);
  });

  it("runs from ptc compare --experiment, and checks its options", async () => {
    const r = await cli(["--experiment", "--strategy", "sliding-window:turns=2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Goal experiment \(offline, scripted user, agent and judge\): 4 scenarios x 3 personas x 1 run\n/);
    expect(r.stdout).toMatch(/\nfull +12 +0\.0% +100\.0%/);
    expect(r.stdout).toMatch(/\nsliding-window:turns=2 +12 /);
    expect((await cli(["--experiment", "--runs", "0"])).code).toBe(2);
    // The default strategies all act on the offline conversations.
    const defaults = await cli(["--experiment"]);
    expect(defaults.code).toBe(0);
    for (const name of ["sliding-window", "rolling-summary", "goal-boundary", "cost-trigger", "observation-masking", "mask-then-summarize"]) expect(defaults.stdout).toMatch(new RegExp(`\\n${name}\\S* .* \\d+/12\\n`));
    expect(defaults.stdout).not.toMatch(/never/);
    expect((await cli(["--live"])).stderr).toMatch(/--live applies to --experiment/);
  });

  it("refuses an option or file of the transcript comparison under --experiment, and --runs without it, instead of ignoring it", async () => {
    const cases: Array<[string[], string]> = [
      [["--experiment", "--html", "exp.html"], "--html applies to the transcript comparison, not --experiment"],
      [["--experiment", "--caches"], "--caches applies to the transcript comparison, not --experiment"],
      [["--experiment", "--limit", "5"], "--limit applies to the transcript comparison, not --experiment"],
      [["--experiment", "--summarizer", "copy"], "--summarizer applies to the transcript comparison, not --experiment"],
      [["--experiment", "chats.jsonl"], "--experiment runs its own scenarios and reads no files, got chats.jsonl"],
      [["--experiment", "--model", "m"], "--model with --experiment applies to --live runs only"],
      [["--experiment", "--live", "--model", "a", "--model", "b"], "--experiment --live takes one --model, got 2"],
      [["chats.jsonl", "--runs", "3"], "--runs applies to --experiment"],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.stderr).toContain(`ptc compare: ${message}`);
      expect(r).toMatchObject({ code: 2, stdout: "" });
    }
  });

  it("with --json -, writes the JSON report to standard output instead of the table, as the transcript comparison does", async () => {
    const r = await cli(["--experiment", "--strategy", "sliding-window:turns=2", "--json", "-"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { experiment: Array<{ strategy: string; conversations: number }> };
    expect(report.experiment.map((row) => [row.strategy, row.conversations])).toEqual([["full", 12], ["sliding-window:turns=2", 12]]);
  });
});

describe("live experiment against an OpenAI-compatible server", () => {
  let server: Server;
  const seen = { user: 0, agent: 0, judge: 0 };
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const { messages } = JSON.parse(body) as { messages: Array<{ role: string; content: string }> };
        const system = messages[0].content;
        let content: string;
        if (system.startsWith("You are a user")) {
          seen.user++;
          // One goal line, one confirmation, then done: enough to exercise every role.
          const said = messages.filter((m) => m.role === "assistant").length;
          content = ["[restaurant] cuisine: Italian; name: Ortega.", "Please confirm my [restaurant] details.", "DONE"][Math.min(said, 2)];
        } else if (system.startsWith("You judge")) {
          seen.judge++;
          content = JSON.stringify({ goals: [messages[1].content.includes("Ortega")] });
        } else {
          seen.agent++;
          content = messages.at(-1)?.content.includes("confirm") ? "Confirmed [restaurant]: cuisine: Italian; name: Ortega." : "Noted.";
        }
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "fake", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5 } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("plays user, agent and judge through the model at OPENAI_BASE_URL", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("OPENAI_MODEL", "fake");
    const r = await cli(["--experiment", "--live", "--strategy", "sliding-window:turns=2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Goal experiment \(live\)/);
    expect(seen.user).toBeGreaterThan(0);
    expect(seen.agent).toBeGreaterThan(0);
    // One verdict per conversation: 12 per strategy, full and sliding-window.
    expect(seen.judge).toBe(24);
  });
});

describe("live experiment against a server that refuses", () => {
  let server: Server;
  beforeAll(async () => {
    // A 400 is not retried: the run ends at the first request with the server's text in its message.
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "\u001b]0;pwned\u0007\u001b[2Jbad\u202Erequest" } })));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("writes the server's control characters in the error out, never raw to the terminal", async () => {
    vi.stubEnv("OPENAI_BASE_URL", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    vi.stubEnv("OPENAI_API_KEY", "sk-local");
    vi.stubEnv("OPENAI_MODEL", "fake");
    const r = await cli(["--experiment", "--live", "--strategy", "sliding-window:turns=2"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("HTTP 400: \\x1B]0;pwned\\x07\\x1B[2Jbad\\u202Erequest");
    // eslint-disable-next-line no-control-regex
    expect(r.stderr).not.toMatch(/[\u001b\u0007\u202E]/);
  });
});
