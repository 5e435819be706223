// The public surface, pinned: a change to what "ptc-lisp" exports must change this list (and
// docs/api.md) on purpose, within 100 names for both entries. A consumer project compiled
// against the built declarations checks that the names it uses resolve and type-check.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import * as api from "../src/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Every name (values and types) each module exports, as the compiler sees it, from one program. */
function exportedNames(files: readonly string[]): string[][] {
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  return files.map((file) => {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`cannot read the exports of ${file}`);
    return checker.getExportsOfModule(module).map((s) => s.name).sort();
  });
}

const PUBLIC = ["Agent","AgentDefinition","AgentDefinitionError","AgentEvent","AgentFailure","ChatMessage","CompactOptions","CompactionContext","CompactionEvent","CompactionResult","CompareReport","CompressionReport","Conversation","ErrorInfo","EvalResult","EvalStats","EvaluateOptions","Json","Limits","Llm","LlmError","LlmRequest","LlmResponse","Memory","ModelPrice","ProxyOptions","ProxyStartError","ResumeError","RunOptions","RunState","RunTrace","RunningProxy","SavedRun","Step","Strategy","StrategyDefinition","StrategyRegistry","StrategySpec","SubAgent","Tool","ToolSpec","TraceFormatError","Transcript","Turn","TurnEvent","Value","ViewOptions","aiSdkLlm","anthropicLlm","compact","compareStrategies","compressionReport","countTokens","defaultLimits","defaultStrategies","evaluate","formatError","languageReference","loadTranscripts","messageText","modelPrice","openaiLlm","print","promptTokens","pureStrategy","recordingLlm","renderTable","replayLlm","restoreMemory","runFromJson","runStateFromJson","runStateToJson","runToJson","saveMemory","saveRun","scriptedLlm","startProxy","systemPrompt","tool","traceFromJson","traceToJson"];

/** What "ptc-lisp/advanced" adds. */
const ADVANCED = ["PromptView", "View", "compressedView", "extractProgram", "fullView", "planTurns", "renderFeedback", "renderSummary", "staticPrompt", "stateView"];

describe("the public API", () => {
  let index: string[] = [];
  let advanced: string[] = [];
  // The compiler reads the whole source tree once for both entries; slow on a loaded machine, so bounded generously.
  beforeAll(() => {
    [index, advanced] = exportedNames([join(root, "src/index.ts"), join(root, "src/advanced.ts")]);
  }, 300_000);

  it("exports exactly the pinned names, types included", () => {
    expect(index).toEqual(PUBLIC);
    expect(advanced).toEqual([...PUBLIC, ...ADVANCED].sort());
  });

  it("stays at most 100 names across both entries", () => {
    expect(new Set([...index, ...advanced]).size).toBeLessThanOrEqual(100);
  });

  it("exports at runtime exactly the pinned values", () => {
    const values = Object.keys(api).sort();
    expect(values.every((n) => PUBLIC.includes(n))).toBe(true);
    // Types vanish at runtime; what is left are the values.
    expect(values).toEqual(["AgentDefinitionError", "LlmError", "ProxyStartError", "ResumeError", "StrategyRegistry", "SubAgent", "TraceFormatError", "aiSdkLlm", "anthropicLlm", "compact", "compareStrategies", "compressionReport", "countTokens", "defaultLimits", "defaultStrategies", "evaluate", "formatError", "languageReference", "loadTranscripts", "messageText", "modelPrice", "openaiLlm", "print", "promptTokens", "pureStrategy", "recordingLlm", "renderTable", "replayLlm", "restoreMemory", "runFromJson", "runStateFromJson", "runStateToJson", "runToJson", "saveMemory", "saveRun", "scriptedLlm", "startProxy", "systemPrompt", "tool", "traceFromJson", "traceToJson"]);
  });

  it("documents every export in docs/api.md", () => {
    const doc = readFileSync(join(root, "docs/api.md"), "utf8");
    const missing = [...PUBLIC, ...ADVANCED].filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("states in docs/api.md how many names the entry offers", () => {
    const doc = readFileSync(join(root, "docs/api.md"), "utf8");
    expect(/by area: (\d+) names/.exec(doc)?.[1]).toBe(String(PUBLIC.length));
  });

  it("keeps the internals the pin once froze off both entries", () => {
    for (const name of ["finish", "spliceSummary", "payback", "recapOptionsFromEnv", "priceFor", "PriceModel", "createStrategy", "taskIndex", "isTool", "TOKENS_PER_REPLY", "sanitizeProgram", "totalsOf"]) {
      expect(index).not.toContain(name);
      expect(advanced).not.toContain(name);
    }
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
