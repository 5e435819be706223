// SubAgent: an LLM that works by writing PTC-Lisp programs, one per turn. The public face:
// create (definition.ts), run (the loop, loop.ts), asTool and resume.
import { z } from "zod";
import { hiddenName, hidePlaceholders, placeholders } from "./prompt/task.js";
import { quotedKey, tooLongToName } from "./prompt/context.js";
import { isFieldName, isSymbolName } from "../lisp/index.js";
import { create, isAgent } from "./definition.js";
import { kindOf } from "../llm/args.js";
import { AgentDefinitionError } from "./errors.js";
import { hiddenOutcome } from "../trace/redact.js";
import { eventQueue, type AgentEvent, type AgentStream } from "./events.js";
import { runAgent } from "./loop.js";
import { DEFAULTS, readRunOptions } from "./options.js";
import { resumeRun, saveRun, type ResumeOptions } from "./resume.js";
import { type RunState } from "../trace/run-state.js";
import { tool, type Tool, type ToolRunContext } from "./tools.js";
import type { Agent, AsToolOptions, OutputOf, RunOptions, Step } from "./types.js";

export type { AgentEvent, AgentStream } from "./events.js";
export type {
  Agent,
  AgentDefinition,
  AsToolOptions,
  CompressionUsage,
  InheritableOptions,
  OutputOf,
  RunOptions,
  RunScope,
  RunUsage,
  Step,
  TurnEvent,
  UsageTotals,
} from "./types.js";

/** Runs an agent to the end. Never throws: every ending is a Step with the trace so far. */
async function runTop<O extends z.ZodType | undefined>(agent: Agent<O>, options: RunOptions): Promise<Step<OutputOf<O>>> {
  if (!isAgent(agent)) throw new AgentDefinitionError(`SubAgent.run expects an agent made by SubAgent.create, got ${kindOf(agent)}`);
  return (await runAgent(agent as Agent, options ?? {}, null, { save: (step) => saveRun(step, agent as Agent), decisions: new Map(), replayedTurns: 0 })) as Step<OutputOf<O>>;
}

/**
 * Runs an agent and streams its events as they happen (`for await (const e of SubAgent.stream(...))`);
 * `.step` resolves to the same Step `run` gives, with the same trace. The events are those
 * `onEvent` is told (an `onEvent` passed here is told them too); the last is `run-finish`.
 */
function stream<O extends z.ZodType | undefined>(agent: Agent<O>, options: RunOptions = {}): AgentStream<Step<OutputOf<O>>> {
  const queue = eventQueue();
  // Read once, as run reads them: options that throw when read end the run with invalid_input
  // (the step says which) rather than throw the host's error from here, and an onEvent that is
  // not a function is refused as run refuses it.
  const read = readRunOptions(options ?? {});
  const own = typeof read === "string" ? undefined : read.onEvent;
  // The host's listener's result is handed on, so the run handles a promise it returns (unheard).
  const onEvent = (e: AgentEvent): unknown => {
    queue.push(e);
    return own?.(e);
  };
  const refused = typeof read === "string" || (own !== undefined && typeof own !== "function");
  const step = runTop(agent, refused ? options : { ...read, onEvent });
  step.then(
    () => queue.end(),
    (e: unknown) => queue.fail(e),
  );
  return Object.assign(queue.iterable, { step });
}

/** A nested run's value, or its failure as the tool's error. */
function outcome(step: Step): unknown {
  if (!step.ok) throw new Error(`${step.fail.reason}: ${step.fail.message}`);
  return step.value;
}

/** Offers an agent to other agents as a tool. The nested run inherits the caller's options (llm, limits...) unless the agent sets its own. */
function asTool<O extends z.ZodType | undefined>(agent: Agent<O>, given: AsToolOptions = {}): Tool<z.ZodObject, O> {
  if (!isAgent(agent)) throw new AgentDefinitionError("SubAgent.asTool expects an agent made by SubAgent.create");
  // An untyped host may pass null for no options, as run's options may be.
  const opts = given ?? {};
  const input = opts.input ?? z.object(Object.fromEntries(placeholders(agent.prompt).map((k) => [k, z.string()])));
  // An argument holding hidden context is passed as `_key`: a `_key` argument beside `key` would take its place.
  const keys = input instanceof z.ZodObject ? Object.keys(input.shape) : [];
  const unnamed = keys.find((k) => !isSymbolName(k));
  if (unnamed !== undefined) {
    throw new AgentDefinitionError(`SubAgent.asTool input key ${quotedKey(unnamed)} is not a name a program can read as data/<key>; rename it (a name such as product-id: no spaces, brackets or quotes, not starting with a digit)`);
  }
  // The nested run's limit is the agent's own when it sets one; inherited, it is the caller's
  // (which may raise it), known only when the call is made, where the prompt says the key cannot be read.
  const maxSourceChars = agent.options.limits?.maxSourceChars;
  const long = maxSourceChars === undefined ? undefined : keys.find((k) => tooLongToName(k, maxSourceChars));
  if (long !== undefined) {
    throw new AgentDefinitionError(`SubAgent.asTool input key ${quotedKey(long)} is longer than a program may name as data/<key> under the agent's limits.maxSourceChars (${String(maxSourceChars)}); shorten it`);
  }
  const clash = keys.find((k) => hiddenName(k) !== k && keys.includes(hiddenName(k)));
  if (clash !== undefined) {
    throw new AgentDefinitionError(`SubAgent.asTool input has both ${clash} and ${hiddenName(clash)}: a hidden ${clash} is passed to the nested agent as ${hiddenName(clash)}, so rename one`);
  }
  const description = opts.description ?? agent.description ?? `A sub-agent for: ${agent.prompt.trim().split("\n")[0]}`;
  const run = async (args: Record<string, unknown>, signal: AbortSignal, ctx?: ToolRunContext): Promise<unknown> => {
    // Called by a host rather than by an agent's program: there is no caller to inherit from, so it is a run of its own.
    if (ctx?.scope === undefined) return outcome(await runTop(agent as Agent, { context: args, signal }));
    const scope = ctx.scope;
    const maxDepth = scope.options.maxDepth ?? DEFAULTS.maxDepth;
    if (scope.depth + 1 > maxDepth) throw new Error(`max_depth_exceeded: agents may nest at most ${maxDepth} levels deep`);
    // Arguments that hold the caller's hidden context stay hidden from the nested agent's model:
    // they become hidden context keys (`_key`), and the mission names them as data/_key. One that
    // an input taking other keys passes on keyed by hidden context itself (a key made of a token)
    // is refused: as `_<token>` its key would be named wherever a stand-in for its value is.
    const hidden = ctx.hidden;
    if (hidden.some((k) => Object.hasOwn(args, k) && !keys.includes(k) && !isFieldName(k))) {
      throw new Error("an argument beyond the input's own keys is keyed by hidden context; pass its value under a key of the input");
    }
    const refused = scope.admitNested();
    if (refused !== undefined) throw new Error(refused);
    const nested = hidden.length === 0 ? agent : Object.freeze({ ...agent, prompt: hidePlaceholders(agent.prompt, hidden) });
    const context = hidden.length === 0 ? args : Object.fromEntries(Object.entries(args).map(([k, v]) => [hidden.includes(k) ? hiddenName(k) : k, v]));
    // Recorded as it starts: a caller whose program an abort stops still keeps the nested trace.
    const running = runAgent(nested as Agent, { context, signal }, scope);
    scope.addNested(ctx.name, running);
    const step = await running;
    // A failure's message shows hidden values as stand-ins already (loop.ts, failed); an answer
    // the nested run computed from hidden context is hidden from the caller's model too: from
    // hidden arguments, or, given none, from the caller's own that a tool it shares quoted.
    if (step.ok && hiddenOutcome(step.trace) !== undefined) ctx.hideResult();
    return outcome(step);
  };
  // The output type is only known as a schema here, so the run returns unknown.
  return tool<z.ZodObject, z.ZodType | undefined>({
    description,
    input,
    run,
    timeoutMs: opts.timeoutMs ?? Infinity,
    // The nested run already validated its value against the output schema.
    ...(agent.output !== undefined ? { output: agent.output, checkOutput: false } : {}),
    ...(opts.maxCalls !== undefined ? { maxCalls: opts.maxCalls } : {}),
  }) as Tool<z.ZodObject, O>;
}

/**
 * Continues a saved run (`saveRun` → `runStateToJson` → `runStateFromJson`) with the same
 * agent (its turn budget may be larger) and context: the saved turns are replayed from the
 * trace, then the run goes on with `options.llm`. Unlike `run`, it rejects with a
 * `ResumeError` when the state cannot be resumed (the run returned or failed, no turns
 * left, a replayed turn differs from the saved one). See `resumeRun` in `./resume.ts`.
 */
async function resume<O extends z.ZodType | undefined>(agent: Agent<O>, state: RunState, options: ResumeOptions = {}): Promise<Step<OutputOf<O>>> {
  // resume.ts runs agents through this module: loaded on first use, so neither module imports the other at load time.
  return (await resumeRun(agent as Agent, state, options)) as Step<OutputOf<O>>;
}

/** The agent API: `SubAgent.create(definition)`, `.run(agent, options)`, `.stream(agent, options)`, `.asTool(agent)`, `.resume(agent, state, options)`. */
export const SubAgent = Object.freeze({ create, run: runTop, stream, asTool, resume });
