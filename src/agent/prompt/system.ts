// The system prompt: the static part first (role and rules, the generated language
// reference, common mistakes, turn rules and, with the full history, its note on `Stored:`),
// identical for every agent with the same turn mode and view, then the agent's
// tools and expected output. Nothing in it changes between turns, so providers can cache it
// whole; per-turn news goes into the user messages.
import type { z } from "zod";
import { historySection, type HistoryView } from "../../history/legend.js";
import type { Tool } from "../tools.js";
import { languageReference } from "./reference.js";
import { shapeOf } from "./shape.js";
import { fill, template } from "../../llm/templates.js";
import { isObjectArg, mustBe } from "../../llm/args.js";

/** The part of an agent the system prompt depends on. */
export interface PromptAgent {
  readonly tools: Readonly<Record<string, Tool>>;
  readonly output?: z.ZodType;
  readonly maxTurns: number;
}

/**
 * The agent-independent prefix: role, rules, language reference, mistakes, turn rules, and
 * with several turns the full history's note on its `Stored:` list (the compressed view's
 * legend heads its first summary instead).
 */
export function staticPrompt(multiTurn: boolean, view: HistoryView = "full"): string {
  const parts = [template("role"), fill(template("language"), { reference: languageReference() }), template("mistakes")];
  if (multiTurn) parts.push(template("multi-turn"), historySection(view));
  else parts.push(template("single-turn"));
  return parts.filter((p) => p !== "").join("\n\n");
}

/**
 * A system prompt as an agent with `multiTurn` sends it: a prompt written for the other turn mode
 * (a run resumed with another `maxTurns`) has its static part swapped, its agent part kept. A
 * prompt with neither static part (a custom one) is returned as it is.
 */
export function withTurnMode(system: string, multiTurn: boolean): string {
  // The full view's static part first: the compressed view's is a prefix of it.
  for (const other of [staticPrompt(!multiTurn, "full"), staticPrompt(!multiTurn, "compressed")]) {
    if (system.startsWith(`${other}\n\n`)) return staticPrompt(multiTurn) + system.slice(other.length);
  }
  return system;
}

function indent(lines: readonly string[]): string {
  return lines.map((l) => "  " + l).join("\n");
}

/** One entry per tool: signature line, description, described arguments, call cap. */
export function toolsSection(tools: Readonly<Record<string, Tool>>): string {
  const entries = Object.entries(tools);
  if (entries.length === 0) return "No tools are available: work with the input data only.";
  return entries
    .map(([name, t]) => {
      const args = shapeOf(t.input);
      const result = t.output !== undefined ? shapeOf(t.output, "output").text : "any";
      const notes = [...t.description.trim().split("\n"), ...args.fields];
      if (t.maxCalls !== undefined) notes.push(`At most ${t.maxCalls} call${t.maxCalls === 1 ? "" : "s"} per run.`);
      return `tool/${name} ${args.text} -> ${result}\n${indent(notes)}`;
    })
    .join("\n\n");
}

/** What (return ...) must satisfy: the shape, its described fields, and an example. */
export function outputSection(output: z.ZodType | undefined): string {
  if (output === undefined) return "Finish with `(return value)`; any value is accepted.";
  const shape = shapeOf(output);
  const lines = ["Finish with `(return value)` where the value has this shape:", shape.text];
  if (shape.description !== undefined) lines.push(shape.description);
  lines.push(...shape.fields, `For example: (return ${shape.example})`);
  return lines.join("\n");
}

/** The whole system prompt of an agent under a history view. Pure: the same agent and view always give the same bytes. */
export function systemPrompt(agent: PromptAgent, view: HistoryView = "full"): string {
  if (!isObjectArg(agent) || !isObjectArg(agent.tools)) throw new TypeError(mustBe("systemPrompt: agent", "an agent made by SubAgent.create (with tools and maxTurns)", agent));
  return staticPrompt(agent.maxTurns > 1, view) + "\n\n" + fill(template("agent"), { tools: toolsSection(agent.tools), output: outputSection(agent.output) });
}
