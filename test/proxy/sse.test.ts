// The SSE tap on its own: whatever the chunking, the client gets the stream byte for byte, minus
// the usage-only event when the proxy asked for usage itself, and the usage is read either way.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { ReplyUsage } from "../../src/proxy/reply-usage.js";
import { SseTap } from "../../src/proxy/sse.js";

const chunk = (content: string, usage = false) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }], ...(usage ? { usage: null } : {}) })}`;
const usageEvent = `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 3 } })}`;

function run(tap: SseTap, text: string, cuts: number[]): string {
  const bytes = Buffer.from(text);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    if (p < from) continue;
    out.push(tap.push(bytes.subarray(from, p)));
    from = p;
  }
  out.push(tap.end());
  return Buffer.concat(out).toString();
}

describe("SseTap", () => {
  // The SSE spec ends a line with LF, CRLF or a lone CR; a blank line ends an event.
  const sep = ["\n\n", "\r\n\r\n", "\r\r"];
  it("passes every byte but the usage-only event, however the stream is cut", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }), fc.constantFrom(...sep), fc.array(fc.nat(), { maxLength: 8 }), (words, s, cuts) => {
        const head = [": keep-alive comment", ...words.map((w) => chunk(`${w} é`, true))].map((e) => e + s).join("");
        const tail = `data: [DONE]${s}`;
        const tap = new SseTap(true);
        expect(run(tap, head + usageEvent + s + tail, cuts)).toBe(head + tail);
        expect(tap.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
        const plain = new SseTap(false);
        expect(run(plain, head + usageEvent + s + tail, cuts)).toBe(head + usageEvent + s + tail);
        expect(plain.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
      }),
      { numRuns: 300 },
    );
  });

  it("reads the usage of an event too long to hold back (a Responses reply carrying a generated image)", () => {
    const image = "iVBORw0KGgo".repeat(300_000);
    const completed = `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", response: { output: [{ type: "image_generation_call", result: image }], usage: { input_tokens: 11, output_tokens: 1500 } } })}\n\n`;
    const text = `event: response.created\ndata: {"type":"response.created"}\n\n${completed}`;
    const tap = new SseTap(false);
    // In reads of 64 KB, as a socket delivers it.
    expect(run(tap, text, Array.from({ length: Math.ceil(text.length / 65536) }, (_, i) => i * 65536))).toBe(text);
    // Before: undefined, so the reply was charged as if it reported nothing.
    expect(tap.usage).toEqual({ promptTokens: 11, completionTokens: 1500 });
  });

  it("passes an event whose lines end in a lone CR as soon as it ends, and reads its usage", () => {
    // Before, no boundary was found: every event was held back until the stream ended (or 1 MB
    // later), and the usage event, read as one line, was never found.
    const tap = new SseTap(true);
    const first = `${chunk("hi")}\r\r`;
    expect(tap.push(Buffer.from(first)).toString()).toBe(first);
    expect(tap.push(Buffer.from(`event: x\r${usageEvent}\r\r`)).toString()).toBe("");
    expect(tap.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
    expect(tap.push(Buffer.from("data: [DONE]\r\r")).toString()).toBe("data: [DONE]\r\r");
    expect(tap.end().toString()).toBe("");
  });

  it("holds back a CRLF event cut between the CR and LF of its blank line, so a dropped usage event leaves no stray LF", () => {
    const tap = new SseTap(true);
    expect(tap.push(Buffer.from(`${usageEvent}\r\n\r`)).toString()).toBe("");
    expect(tap.push(Buffer.from("\ndata: [DONE]\r\n\r\n")).toString()).toBe("data: [DONE]\r\n\r\n");
    expect(tap.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
  });

  it("keeps a usage field on an event that also has choices", () => {
    const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "x" } }], usage: { prompt_tokens: 5, completion_tokens: 1 } })}\n\n`;
    const tap = new SseTap(true);
    expect(tap.push(Buffer.from(event)).toString()).toBe(event);
    expect(tap.usage?.promptTokens).toBe(5);
  });
  it("joins an event's data lines with a line feed, as the SSE spec and the clients' parsers do", () => {
    // Pretty-printed across data lines: the same JSON either way.
    const pretty = new SseTap(false);
    pretty.push(Buffer.from('data: {"choices": [],\ndata:  "usage": {"prompt_tokens": 7, "completion_tokens": 2}}\n\n'));
    expect(pretty.usage).toEqual({ promptTokens: 7, completionTokens: 2 });
    // A number broken across two data lines is "1\n2" to a client, which no JSON parser reads.
    const split = new SseTap(true);
    const event = 'data: {"choices":[],"usage":{"prompt_tokens":1\ndata: 2,"completion_tokens":3}}\n\n';
    // Before: read as 12 prompt tokens, and the event dropped as usage-only.
    expect(split.push(Buffer.from(event)).toString()).toBe(event);
    expect(split.usage).toBeUndefined();
  });
  it("reads a usage event whose JSON starts after more than the one space the field's colon may take", () => {
    // "data:  {" is the JSON text " {...}" to a client, which parses it; the tap skipped it, so the
    // usage-only chunk it asked for reached the client and the reply's usage went uncounted.
    const tap = new SseTap(true);
    const event = `data:  ${JSON.stringify({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 1 } })}\n\n`;
    expect(tap.push(Buffer.from(event)).toString()).toBe("");
    expect(tap.usage).toEqual({ promptTokens: 4, completionTokens: 1 });
  });
});

describe("SseTap: an over-long event is read for its usage without being kept", () => {
  // A Responses stream's response.completed carries its whole output (generated images) before its
  // usage: the tap kept a copy of up to 32 MiB of such an event per stream, outside any budget.
  const piece = Buffer.alloc(64 << 10, "x".charCodeAt(0));
  const rows: Array<[string, string, string, { promptTokens: number; completionTokens: number }]> = [
    ["responses", 'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r","output":[{"type":"message","content":"', '"}],"usage":{"input_tokens":5,"output_tokens":9}}}\n\n', { promptTokens: 5, completionTokens: 9 }],
    ["chat", 'data: {"id":"c","choices":[{"delta":{"content":"', '"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}\r\n\r\n', { promptTokens: 3, completionTokens: 4 }],
    ["anthropic", 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":6,"output_tokens":1},"x":"', '"}}\n\n', { promptTokens: 6, completionTokens: 1 }],
  ];
  for (const [name, head, tail, usage] of rows) {
    it(`${name}: 24 MiB event, at most a few MiB kept`, () => {
      const tap = new SseTap(false);
      let passed = tap.push(Buffer.from(head)).length;
      let peak = 0;
      for (let i = 0; i < 384; i++) {
        passed += tap.push(piece).length;
        peak = Math.max(peak, tap.heldBytes);
      }
      passed += tap.push(Buffer.from(tail)).length + tap.end().length;
      expect(passed).toBe(head.length + 384 * piece.length + tail.length);
      expect(tap.usage).toEqual(usage);
      // Before: a copy of all of it passed so far was kept until the event ended (10 to 31 MB
      // measured after a collection, fed 4 to 24 MiB); now an unfinished event up to 1 MiB.
      expect(peak).toBeLessThanOrEqual((1 << 20) + piece.length);
    });
  }
});

describe("ReplyUsage: a stream passed on untouched is read for its usage without a copy of it", () => {
  it("allocates nothing the size of an unfinished event, and reads a usage event split anywhere", () => {
    // Measured by what is allocated, not by what the tap says it holds: before, an unfinished
    // event (up to 1 MiB per stream) was copied and held outside any budget, though nothing is sent from it.
    const big = `data: {"choices":[{"delta":{"content":"${"x".repeat(600_000)}"}}]}\n\n`;
    const usage = 'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5}}\n\ndata: [DONE]\n\n';
    const stream = Buffer.from(big + usage);
    let largest = 0;
    const record = <B extends Buffer>(b: B): B => {
      largest = Math.max(largest, b.length);
      return b;
    };
    const concat = Buffer.concat.bind(Buffer);
    const from = Buffer.from.bind(Buffer) as (...args: unknown[]) => Buffer;
    const spies = [vi.spyOn(Buffer, "concat").mockImplementation((list, n) => record(concat(list, n))), vi.spyOn(Buffer, "from").mockImplementation(((...args: unknown[]) => record(from(...args))) as typeof Buffer.from)];
    try {
      for (const cut of [10, big.length - 3, big.length + 20, stream.length - 12]) {
        const tap = new ReplyUsage({ "content-type": "text/event-stream" });
        for (let at = 0; at < cut; at += 64 << 10) tap.push(stream.subarray(at, Math.min(cut, at + (64 << 10))));
        tap.push(stream.subarray(cut));
        expect(tap.cut()).toEqual({ promptTokens: 7, completionTokens: 5 });
      }
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(largest).toBeLessThan(64 << 10);
  });
});
