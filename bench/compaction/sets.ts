// The benchmark's own transcript sets, beside the shared corpora: multi-goal chats whose later
// goals need facts from earlier ones, coding sessions with large tool outputs, and PTC-Lisp
// agent sessions (bench/history's and the examples') with their turn records, so the
// interpreter-summaries strategy is measured on what it was built for.
import { sessions } from "../history/sessions/index.js";
import { runSession } from "../history/measure.js";
import { examples } from "../../examples/index.js";
import { runExample } from "../../examples/run.js";
import { runTranscript } from "../../src/harness/run-transcript.js";
import type { ChatMessage } from "../../src/llm/types.js";
import type { Probe, Transcript } from "../../src/harness/transcript.js";

const NAMES = ["Ashley", "Ortega", "Lin", "Okafor", "Marsh", "Bauer", "Ruiz", "Sato"];
const TIMES = ["17:40", "18:30", "19:15", "20:00", "07:45", "09:10"];
const DOMAINS = ["hotel", "restaurant", "taxi", "train"] as const;

/** Multi-goal chats: each goal's details early, and a later goal that needs an earlier one's. */
export function multiGoalChats(n: number): Transcript[] {
  const out: Transcript[] = [];
  for (let c = 0; c < n; c++) {
    // A greeting first: the task message then states no probe value (those would be left out as task-stated).
    const messages: ChatMessage[] = [
      { role: "system", content: "You are a helpful travel assistant." },
      { role: "user", content: "Hi! I am planning a trip and need a few bookings." },
      { role: "assistant", content: "Happy to help. What do you need first?" },
    ];
    const goals: Array<{ start: number; label: string }> = [];
    const probes: Probe[] = [];
    const name = NAMES[c % NAMES.length];
    const time = TIMES[c % TIMES.length];
    const people = String(2 + (c % 5));
    for (let g = 0; g < 4; g++) {
      const domain = DOMAINS[(c + g) % DOMAINS.length];
      // The first goal opens with the greeting (the corpora's first goal starts at the first user message).
      goals.push({ start: g === 0 ? 1 : messages.length, label: domain });
      if (g === 0) {
        const at = messages.length;
        messages.push({ role: "user", content: `I need a ${domain} for ${people} people under the name ${name}, around ${time}.` });
        probes.push({ fact: "booking name", value: name, introduced_at: at, needed_at: [] }, { fact: "time", value: time, introduced_at: at, needed_at: [] });
      } else {
        messages.push({ role: "user", content: `Next, I also need a ${domain}. Something near the centre would be good.` });
      }
      messages.push({ role: "assistant", content: `Certainly. I found three ${domain} options in the centre; the first is well reviewed and available.` });
      messages.push({ role: "user", content: `The first one is fine. Please book it.` });
      // The last goal's booking needs the name and time given for the first.
      if (g === 3) for (const p of probes) p.needed_at.push(messages.length);
      messages.push({ role: "assistant", content: g === 3 ? `Booked the ${domain} under the name ${name} at ${time} for ${people} people.` : `Done: your ${domain} is booked.` });
    }
    out.push({ id: `chat-${c}`, source: "own multi-goal chats", messages, goals, probes });
  }
  return out;
}

/** Coding sessions: a task naming a file, many tool calls with 150-line outputs, the file needed again at the end. */
export function codingSessions(n: number): Transcript[] {
  const out: Transcript[] = [];
  for (let c = 0; c < n; c++) {
    const target = `src/pkg_${c}/parser.py`;
    const messages: ChatMessage[] = [
      { role: "system", content: "You are a coding agent with a bash tool. Fix the issue." },
      { role: "user", content: "The function parse_header crashes on empty input. Fix it and run the tests." },
      // The file is found by a search, so the path to fix comes from tool output, not the task.
      { role: "assistant", content: "Finding the function.", tool_calls: [{ id: `call_${c}_grep`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "grep -rln 'def parse_header' src" }) } }] },
      { role: "tool", tool_call_id: `call_${c}_grep`, content: target },
    ];
    for (let s = 0; s < 16; s++) {
      const file = s === 0 ? target : `src/pkg_${c}/module_${s}.py`;
      const id = `call_${c}_${s}`;
      messages.push({ role: "assistant", content: `Step ${s + 1}: reading ${file}.`, tool_calls: [{ id, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `cat ${file}` }) } }] });
      messages.push({ role: "tool", tool_call_id: id, content: Array.from({ length: 150 }, (_, i) => `    line_${i} = compute(${i}, value_${s})  # ${file}`).join("\n") });
    }
    const last = messages.length;
    messages.push({ role: "assistant", content: "Applying the fix.", tool_calls: [{ id: `call_${c}_fix`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `sed -i 's/if header:/if header is not None and header:/' ${target}` }) } }] });
    messages.push({ role: "tool", tool_call_id: `call_${c}_fix`, content: "" });
    messages.push({ role: "assistant", content: "Fixed and tested." });
    out.push({ id: `coding-${c}`, source: "own coding sessions", messages, probes: [{ fact: "the file to fix", value: target, introduced_at: 3, needed_at: [last], mentions: [3, 4, 5] }] });
  }
  return out;
}

const SOURCE = "PTC-Lisp agent sessions";

export async function ptcSessions(): Promise<Transcript[]> {
  const out: Transcript[] = [];
  const add = (t: Transcript | undefined): void => void (t === undefined ? undefined : out.push(t));
  for (const s of sessions) add(runTranscript(s.name, (await runSession(s)).trace, SOURCE));
  for (const e of examples) {
    const step = await runExample(e);
    if (step.turns.length > 1) add(runTranscript(`example-${e.name}`, step.trace, SOURCE));
  }
  return out;
}
