// Runs and reports for the viewer's tests: real runs of the examples (scripted, offline),
// saved as `ptc demo --trace-out` saves them, and a real `ptc compare` report.
import { findExample, type Example } from "../../examples/index.js";
import { runExample } from "../../examples/run.js";
import { runToJson } from "../../src/agent/saved-run.js";
import { SubAgent, type RunOptions } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { compareUnderCaches } from "../../src/harness/cache-models.js";
import { compareStrategies } from "../../src/harness/compare.js";
import type { Transcript } from "../../src/harness/transcript.js";
import { assistant, sys, user } from "../compaction/conversations.js";

/** The saved-run JSON of an example run. */
export async function savedExample(name: string, options: RunOptions = {}): Promise<string> {
  const step = await runExample(findExample(name) as Example, options);
  return runToJson(step);
}

/** The saved-run JSON of a run that paused on its second turn at a tool call waiting for approval. */
export async function pausedRunJson(): Promise<string> {
  const wipe = tool({ description: "Deletes everything.", needsApproval: true, run: () => "wiped" });
  const agent = SubAgent.create({ prompt: "Clean up.", tools: { wipe }, maxTurns: 3 });
  const code = (src: string) => `Next step.\n\n\`\`\`clojure\n${src}\n\`\`\``;
  const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(println "looking")'), code("(return (tool/wipe {}))")]) });
  return runToJson(step);
}

/**
 * The saved-run JSON of a run whose texts hold lines 1,500 characters wide with no space to
 * break at: a tool's error naming a long URL, a function's docstring, an exception's message.
 */
export async function wideRunJson(): Promise<string> {
  const url = `https://api.example.com/v1/search?q=${"a".repeat(1500)}`;
  const fetchPage = tool({ description: "Fetches a page.", run: () => Promise.reject(new Error(`502 from ${url}`)) });
  const agent = SubAgent.create({ prompt: "Fetch the page.", tools: { fetchPage }, maxTurns: 3 });
  const code = (src: string) => `\`\`\`clojure\n${src}\n\`\`\``;
  const programs = ["(tool/fetchPage {})", `(defn f "${"d".repeat(1500)}" [x] x)`, `(throw (ex-info "${url}" {}))`];
  const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)) });
  return runToJson(step);
}

/** Three small chats with a probe fact each, as `ptc compare` reads them (JSONL lines). */
export function chats() {
  return [3, 8, 14].map((rounds, t) => {
    const messages = [sys("You are helpful.")];
    for (let i = 1; i <= rounds; i++) {
      messages.push(user(`Request ${i}: look up item ${i}. ${"Details of the catalogue entry. ".repeat(20)}`));
      messages.push(assistant(`Item ${i} costs ${i * 10} euros (code Q${t}${i}X).`));
    }
    return { id: `chat-${t + 1}`, messages, probes: [{ fact: "code of item 1", value: `Q${t}1X`, introduced_at: 2, needed_at: [messages.length - 1] }] };
  });
}

export const chatsJsonl = (): string => chats().map((c) => JSON.stringify(c)).join("\n") + "\n";

/**
 * A `ptc compare --caches --json` report over the chats, one of them with a data problem as the
 * transcript reader notes it.
 */
export async function compareReportJson(): Promise<string> {
  const transcripts: Transcript[] = chats();
  transcripts[1] = { ...transcripts[1], problems: ["chats.jsonl:2: message 3: a tool result without its call: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)"] };
  const strategies = ["sliding-window:turns=2", "rolling-summary"].map((s) => {
    const [name, opt] = s.split(":");
    return opt === undefined ? name : { name, options: { turns: Number(opt.split("=")[1]) } };
  }) as never;
  const report = await compareStrategies(transcripts, strategies, { models: ["gpt-4o"] });
  const caches = await compareUnderCaches(transcripts, strategies, { model: "gpt-4o" });
  // A saving of 0.05%: it printed as "1.000x", no saving at all.
  report.rows[2].costRatio = 0.9995;
  // $0.00004 (a 16-token prompt at $2.5 per M): it printed as "$0.0000", as if free.
  report.rows[3].totals.cost = 0.00004;
  return JSON.stringify({ ...report, caches }, null, 2);
}

/**
 * A bare trace of two turns whose second prompt rewrites the task, changing one emoji for
 * another that shares its first UTF-16 unit (😀 U+1F600 and 🙂 U+1F642 both start \uD83D):
 * the prefix cache breaks inside the pair.
 */
export function emojiRewriteTraceJson(): string {
  const system = { role: "system", content: "System." };
  const reply = "```clojure\n(println 1)\n```";
  const turn = (number: number, messages: Array<{ role: string; content: string }>) => ({
    number,
    messages,
    reply,
    program: "(println 1)",
    status: "ok",
    prints: ["1"],
    toolCalls: [],
    definitions: [],
    memory: [],
    feedback: "Output:\n1",
    usage: { inputTokens: 10, outputTokens: 5, cachedTokens: 0, llmMs: 1, execMs: 1 },
  });
  const turns = [turn(1, [system, { role: "user", content: "Mood: 😀 today" }]), turn(2, [system, { role: "user", content: "Mood: 🙂 today" }, { role: "assistant", content: reply }, { role: "user", content: "Output:\n1" }])];
  return JSON.stringify({ version: 2, system: system.content, task: "Mood: 😀 today", turns });
}

/** A bare trace of `n` turns that each print a line, under the full history: a long run's page. */
export function longRunTraceJson(n: number): string {
  const system = "You are an agent.";
  const task = "Count.";
  const history = [
    { role: "system", content: system },
    { role: "user", content: task },
  ];
  const turns = [];
  for (let i = 1; i <= n; i++) {
    const program = `(println "step ${i}")`;
    const reply = "```clojure\n" + program + "\n```";
    const feedback = `Output:\nstep ${i}`;
    turns.push({ number: i, messages: [...history], reply, program, status: "ok", prints: [`step ${i}`], toolCalls: [], definitions: [], memory: [], feedback, usage: { inputTokens: 10 * i, outputTokens: 5, cachedTokens: 0, llmMs: 1, execMs: 1 } });
    history.push({ role: "assistant", content: reply }, { role: "user", content: feedback });
  }
  return JSON.stringify({ version: 2, system, task, turns });
}

/**
 * A bare trace of one turn whose texts a hostile tool or page could have written: markup, a
 * bidi override that shows a line reversed, zero-width and isolate characters, a terminal escape.
 */
export function hostileTraceJson(): string {
  const system = { role: "system", content: "System." };
  const hostile = 'ok <img src=x onerror="alert(1)"><script>alert(2)</script> \u202Eexif.exe\u202C end \u2066x\u2069 a\u200Bb \u001b[31mred';
  const program = `(println "${hostile.replace(/"/g, '\\"')}")`;
  const reply = "```clojure\n" + program + "\n```";
  const turn = {
    number: 1,
    messages: [system, { role: "user", content: `Task: ${hostile}` }],
    reply,
    program,
    status: "ok",
    // A tool's output of 100,000 zero-width spaces: each marked as an element, the page would hold as many.
    prints: [hostile, "\u200B".repeat(100_000)],
    toolCalls: [],
    definitions: [],
    memory: [],
    feedback: `Output:\n${hostile}`,
    usage: { inputTokens: 10, outputTokens: 5, cachedTokens: 0, llmMs: 1, execMs: 1 },
  };
  return JSON.stringify({ version: 2, system: system.content, task: `Task: ${hostile}`, turns: [turn] });
}

/**
 * A run as traces written before the agent scrubbed its records held it: the prompts scrubbed,
 * but the hidden values in the turns' output, tool calls, definitions, errors and feedback.
 */
export function olderTrace(json: string, values: Record<string, string>): string {
  const saved = JSON.parse(json) as { trace: { turns: Array<Record<string, unknown>> } };
  const unscrub = (text: string): string => Object.entries(values).reduce((t, [key, value]) => t.split(`data/${key}`).join(value), text);
  for (const turn of saved.trace.turns) {
    for (const field of ["prints", "toolCalls", "definitions", "memory", "error", "value", "feedback"]) {
      if (turn[field] !== undefined) turn[field] = JSON.parse(unscrub(JSON.stringify(turn[field])));
    }
  }
  return JSON.stringify(saved);
}
