// A run as OpenTelemetry spans, through `@opentelemetry/api` so any SDK and exporter (OTLP to
// Langfuse, Phoenix, Jaeger...) receives them. The tree and names follow the GenAI semantic
// conventions: `invoke_agent` for the run, `chat {model}` for each LLM call and
// `execute_tool {name}` for each tool call; the turn and the program's evaluation, which the
// conventions have no names for, are `ptc.turn` and `ptc.evaluate` spans between them. Nested
// agents (SubAgent.asTool) hang under the evaluation that called them.
//
// No span carries free text: no prompt, reply, program, printed line, argument or error
// message, only names, counts, kinds and token figures. So hidden context (`_` keys) cannot
// leak through an attribute, and a span's size never depends on the data.
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import type { ToolCallRecord } from "../lisp/index.js";
import type { LlmUsage } from "../llm/types.js";
import type { Replayed, RunObserver } from "./observer.js";
import { recordedTimeoutMs } from "./tools.js";

/** The `tracer` option: a Tracer, or "global" for the globally registered provider's. */
export type TracerOption = Tracer | "global";

const SCOPE = "ptc-lisp";

/** Whether `x` is a valid `tracer` option. */
export function isTracerOption(x: unknown): x is TracerOption {
  return x === "global" || (typeof x === "object" && x !== null && typeof (x as { startSpan?: unknown }).startSpan === "function");
}

/** The provider and model a client's name gives (`openai:gpt-5-mini`, `ai-sdk:anthropic.messages:claude-…`). */
export function providerOf(llm: string): { provider: string; model?: string } {
  const rest = llm.startsWith("ai-sdk:") ? llm.slice("ai-sdk:".length) : llm;
  const colon = rest.indexOf(":");
  if (colon < 0) return { provider: rest };
  return { provider: rest.slice(0, colon).split(".")[0], model: rest.slice(colon + 1) };
}

function usageAttributes(u: Pick<LlmUsage, "inputTokens" | "outputTokens" | "cachedTokens"> & { cacheWriteTokens?: number }): Attributes {
  const a: Attributes = { "gen_ai.usage.input_tokens": u.inputTokens, "gen_ai.usage.output_tokens": u.outputTokens, "gen_ai.usage.cache_read.input_tokens": u.cachedTokens };
  if (u.cacheWriteTokens !== undefined) a["gen_ai.usage.cache_creation.input_tokens"] = u.cacheWriteTokens;
  return a;
}

function failed(span: Span, kind: string): void {
  span.setAttribute("error.type", kind);
  // The kind alone: an error's message may quote data.
  span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
}

/**
 * The spans of one run. `parent` is the span a nested run hangs under (its caller's
 * evaluation); a top-level run hangs under whatever span is active where it was started.
 */
export function telemetryObserver(option: TracerOption, llmName: string, depth: number, parent: unknown): RunObserver {
  const tracer = option === "global" ? trace.getTracer(SCOPE) : option;
  const { provider, model } = providerOf(llmName);
  const base = context.active();
  const root = parent === undefined ? base : trace.setSpan(base, parent as Span);
  let run: Span | undefined;
  let turn: Span | undefined;
  let chat: Span | undefined;
  let evaluation: Span | undefined;
  const tools = new WeakMap<ToolCallRecord, Span>();
  let calls = 0;
  // What of the current turn retells the saved run (a resumed run): its spans say so, and a
  // replayed chat carries no tokens, which the saved run's spans counted already.
  let replayed: Replayed | undefined;
  const again = (): Attributes => (replayed === undefined ? {} : { "ptc.replayed": true });
  const ranAgain = (): Attributes => (replayed === "turn" ? { "ptc.replayed": true } : {});
  const under = (span: Span | undefined) => (span === undefined ? root : trace.setSpan(root, span));

  return unfailing({
    runStart(maxTurns) {
      run = tracer.startSpan(
        "invoke_agent",
        { kind: SpanKind.INTERNAL, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": provider, ...(model === undefined ? {} : { "gen_ai.request.model": model }), "ptc.agent.depth": depth, "ptc.max_turns": maxTurns } },
        root,
      );
    },
    turnStart(n, prompt) {
      replayed = prompt.replayed;
      const c = prompt.compaction;
      const v = prompt.view;
      turn = tracer.startSpan(
        "ptc.turn",
        {
          attributes: {
            "ptc.turn": n,
            "ptc.prompt.messages": prompt.messages,
            "ptc.compaction.messages_in": c.messagesIn,
            "ptc.compaction.messages_out": c.messagesOut,
            "ptc.compaction.tokens_in": c.tokensIn,
            "ptc.compaction.tokens_out": c.tokensOut,
            "ptc.compaction.llm_calls": c.llmCalls,
            "ptc.view.turns_compressed": v.turnsCompressed,
            "ptc.view.definitions_shown": v.definitionsShown,
            "ptc.view.println_shown": v.printlnShown,
            "ptc.view.println_dropped": v.printlnDropped,
            "ptc.view.tool_calls_shown": v.toolCallsShown,
            ...(replayed === undefined ? {} : { "ptc.replayed": replayed }),
          },
        },
        under(run),
      );
    },
    llmStart(n) {
      chat = tracer.startSpan(
        model === undefined ? "chat" : `chat ${model}`,
        { kind: SpanKind.CLIENT, attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": provider, ...(model === undefined ? {} : { "gen_ai.request.model": model }), "ptc.turn": n, ...again() } },
        under(turn),
      );
    },
    text: null,
    llmEnd(_n, end) {
      if (chat === undefined) return;
      if (end.usage !== undefined && replayed === undefined) chat.setAttributes(usageAttributes(end.usage));
      if (end.model !== undefined) chat.setAttribute("gen_ai.response.model", end.model);
      if (end.errorKind !== undefined) failed(chat, end.errorKind);
      chat.end();
      chat = undefined;
    },
    programStart(n, program) {
      evaluation = tracer.startSpan("ptc.evaluate", { attributes: { "ptc.turn": n, "ptc.program.chars": program.length, ...ranAgain() } }, under(turn));
    },
    toolCall(_n, call, done) {
      if (!done) {
        const id = ++calls;
        tools.set(
          call,
          tracer.startSpan(
            `execute_tool ${call.name}`,
            { attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.type": "function", "gen_ai.tool.call.id": String(id), ...(call.replayed === true ? { "ptc.replayed": true } : ranAgain()) } },
            under(evaluation ?? turn),
          ),
        );
        return;
      }
      const span = tools.get(call);
      if (span === undefined) return;
      if (call.error !== undefined) failed(span, recordedTimeoutMs(call.error) !== undefined ? "tool_timeout" : "tool_error");
      span.end();
    },
    print: () => undefined,
    programEnd(_n, end) {
      if (evaluation === undefined) return;
      evaluation.setAttribute("ptc.fuel_used", end.fuelUsed);
      // A program stopped for the host's approval did not fail.
      if (end.paused === true) evaluation.setAttribute("ptc.paused", true);
      else if (end.error !== undefined) failed(evaluation, end.error.kind);
      evaluation.end();
      evaluation = undefined;
    },
    turnEnd({ turn: t }) {
      if (turn === undefined) return;
      turn.setAttribute("ptc.turn.status", t.status);
      if (t.error !== undefined && t.status !== "ok" && t.status !== "paused") turn.setAttribute("error.type", t.error.kind);
      turn.end();
      turn = undefined;
    },
    runEnd(step) {
      if (run === undefined) return;
      // A turn cut short (the LLM call failed, the run was aborted) ends with the run.
      for (const open of [chat, evaluation, turn]) open?.end();
      const u = step.usage;
      run.setAttributes({ ...usageAttributes(u), "ptc.turns": step.turns.length, "ptc.llm_requests": u.llmRequests, "ptc.nested.runs": u.nested.runs, "ptc.compression.enabled": u.compression.enabled });
      const tokens = u.compression.tokens;
      if (tokens !== null) run.setAttributes({ "ptc.compression.full_tokens": tokens.fullTokens, "ptc.compression.view_tokens": tokens.viewTokens, "ptc.compression.saved": tokens.saved });
      if (step.ok) run.setStatus({ code: SpanStatusCode.OK });
      else failed(run, step.fail.reason);
      run.end();
    },
    parent: () => evaluation ?? turn ?? run,
  });
}

/** `f`, with what it throws ignored. */
function quietly<A extends unknown[]>(f: (...args: A) => void): (...args: A) => void {
  return (...args) => {
    try {
      f(...args);
    } catch {
      // A tracer or exporter that throws costs its spans, never the run (a host's observability bug).
    }
  };
}

/** The observer with every hook's failure ignored, as RunObserver requires. */
function unfailing(o: RunObserver): RunObserver {
  return {
    runStart: quietly(o.runStart),
    turnStart: quietly(o.turnStart),
    llmStart: quietly(o.llmStart),
    text: o.text === null ? null : quietly(o.text),
    llmEnd: quietly(o.llmEnd),
    programStart: quietly(o.programStart),
    toolCall: quietly(o.toolCall),
    print: quietly(o.print),
    programEnd: quietly(o.programEnd),
    turnEnd: quietly(o.turnEnd),
    runEnd: quietly(o.runEnd),
    parent: o.parent,
  };
}
