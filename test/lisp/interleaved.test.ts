// Evaluations in the host's thread take turns at their tool calls: each stretch between two tool
// results must run as its own evaluation (its context, tools, output, limits), whichever
// evaluation ran the stretch before (two clients of one server, a saved run resumed twice).
import { describe, expect, it } from "vitest";
import { evaluate, type EvalResult } from "../../src/lisp/evaluate.js";

describe("evaluations interleaved in one thread", () => {
  it("each reads its own context, calls its own tools and prints to its own output after a tool call", async () => {
    // A barrier: each program's first call answers once both programs have made it, so the two
    // evaluations are both waiting when the first goes on.
    let arrived = 0;
    let open: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (open = resolve));
    const calls: string[] = [];
    const run = (who: string): Promise<EvalResult> =>
      evaluate('(tool/wait {})\n(println "I am" data/who (count data/_pin))\n(tool/send {:x data/who})\n(tool/send {:x data/_pin})', {
        ctx: { who, _pin: `${who}-pin-4711` },
        tools: {
          wait: async () => {
            if (++arrived === 2) open();
            await both;
            return null;
          },
          send: ({ x }) => (calls.push(`${who}'s tool got ${String(x)}`), x),
        },
        isolation: "none",
      });
    const [alice, bob] = await Promise.all([run("alice"), run("bob")]);
    expect(alice.prints).toEqual(["I am alice 14"]);
    expect(bob.prints).toEqual(["I am bob 12"]);
    expect(alice.ok && alice.value).toBe("alice-pin-4711");
    expect(bob.ok && bob.value).toBe("bob-pin-4711");
    expect(calls.sort()).toEqual(["alice's tool got alice", "alice's tool got alice-pin-4711", "bob's tool got bob", "bob's tool got bob-pin-4711"]);
  });
});
