// The docs/agent.md "Tool approvals" example, run as written (only the package name is swapped
// for the sources): it pauses, is stored as JSON, resumes approved and sends the mail once.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(root, "docs/agent.md"), "utf8");
// Inside the project, so the example's bare imports resolve to its node_modules.
mkdirSync(join(root, "node_modules/.cache"), { recursive: true });
const dir = mkdtempSync(join(root, "node_modules/.cache/ptc-approval-example-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/agent.md, Tool approvals", () => {
  it("pauses for approval, then resumes from the stored JSON and sends once", async () => {
    const at = doc.indexOf("\n## Tool approvals\n");
    expect(at).toBeGreaterThan(0);
    const m = /```ts\n([\s\S]*?)\n```\n/.exec(doc.slice(at));
    expect(m).not.toBeNull();
    const code = (m as RegExpExecArray)[1].replaceAll('from "ptc-lisp"', `from ${JSON.stringify(join(root, "src/index.ts"))}`);
    const file = join(dir, "approval.ts");
    writeFileSync(file, `${code}\nexport {};\n`);
    const logged: unknown[][] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void logged.push(args));
    try {
      await import(file);
    } finally {
      spy.mockRestore();
    }
    expect(logged).toEqual([
      ["turn-1-call-1", "send", { to: "cfo@partner.org", body: "Q3" }],
      [{ queued: true }, ["cfo@partner.org"]],
    ]);
  });
});
