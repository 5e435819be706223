// An unquoted long token (a URL, base64 or text the model forgot to quote) read as a name or
// number: the error quotes it cut short, not the whole token, since the agent sends the error
// back to the model.
import { describe, expect, it } from "vitest";
import { failure } from "../support/run.js";

describe("limits: errors quoting a long token of the source", () => {
  const long = "iVBORw0KGgo" + "A".repeat(100_000);
  const cases: Array<[string, string, RegExp]> = [
    ["an undefined symbol", `(str ${long})`, /^undefined symbol: iVBORw0KGgo/],
    ["a data/ key", `data/${long}`, /is not in the context$/],
    ["a tool", `(tool/${long})`, /^unknown tool: tool\/iVBORw0KGgo/],
    ["a namespace", `(${long}/x 1)`, /^unknown namespace/],
    ["an integer", "1".repeat(100_000), /is out of range \(integers are limited to ±9007199254740991\)$/],
    ["a tagged literal", `#${long} 1`, /is not supported$/],
  ];
  for (const [what, src, says] of cases) {
    it(`${what}: the message keeps its start and end, within 300 characters`, async () => {
      const e = await failure(src, { ctx: { a: 1 }, tools: { t: () => 1 } });
      expect(e.error.message.length).toBeLessThanOrEqual(300);
      expect(e.error.message).toMatch(says);
    });
  }
});
