// Every example runs offline on its scripted transcript and reaches its expected answer,
// which the example computes from its data in TypeScript, independently of the programs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { examples, findExample, type Example } from "../examples/index.js";
import { runExample } from "../examples/run.js";
import { extractProgram } from "../src/agent/extract.js";
import { tool } from "../src/agent/tools.js";
import { recordingLlm, replayLlm, scriptedLlm } from "../src/llm/index.js";
import type { Turn } from "../src/trace/trace.js";

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null));

/** Turns of a run, nested agents' turns included: each took one scripted reply. */
const allTurns = (turns: readonly Turn[]): number => turns.reduce((n, t) => n + 1 + (t.nested ?? []).reduce((m, x) => m + allTurns(x.trace.turns), 0), 0);

describe.each(examples.map((e) => [e.name, e] as const))("example %s", (_name, example: Example) => {
  it("reaches the expected answer offline, using every scripted reply", async () => {
    const llm = scriptedLlm(example.replies);
    const step = await runExample(example, { llm });
    expect(step.fail).toBeUndefined();
    expect(step.ok).toBe(true);
    expect(plain(step.value)).toEqual(plain(example.expected));
    expect(llm.remaining).toBe(0);
    expect(allTurns(step.turns)).toBe(example.replies.length);
    expect(step.turns.at(-1)?.status).toBe("returned");
  });

  it("has a well-formed definition: the expected answer fits the output schema, one program per reply, within the turn budget", () => {
    expect(example.output.safeParse(example.expected).success).toBe(true);
    expect(example.replies.length).toBeLessThanOrEqual(example.maxTurns);
    expect(Object.keys(example.tools).length).toBeGreaterThan(0);
    for (const reply of example.replies) {
      expect(reply.match(/```clojure\n/g)).toHaveLength(1);
      expect(extractProgram(reply).ok).toBe(true);
    }
  });

  it("calls its tools, and explores before it returns", async () => {
    const step = await runExample(example);
    expect(step.turns.flatMap((t) => t.toolCalls).length).toBeGreaterThan(0);
    expect(allTurns(step.turns)).toBeGreaterThanOrEqual(3);
    // Earlier turns print what the model needs to see next.
    expect(step.turns[0].prints.length).toBeGreaterThan(0);
  });

  it("reaches the same answer with compressed history", async () => {
    const step = await runExample(example, { compressHistory: true });
    expect(step.ok).toBe(true);
    expect(plain(step.value)).toEqual(plain(example.expected));
  });
});

describe("examples as a set", () => {
  it("has at least six scenarios with unique names, and finds them by name", () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);
    expect(new Set(examples.map((e) => e.name)).size).toBe(examples.length);
    for (const e of examples) expect(findExample(e.name)).toBe(e);
    expect(findExample("nope")).toBeUndefined();
  });

  it("fails the run when the transcript is wrong, so the tests above can fail", async () => {
    const reviews = findExample("reviews") as Example;
    const step = await runExample(reviews, { llm: scriptedLlm([...reviews.replies.slice(0, 2), '```clojure\n(return {:products ["Mouse"]})\n```']) });
    expect(step.ok).toBe(true);
    expect(plain(step.value)).not.toEqual(plain(reviews.expected));
  });
});

describe("recovery: an error in turn 2", () => {
  it("fails turn 2 with a type error, rolls back its definitions, and recovers in turn 3", async () => {
    const step = await runExample(findExample("recovery") as Example);
    const [t1, t2, t3] = step.turns;
    expect(t1.status).toBe("ok");
    expect(t2.status).toBe("error");
    expect(t2.error?.kind).toBe("type_error");
    expect(t2.definitions).toEqual([]);
    expect(t2.feedback).toMatch(/type_error/);
    expect(t2.memory.map((d) => d.name)).not.toContain("feb");
    expect(t3.status).toBe("ok");
    expect(t3.definitions.map((d) => d.name)).toEqual(expect.arrayContaining(["amount", "feb", "feb-total", "by-customer"]));
  });
});

describe("fanout: parallel tool calls", () => {
  it("runs the seven health checks of one pmap concurrently", async () => {
    const example = findExample("fanout") as Example;
    // Concurrency is counted, not timed: how many checks are in flight at once.
    let inFlight = 0;
    let most = 0;
    const health = example.tools["service-health"];
    const counted = tool({
      ...health,
      run: async (args, signal, ctx) => {
        most = Math.max(most, ++inFlight);
        try {
          return await health.run(args, signal, ctx);
        } finally {
          inFlight--;
        }
      },
    });
    const step = await runExample({ ...example, tools: { ...example.tools, "service-health": counted } });
    const calls = step.turns[1].toolCalls;
    expect(calls.map((c) => c.name)).toEqual(Array(7).fill("service-health"));
    expect(step.ok).toBe(true);
    expect(most).toBe(7);
  });
});

describe("budget-alert: a nested agent", () => {
  it("runs the analyst inside the first turn, with the caller's LLM, and records its run", async () => {
    const example = findExample("budget-alert") as Example;
    const llm = scriptedLlm(example.replies);
    const step = await runExample(example, { llm });
    expect(step.turns).toHaveLength(2);
    const [nested] = step.turns[0].nested ?? [];
    expect(nested.tool).toBe("category-analyst");
    expect(nested.ok).toBe(true);
    expect(nested.trace.turns.map((t) => t.status)).toEqual(["ok", "returned"]);
    expect(nested.trace.turns[0].toolCalls.map((c) => c.name)).toEqual(["list-expenses", "fx-rates"]);
    // One client served both agents, in call order.
    const asker = (m: string) => (m.includes("Total the approved expenses of 2026-03") ? "analyst" : m.includes("went over their monthly budget") ? "parent" : "?");
    expect(llm.requests.map((r) => asker(r.messages[1].content))).toEqual(["parent", "analyst", "analyst", "parent"]);
    expect(step.usage.nested.runs).toBe(1);
    expect(step.usage.nested.llmRequests).toBe(2);
  });
});

describe("a recorded example replays exactly", () => {
  const dir = mkdtempSync(join(tmpdir(), "ptc-examples-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("records the policy search and replays it to the same trace", async () => {
    const example = findExample("policy-search") as Example;
    const file = join(dir, "policy.jsonl");
    const live = await runExample(example, { llm: recordingLlm(scriptedLlm(example.replies), file, { fresh: true }) });
    const replay = replayLlm(file);
    const again = await runExample(example, { llm: replay });
    expect(replay.remaining).toBe(0);
    expect(again.value).toEqual(live.value);
    expect(again.turns.map((t) => [t.program, t.prints, t.usage.inputTokens])).toEqual(live.turns.map((t) => [t.program, t.prints, t.usage.inputTokens]));
  });

  it("stops with a clear divergence when the run no longer matches the recording", async () => {
    const example = findExample("policy-search") as Example;
    const file = join(dir, "diverge.jsonl");
    await runExample(example, { llm: recordingLlm(scriptedLlm(example.replies), file, { fresh: true }) });
    // Same recording, different data: the second prompt (with the first turn's output) differs.
    const step = await runExample(example, { llm: replayLlm(file), context: { extra: 1 } });
    expect(step.ok).toBe(false);
    expect(step.fail?.reason).toBe("llm_error");
    expect(step.fail?.message).toMatch(/request 1 differs from the recording: message 2 \(user\)/);
  });
});
