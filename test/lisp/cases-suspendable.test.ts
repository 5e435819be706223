// The whole .lisp case suite again, compiled in the suspendable mode (compile-async.ts), which
// the interpreter uses for every program that can reach a tool. The two compilers must agree on
// every program (docs/architecture.md): the plain suite runs the synchronous one.
//
// A program takes the suspendable mode when tools are given and it calls one, or when memory
// holds a function (which may call one). So each case runs with a tool and with memory holding
// a function that calls it; the first test shows that this really selects the mode.
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, type Memory } from "../../src/lisp/evaluate.js";
import { run } from "../../src/lisp/runtime.js";
import { caseFiles, checkCase, type Case } from "../support/cases.js";

// Reads the running program's compile mode; `run` is the interpreter's live current state.
const tools = { mode: () => (run.suspendable ? "suspendable" : "synchronous") };
let memory: Memory;

beforeAll(async () => {
  const r = await evaluate("(defn compile-mode [] (tool/mode))", { tools });
  if (!r.ok) throw new Error(r.error.message);
  memory = r.memory;
});

describe("the suspendable mode", () => {
  it("is what a program without a tool call of its own gets, given a tool and a function in memory", async () => {
    const r = await evaluate("(compile-mode)", { tools, memory });
    expect(r.ok && r.value).toBe("suspendable");
  });
});

// An unknown tool's message lists the tools there are, and these runs have one: its kind and
// position are checked, not the words.
const withTool = (c: Case): Case => (c.error?.kind === "unknown_tool" ? { ...c, error: { ...c.error, text: undefined } } : c);

for (const [file, cases] of caseFiles()) {
  describe(`${file}, suspendable`, () => {
    for (const c of cases) it(`line ${c.line}: ${c.source.replace(/\s+/g, " ").slice(0, 70)}`, () => checkCase(withTool(c), { tools, memory }));
  });
}
