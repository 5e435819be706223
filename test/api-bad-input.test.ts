// The public functions called by a careless or untyped host (plain JavaScript, JSON read from a
// file, a mocked object) with the wrong thing: each says which function and which argument, and
// what it got, instead of the engine's "Cannot read properties of null" from somewhere inside.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadTranscripts, SubAgent, tool, saveMemory, systemPrompt, traceToJson, runToJson, compact, compareStrategies, pureStrategy, StrategyRegistry, compressionReport, countTokens, messageText, startProxy, modelPrice, openaiLlm, anthropicLlm, aiSdkLlm, promptTokens, recordingLlm, renderTable, replayLlm, scriptedLlm } from "../src/index.js";
import { compareUnderCaches } from "../src/harness/cache-models.js";
import { MockLanguageModelV3 } from "ai/test";

const { proxy: revoked, revoke } = Proxy.revocable({}, {});
revoke();

/** Bad values, each with the words the error must use for it. */
const BAD: ReadonlyArray<[string, unknown, string]> = [
  ["null", null, "got null"],
  ["a number", 42, "got a number"],
  ["a revoked Proxy", revoked, "got an object that cannot be read"],
  ["a huge string", "x".repeat(2_000_000), "got a string of 2000000 characters"],
];
const UNDEFINED: [string, unknown, string] = ["undefined", undefined, "got undefined"];

const llm = () => scriptedLlm(["ok"]);
const http = () => openaiLlm({ model: "m", baseURL: "http://127.0.0.1:1/v1", maxRetries: 0, env: {} });
const anthropic = () => anthropicLlm({ model: "m", apiKey: "sk-ant-unused", baseURL: "http://127.0.0.1:1", maxRetries: 0, env: {} });
const aiSdk = () => aiSdkLlm({ model: new MockLanguageModelV3({ doGenerate: () => Promise.reject(new Error("not sent")) }), maxRetries: 0 });

/** A public call with one bad argument: its name, the call, and the words naming the argument. */
const ROWS: ReadonlyArray<{ call: string; run: (x: unknown) => unknown; names: string; optional?: boolean }> = [
  { call: "openaiLlm(options)", run: (x) => openaiLlm(x as never), names: "openaiLlm: options", optional: true },
  { call: "anthropicLlm(options)", run: (x) => anthropicLlm(x as never), names: "anthropicLlm: options", optional: true },
  { call: "aiSdkLlm(options)", run: (x) => aiSdkLlm(x as never), names: "aiSdkLlm: options" },
  { call: "scriptedLlm(replies)", run: (x) => scriptedLlm(x as never), names: "scriptedLlm: replies" },
  { call: "scriptedLlm(replies, options)", run: (x) => scriptedLlm([], x as never), names: "scriptedLlm: options", optional: true },
  { call: "replayLlm(source)", run: (x) => replayLlm(x as never), names: "replayLlm: source" },
  { call: "replayLlm(source, options)", run: (x) => replayLlm([], x as never), names: "replayLlm: options", optional: true },
  { call: "recordingLlm(inner)", run: (x) => recordingLlm(x as never, "/tmp/unused.jsonl"), names: "recordingLlm: inner" },
  { call: "recordingLlm(inner, file)", run: (x) => recordingLlm(llm(), x as never), names: "recordingLlm: file" },
  { call: "recordingLlm(inner, file, options)", run: (x) => recordingLlm(llm(), "/tmp/unused.jsonl", x as never), names: "recordingLlm: options", optional: true },
  { call: "recordingLlm(inner, file, { mode })", run: (x) => recordingLlm(llm(), "/tmp/unused.jsonl", { mode: x } as never), names: "recordingLlm: options.mode", optional: true },
  { call: "scriptedLlm().complete(request)", run: (x) => llm().complete(x as never), names: "scripted: complete: request" },
  { call: "scriptedLlm().complete({ messages })", run: (x) => llm().complete({ messages: x as never }), names: "scripted: complete: request.messages" },
  { call: "scriptedLlm().complete({ messages: [m] })", run: (x) => llm().complete({ messages: [x as never] }), names: "scripted: complete: request.messages[0]" },
  { call: "replayLlm().complete(request)", run: (x) => replayLlm([]).complete(x as never), names: "replay: complete: request" },
  { call: "recordingLlm().complete(request)", run: (x) => recordingLlm(llm(), "/tmp/unused.jsonl").complete(x as never), names: "scripted: complete: request" },
  { call: "openaiLlm().complete(request)", run: (x) => http().complete(x as never), names: "openai:m: complete: request" },
  { call: "openaiLlm().complete({ messages })", run: (x) => http().complete({ messages: x as never }), names: "openai:m: complete: request.messages" },
  { call: "messageText(message)", run: (x) => messageText(x as never), names: "messageText: message" },
  { call: "countTokens(text)", run: (x) => countTokens(x as never), names: "countTokens: text" },
  { call: "promptTokens(messages)", run: (x) => promptTokens(x as never), names: "promptTokens: messages" },
  { call: "promptTokens([message])", run: (x) => promptTokens([x as never]), names: "promptTokens: messages[0]" },
  { call: "compressionReport(trace)", run: (x) => compressionReport(x as never, { maxTurns: 5 }, {} as never), names: "compressionReport: trace" },
  { call: "renderTable(report)", run: (x) => renderTable(x as never), names: "renderTable: report" },
  { call: "SubAgent.create(definition)", run: (x) => SubAgent.create(x as never), names: "SubAgent.create expects a definition object" },
  { call: "SubAgent.run(agent)", run: (x) => SubAgent.run(x as never, { llm: llm() }), names: "SubAgent.run expects an agent made by SubAgent.create" },
  { call: "tool(definition)", run: (x) => tool(x as never), names: "tool() expects a definition object" },
  { call: "systemPrompt(agent)", run: (x) => systemPrompt(x as never), names: "systemPrompt: agent" },
  { call: "saveMemory(memory)", run: (x) => saveMemory(x as never), names: "saveMemory: memory" },
  { call: "traceToJson(trace)", run: (x) => traceToJson(x as never), names: "traceToJson expects a RunTrace" },
  { call: "runToJson(step)", run: (x) => runToJson(x as never), names: "runToJson expects a Step" },
  { call: "compact(messages)", run: (x) => compact(x as never, "full"), names: "compaction: messages" },
  { call: "compact(messages, strategy)", run: (x) => compact([], x as never), names: "compaction: strategy" },
  { call: "pureStrategy(definition)", run: (x) => pureStrategy(x as never), names: "pureStrategy: definition" },
  { call: "new StrategyRegistry(definitions)", run: (x) => new StrategyRegistry(x as never), names: "StrategyRegistry: definitions", optional: true },
  { call: "new StrategyRegistry([definition])", run: (x) => new StrategyRegistry([x as never]), names: "StrategyRegistry: definitions[0]" },
  { call: "loadTranscripts(file)", run: (x) => loadTranscripts(x as never), names: "loadTranscripts: file" },
  { call: "compareStrategies(transcripts)", run: (x) => compareStrategies(x as never, [], { models: [] } as never), names: "compareStrategies: transcripts" },
  { call: "compareStrategies(transcripts, strategies, options)", run: (x) => compareStrategies([], [], x as never), names: "compareStrategies: options" },
  // Before: "Cannot read properties of null (reading 'id')", "messages.findIndex is not a function".
  { call: "compareStrategies([transcript])", run: (x) => compareStrategies([x as never], [], { models: ["gpt-4o"] }), names: "compareStrategies: transcripts[0]" },
  { call: "compareStrategies([{ messages }])", run: (x) => compareStrategies([{ id: "t", messages: x as never }], [], { models: ["gpt-4o"] }), names: "compareStrategies: transcripts[0].messages" },
  // Before: "options.models.map is not a function", "Cannot read properties of undefined (reading '0')".
  { call: "compareStrategies({ models })", run: (x) => compareStrategies([], [], { models: x } as never), names: "compareStrategies: options.models" },
  { call: "compareStrategies({ models: [x] })", run: (x) => compareStrategies([], [], { models: ["gpt-4o", x] } as never), names: "compareStrategies: options.models[1]" },
  { call: "compareStrategies({ onProgress })", run: (x) => compareStrategies([{ id: "t", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "yo" }] }], [], { models: ["gpt-4o"], onProgress: x } as never), names: "compareStrategies: options.onProgress", optional: true },
  // Before: "registry.create is not a function", "Cannot read properties of null (reading 'create')".
  { call: "compareStrategies({ registry })", run: (x) => compareStrategies([{ id: "t", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "yo" }] }], ["full"], { models: ["gpt-4o"], registry: x } as never), names: "compareStrategies: options.registry", optional: true },
  { call: "startProxy(options)", run: (x) => startProxy(x as never), names: "startProxy: options", optional: true },
  // Before: "Cannot read properties of undefined (reading 'name')", thrown by complete() itself, not as its rejection.
  { call: "anthropicLlm().complete({ messages: [{ tool_calls }] })", run: (x) => anthropic().complete({ messages: [{ role: "assistant", content: "", tool_calls: x as never }] }), names: "anthropic:m: complete: request.messages[0].tool_calls", optional: true },
  { call: "aiSdkLlm().complete({ messages: [{ tool_calls: [call] }] })", run: (x) => aiSdk().complete({ messages: [{ role: "assistant", content: "", tool_calls: [x as never] }] }), names: "ai-sdk:mock-provider:mock-model-id: complete: request.messages[0].tool_calls[0]" },
  { call: "openaiLlm().complete({ messages: [{ tool_calls: [{ function }] }] })", run: (x) => http().complete({ messages: [{ role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: x as never }] }] }), names: "openai:m: complete: request.messages[0].tool_calls[0].function" },
  // Before: a string was spread into one-letter names, a revoked Proxy threw the engine's "Cannot perform 'IsArray'".
  { call: "startProxy({ allowedHosts })", run: (x) => startProxy({ port: 0, allowedHosts: x } as never), names: "startProxy: options.allowedHosts", optional: true },
  { call: "startProxy({ allowedHosts: [x] })", run: (x) => startProxy({ port: 0, allowedHosts: ["proxy.internal", x] } as never), names: "startProxy: options.allowedHosts" },
];

/** The engine's words for a bad read, which must not reach the host. */
const ENGINE = /Cannot read properties|is not (a function|iterable)|Cannot perform|Cannot destructure|Cannot convert|weak map key/;

describe("a public function given the wrong thing says which argument and what it got", () => {
  for (const row of ROWS) {
    for (const [label, value, got] of row.optional ? BAD : [UNDEFINED, ...BAD]) {
      // A huge string where a string is wanted is no bad value.
      // null tool calls are none, as a server's reply may carry them.
      if (label === "null" && row.call === "anthropicLlm().complete({ messages: [{ tool_calls }] })") continue;
      // 42 is a file mode (0o52).
      if (label === "a number" && row.call === "recordingLlm(inner, file, { mode })") continue;
      if (label === "a huge string" && ["countTokens(text)", "replayLlm(source)", "recordingLlm(inner, file)", "loadTranscripts(file)", "startProxy({ allowedHosts: [x] })", "compareStrategies({ models: [x] })"].includes(row.call)) continue;
      it(`${row.call} with ${label}`, async () => {
        let error: unknown;
        try {
          await row.run(value);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(Error);
        const message = (error as Error).message;
        expect(message).not.toMatch(ENGINE);
        expect(message.startsWith(row.names)).toBe(true);
        expect(message).toContain(got);
      });
    }
  }

  // Each client pairs a call with its result by id (Anthropic's tool_use, the AI SDK's toolCallId):
  // without one the request went out unpaired, or failed inside the SDK.
  for (const [who, client] of [["openai:m", http], ["anthropic:m", anthropic], ["ai-sdk:mock-provider:mock-model-id", aiSdk]] as const) {
    for (const [label, id, got] of [["no id", undefined, "got undefined"], ["a numeric id", 7, "got a number"]] as const) {
      it(`${who} refuses a tool call with ${label}`, async () => {
        const call = { ...(id === undefined ? {} : { id }), type: "function", function: { name: "f", arguments: "{}" } };
        const request = { messages: [{ role: "assistant" as const, content: "", tool_calls: [call as never] }, { role: "tool" as const, tool_call_id: "c1", content: "ok" }] };
        await expect(client().complete(request as never)).rejects.toThrow(`${who}: complete: request.messages[0].tool_calls[0].id must be a string, ${got}`);
      });
    }
  }

  // readFileSync takes a number for a file descriptor: 0 is standard input, which a server's never closes.
  it("loadTranscripts(0) does not read standard input", () => {
    expect(() => loadTranscripts(0 as never)).toThrow("loadTranscripts: file must be a file name, got a number");
  });

  it("compareStrategies names the transcript and message that is not one, and an id given twice", async () => {
    const hi = { role: "user", content: "hi" } as const;
    await expect(compareStrategies([{ id: "a", messages: [hi, { role: "assistant", content: 5 as never }] }], [], { models: ["gpt-4o"] })).rejects.toThrow(
      "compareStrategies: transcripts[0].messages[1] has content of type number (expected a string, null or content parts)",
    );
    await expect(compareStrategies([{ id: 5 as never, messages: [hi] }], [], { models: ["gpt-4o"] })).rejects.toThrow("compareStrategies: transcripts[0].id must be a string, got a number");
    // Counted twice in every total, its rows could not be told apart (loadTranscripts refuses it).
    await expect(compareStrategies([{ id: "a", messages: [hi] }, { id: "a", messages: [hi] }], [], { models: ["gpt-4o"] })).rejects.toThrow('compareStrategies: transcripts[1].id "a" is also the id of transcripts[0]: give each conversation its own id');
  });

  it("compareStrategies and compareUnderCaches refuse a registry that is no StrategyRegistry, and a definition whose create gives no strategy", async () => {
    const t = { id: "t", messages: [{ role: "user" as const, content: "hi" }, { role: "assistant" as const, content: "yo" }] };
    // Before: "registry.create is not a function", then "built.initialState is not a function".
    await expect(compareStrategies([t], ["full"], { models: ["gpt-4o"], registry: { create: () => ({}) } as never })).rejects.toThrow("compareStrategies: options.registry must be a StrategyRegistry (defaultStrategies.with(...) adds yours), got an object");
    // compareUnderCaches takes the same option, and refused it only with "registry.create is not a function".
    await expect(compareUnderCaches([t], ["full"], { registry: { create: () => ({}) } as never })).rejects.toThrow("compareUnderCaches: options.registry must be a StrategyRegistry (defaultStrategies.with(...) adds yours), got an object");
    for (const built of [5, {}, { name: "odd", initialState: () => null }]) {
      const registry = new StrategyRegistry([{ name: "odd", description: "a definition gone wrong", usesLlm: false, schema: z.object({}), create: () => built as never }]);
      await expect(compareStrategies([t], ["odd"], { models: ["gpt-4o"], registry })).rejects.toThrow(/^compaction: strategy "odd": what its definition's create gave must be a strategy \(with initialState and project\), got /);
    }
  });

  it("compareStrategies refuses an empty list of price models, instead of blaming a strategy", async () => {
    // Before: "compaction: strategy must be a strategy, its name or { name, options }, got undefined".
    await expect(compareStrategies([], ["recap"], { models: [] })).rejects.toThrow("compareStrategies: options.models must be a non-empty array of model names, got an empty array");
  });

  it("modelPrice names its argument when it is not a model name", () => {
    for (const [, value, got] of BAD.filter(([label]) => label !== "a huge string" && label !== "null")) {
      expect(() => modelPrice(value as never)).toThrow(`modelPrice: model must be a model name, ${got}`);
    }
    // JSON's word for no model.
    expect(modelPrice(null as never)).toEqual(modelPrice(undefined));
  });
});
