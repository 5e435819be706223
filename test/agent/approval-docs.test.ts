// The docs/agent.md "Tool approvals" example, run as written (only the package name is swapped
// for the sources): it pauses, is stored as JSON, resumes approved and sends the mail once.
import { describe, expect, it } from "vitest";
import { docExamples } from "../support/doc-examples.js";

const docs = docExamples("docs/agent.md");

describe("docs/agent.md, Tool approvals", () => {
  it("pauses for approval, then resumes from the stored JSON and sends once", async () => {
    const { logged } = await docs.run("approval", docs.example("\n## Tool approvals\n"));
    expect(logged).toEqual([
      ["turn-1-call-1", "send", { to: "cfo@partner.org", body: "Q3" }],
      [{ queued: true }, ["cfo@partner.org"]],
    ]);
  });
});
