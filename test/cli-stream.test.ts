// `ptc demo --stream`: the run shown live on stderr (the reply as it is written, tool calls,
// printed lines) while stdout stays what it is without the flag.
import { describe, expect, it } from "vitest";
import { findExample, type Example } from "../examples/index.js";
import { runDemoCommand } from "../src/cli/demo.js";
import { capture } from "./support/capture.js";

const reviews = findExample("reviews") as Example;

describe("ptc demo --stream", () => {
  it("shows each reply as it is written, the tool calls and the printed lines, on stderr", async () => {
    const streamed = await capture((io) => runDemoCommand(["reviews", "--stream"], io));
    expect(streamed.code).toBe(0);
    const err = streamed.err;
    expect(err).toContain("── turn 1 (live) ──\n");
    // The first reply, written out whole from its pieces, before the first tool call.
    const first = err.indexOf(reviews.replies[0]);
    expect(first).toBeGreaterThan(0);
    const call = err.indexOf("→ tool/");
    expect(call).toBeGreaterThan(first);
    expect(err).toMatch(/← tool\/[\w-]+ \(\d+ ms\)\n/);
    expect(err).toMatch(/\n\| .+\n/);
    expect(err.match(/── turn \d+ \(live\) ──/g)).toHaveLength(reviews.replies.length);

    const plain = await capture((io) => runDemoCommand(["reviews"], io));
    expect(plain.err).toBe("");
    const timeless = (s: string) => s.replace(/[\d,]+(\.\d+)? ?ms/g, "N ms");
    expect(timeless(streamed.out)).toBe(timeless(plain.out));
  });
});
