// The public surface, pinned: a change to what "ptc-lisp" exports must change this list (and
// docs/api.md) on purpose. A consumer project compiled against the built declarations checks
// that every type used in a public signature can be imported.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import * as api from "../src/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Every name (values and types) a module exports, as the compiler sees it. */
function exportedNames(file: string): string[] {
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`cannot read the exports of ${file}`);
  return checker.getExportsOfModule(module).map((s) => s.name).sort();
}

const PUBLIC = ["Agent","AgentDefinition","AgentDefinitionError","AgentEvent","AgentFailure","AiSdkLlmOptions","AnthropicLlmOptions","AsToolOptions","ChatMessage","CompactOptions","CompactionContext","CompactionEvent","CompactionEventKind","CompactionResult","CompactionStats","CompressionReport","CompressionTotals","CompressionUsage","ContentPart","Conversation","Definition","DefinitionTrace","ErrorInfo","ErrorKind","EvalFailure","EvalResult","EvalStats","EvalSuccess","EvaluateOptions","FailReason","FullReason","GoalDetector","InheritableOptions","Json","Limits","Llm","LlmError","LlmErrorDetails","LlmErrorKind","LlmRequest","LlmResponse","LlmUsage","Memory","MemoryEntry","NestedRunTrace","OpenAiLlmOptions","Outcome","OutputOf","PriceModel","PromptCompression","PromptView","RUN_STATE_VERSION","RecordedCall","RecordingOptions","ReplayLlm","ReplayOptions","ResumeError","ResumeOptions","RetryInfo","Role","RunOptions","RunScope","RunSettings","RunState","RunTrace","RunUsage","SaveOptions","SavedDefinition","SavedRun","ScriptedLlm","ScriptedLlmOptions","ScriptedReply","Step","Strategy","StrategyDefinition","StrategyInfo","StrategyRegistry","StrategySpec","SubAgent","Summarizer","SummaryRequest","SummaryResult","TRACE_VERSION","TextMessage","Tool","ToolCall","ToolCallRecord","ToolCallTrace","ToolDefinition","ToolFn","ToolInput","ToolResult","ToolRunContext","ToolSpec","TraceFormatError","TraceMessage","TraceSettings","Trigger","TriggerDecision","TriggerSpec","Turn","TurnEvent","TurnStatus","TurnUsage","UsageTotals","Value","View","ViewInput","ViewOptions","ViewStats","aiSdkLlm","anthropicLlm","compact","compressedView","compressionReport","contextLimit","countTokens","createStrategy","createTrigger","defaultLimits","defaultStrategies","defaultViewOptions","estimatePromptTokens","evaluate","finish","formatError","fullView","heuristicGoalDetector","isTool","isUnitStart","languageReference","listStrategies","llmGoalDetector","loadRecording","messageText","openaiLlm","payback","priceFor","priceModel","print","promptTokens","recapOptionsFromEnv","recordingLlm","replayLlm","requestCost","restoreMemory","resumeRun","roleOrderProblems","runFromJson","runStateFromJson","runStateToJson","runToJson","saveMemory","saveRun","scriptedLlm","spliceSummary","systemPrompt","taskIndex","tool","traceFromJson","traceToJson","turnStarts"];

describe("the public API", () => {
  it("exports exactly the pinned names, types included", () => {
    expect(exportedNames(join(root, "src/index.ts"))).toEqual(PUBLIC);
  });

  it("exports at runtime exactly the pinned values", () => {
    const values = Object.keys(api).sort();
    expect(values.every((n) => PUBLIC.includes(n))).toBe(true);
    // Types vanish at runtime; what is left are the values.
    expect(values).toEqual(["AgentDefinitionError", "LlmError", "RUN_STATE_VERSION", "ResumeError", "StrategyRegistry", "SubAgent", "TRACE_VERSION", "TraceFormatError", "aiSdkLlm", "anthropicLlm", "compact", "compressedView", "compressionReport", "contextLimit", "countTokens", "createStrategy", "createTrigger", "defaultLimits", "defaultStrategies", "defaultViewOptions", "estimatePromptTokens", "evaluate", "finish", "formatError", "fullView", "heuristicGoalDetector", "isTool", "isUnitStart", "languageReference", "listStrategies", "llmGoalDetector", "loadRecording", "messageText", "openaiLlm", "payback", "priceFor", "priceModel", "print", "promptTokens", "recapOptionsFromEnv", "recordingLlm", "replayLlm", "requestCost", "restoreMemory", "resumeRun", "roleOrderProblems", "runFromJson", "runStateFromJson", "runStateToJson", "runToJson", "saveMemory", "saveRun", "scriptedLlm", "spliceSummary", "systemPrompt", "taskIndex", "tool", "traceFromJson", "traceToJson", "turnStarts"]);
  });

  it("documents every export in docs/api.md", () => {
    const doc = readFileSync(join(root, "docs/api.md"), "utf8");
    const missing = PUBLIC.filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("keeps renderer internals out of the main entry, in ptc-lisp/advanced", () => {
    const advanced = exportedNames(join(root, "src/advanced.ts"));
    for (const name of ["planTurns", "isErrored", "definitionLine", "toolLine", "TOKENS_PER_REPLY", "sanitizeProgram", "totalsOf"]) {
      expect(PUBLIC).not.toContain(name);
      expect(advanced).toContain(name);
    }
    // The advanced entry is a superset: nothing public needs a second import.
    expect(PUBLIC.every((n) => advanced.includes(n))).toBe(true);
  });
});

describe("a consumer project", () => {
  beforeAll(() => {
    if (!existsSync(join(root, "dist/src/index.d.ts"))) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
  });

  it("compiles against the built declarations, with the output type checked", () => {
    const dir = join(root, "test/consumer");
    const config = ts.getParsedCommandLineOfConfigFile(join(dir, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    if (!config) throw new Error("cannot read test/consumer/tsconfig.json");
    const program = ts.createProgram(config.fileNames, config.options);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    // Unused @ts-expect-error lines are errors too: the two wrong typings must stay rejected.
    expect(problems).toEqual([]);
    // It resolved "ptc-lisp" to the package's own build, not to the sources.
    const resolved = program.getSourceFiles().map((f) => f.fileName);
    expect(resolved.some((f) => f.endsWith("dist/src/index.d.ts"))).toBe(true);
    expect(resolved.some((f) => f.endsWith("dist/src/advanced.d.ts"))).toBe(true);
  });
});

describe("the package", () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string>; dependencies: Record<string, string>; exports: Record<string, unknown> };

  it("runs nothing in a consumer's install: no prepare or install scripts, the build made at pack time", () => {
    for (const hook of ["prepare", "preinstall", "install", "postinstall"]) expect(pkg.scripts[hook]).toBeUndefined();
    expect(pkg.scripts.prepack).toBe("npm run build");
  });

  it("depends on nothing it does not import", () => {
    const sources = execFileSync("git", ["ls-files", "src"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((f) => f.endsWith(".ts"))
      .map((f) => readFileSync(join(root, f), "utf8"))
      .join("\n");
    const unused = Object.keys(pkg.dependencies).filter((dep) => !sources.includes(`from "${dep}`));
    expect(unused).toEqual([]);
  });

  it("keeps npm pack output out of git", () => {
    expect(readFileSync(join(root, ".gitignore"), "utf8").split("\n")).toContain("*.tgz");
  });
});
