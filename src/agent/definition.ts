// SubAgent.create: an agent definition checked once and frozen.
import { z } from "zod";
import { AgentDefinitionError } from "./errors.js";
import { isObjectArg, kindOf } from "../llm/args.js";
import { checkInheritable, DEFAULTS, pickInheritable } from "./options.js";
import type { HistoryView } from "../history/legend.js";
import { unwritable } from "./prompt/shape.js";
import { systemPrompt } from "./prompt/system.js";
import { isTool, TOOL_NAME } from "./tools.js";
import { AGENT, type Agent, type AgentDefinition } from "./types.js";

export function create<O extends z.ZodType | undefined = undefined>(def: AgentDefinition<O>): Agent<O> {
  const fail = (message: string): never => {
    throw new AgentDefinitionError(message);
  };
  if (!isObjectArg(def)) fail(`SubAgent.create expects a definition object, got ${kindOf(def)}`);
  if (typeof def.prompt !== "string" || def.prompt.trim() === "") fail("an agent needs a prompt (its mission)");
  const maxTurns = def.maxTurns ?? DEFAULTS.maxTurns;
  if (!Number.isInteger(maxTurns) || maxTurns < 1 || maxTurns > 1000) fail(`maxTurns must be an integer from 1 to 1000, got ${String(def.maxTurns)}`);
  const tools = def.tools ?? {};
  if (typeof tools !== "object" || tools === null) fail("tools must be an object of name → tool({...})");
  for (const [name, t] of Object.entries(tools)) {
    if (!TOOL_NAME.test(name)) fail(`tool name '${name}' cannot be called as tool/${name}: use letters, digits and -`);
    if (!isTool(t)) fail(`tool '${name}' must be created with tool({ description, input, run })`);
  }
  if (def.output !== undefined && !(def.output instanceof z.ZodType)) fail("output must be a zod schema");
  const unfit = def.output && unwritable(def.output);
  if (unfit) fail(`output schema: ${unfit}; every run would end max_turns_exceeded`);
  checkInheritable(def, fail);
  const agent: Agent<O> = {
    prompt: def.prompt,
    tools: Object.freeze({ ...tools }),
    maxTurns,
    options: Object.freeze(pickInheritable(def)),
    [AGENT]: true,
    ...(def.output !== undefined ? { output: def.output } : {}),
    ...(def.description !== undefined ? { description: def.description } : {}),
  };
  return Object.freeze(agent);
}

export function isAgent(x: unknown): x is Agent {
  return isObjectArg(x) && (x as Partial<Agent>)[AGENT] === true;
}

const systemPrompts = new WeakMap<Agent, Partial<Record<HistoryView, string>>>();

/** The agent's system prompt under a history view, built once per agent and view. */
export function systemOf(agent: Agent, view: HistoryView): string {
  let byView = systemPrompts.get(agent);
  if (byView === undefined) systemPrompts.set(agent, (byView = {}));
  return (byView[view] ??= systemPrompt(agent, view));
}
