// The one measure: the shared-prefix definition's properties, token-prefix and breakpoint cache
// rules, costs and the price table.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMeter, inputTokens, measureSession, requestPrice, servedTokens, sharedPrefix, type Prompt } from "../../src/compaction/measure.js";
import { anthropicCache, lookupPrice, modelPrice, NO_CACHE, openaiCache, priceTable, type ModelPrice } from "../../src/compaction/prices.js";
import { toolTokens } from "../../src/compaction/models.js";
import { messageTokens, TOKENS_PER_REPLY } from "../../src/compaction/tokens.js";
import type { ChatMessage, Role } from "../../src/llm/types.js";

const WORDS = ["book", "table", "taxi", "hotel", "price", "file", "test", "error", "fixed", "train", "north", "python", "value", "seven", "(+ 1 2)", "{:a 1}", "ünïcode", "💡"];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 12 }).map((w) => w.join(" "));
const message: fc.Arbitrary<ChatMessage> = fc.record({ role: fc.constantFrom<Role>("system", "user", "assistant"), content: text });
const messages = fc.array(message, { minLength: 0, maxLength: 8 });
const mutate = (ms: ChatMessage[], i: number, tail: string): ChatMessage[] => ms.map((m, j) => (j === i ? { ...m, content: `${m.content as string}${tail}` } : m));

const msg = (role: Role, content: string): ChatMessage => ({ role, content });
/** A message of roughly `n` tokens (one word per token in o200k for these words). */
const sized = (role: Role, n: number, seed: string): ChatMessage => msg(role, `${seed} ` + Array.from({ length: n }, (_, i) => `w${i % 50}`).join(" "));

describe("sharedPrefix: the one definition", () => {
  it("a prompt shares all of itself but the reply primer, and nothing with an empty prompt", () => {
    fc.assert(
      fc.property(messages, (ms) => {
        const s = sharedPrefix(ms, ms);
        expect(s.messages).toBe(ms.length);
        expect(s.tokens).toBe(inputTokens(ms) - TOKENS_PER_REPLY);
        expect(sharedPrefix([], ms)).toEqual({ messages: 0, chars: 0, tokens: 0 });
      }),
    );
  });

  it("is symmetric and never more than either prompt", () => {
    fc.assert(
      fc.property(messages, messages, (a, b) => {
        const ab = sharedPrefix(a, b);
        expect(sharedPrefix(b, a)).toEqual(ab);
        expect(ab.tokens).toBeLessThanOrEqual(Math.min(inputTokens(a), inputTokens(b)) - TOKENS_PER_REPLY);
        expect(ab.messages).toBeLessThanOrEqual(Math.min(a.length, b.length));
      }),
    );
  });

  it("is monotone: appending messages to the next prompt never shrinks it, and an extension shares the whole previous prompt", () => {
    fc.assert(
      fc.property(messages, messages, messages, (a, b, more) => {
        expect(sharedPrefix(a, [...b, ...more]).tokens).toBeGreaterThanOrEqual(sharedPrefix(a, b).tokens);
        const ext = sharedPrefix(a, [...a, ...more]);
        expect(ext.messages).toBe(a.length);
        expect(ext.tokens).toBe(inputTokens(a) - TOKENS_PER_REPLY);
      }),
    );
  });

  it("counts the common start of the first differing message, header included, and nothing after it", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.nat(), messages, (a, pick, more) => {
        const i = pick % a.length;
        const b = [...mutate(a, i, " changed at the end"), ...more];
        const s = sharedPrefix(a, b);
        expect(s.messages).toBe(i);
        const whole = a.slice(0, i).reduce((n, m) => n + messageTokens(m), 0);
        expect(s.tokens).toBeGreaterThanOrEqual(whole + 3);
        expect(s.tokens).toBeLessThanOrEqual(whole + messageTokens(a[i]));
      }),
    );
  });

  it("differs on a changed role, name or tool call, and on different tool schemas", () => {
    const a = [msg("system", "rules"), msg("user", "task")];
    expect(sharedPrefix(a, [msg("system", "rules"), msg("assistant", "task")]).messages).toBe(1);
    expect(sharedPrefix(a, [msg("system", "rules"), { ...msg("user", "task"), name: "x" }]).messages).toBe(1);
    const call = (args: string): ChatMessage => ({ role: "assistant", content: null, tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: args } }] });
    const s = sharedPrefix([...a, call('{"q":"alpha beta"}')], [...a, call('{"q":"alpha gamma"}')]);
    expect(s.messages).toBe(2);
    expect(s.tokens).toBeGreaterThan(messageTokens(a[0]) + messageTokens(a[1]) + 3);
    expect(sharedPrefix({ messages: a, tools: [{ name: "f" }] }, { messages: a, tools: [{ name: "g" }] }).tokens).toBe(0);
    const withTools = sharedPrefix({ messages: a, tools: [{ name: "f" }] }, { messages: a, tools: [{ name: "f" }] });
    expect(withTools.tokens).toBe(inputTokens({ messages: a, tools: [{ name: "f" }] }) - TOKENS_PER_REPLY);
  });

  it("differs on a changed legacy function call or refusal, which the measure counts as the message's", () => {
    // Keyed on content and tool_calls only, two different legacy calls (content null) were one message: shared whole, and served by a breakpoint cache.
    const a = [sized("system", 1200, "s"), msg("user", "task")];
    const legacy = (args: string) => ({ role: "assistant", content: null, function_call: { name: "lookup", arguments: args } }) as never as ChatMessage;
    const refused = (text: string) => ({ role: "assistant", content: null, refusal: text }) as never as ChatMessage;
    for (const [x, y] of [
      [legacy('{"id":"ID-1"}'), legacy('{"id":"ID-2"}')],
      [refused("I can't share that."), refused("I won't do that.")],
    ]) {
      expect(sharedPrefix([...a, x], [...a, y]).messages).toBe(2);
      const [, second] = measureSession([{ messages: [...a, x], breakpoints: [1, 2] }, [...a, y, msg("user", "next")]], anthropic).prompts;
      expect(second.cacheBreak).toBe(true);
      expect(second.cachedTokens).toBe(messageTokens(a[0]) + messageTokens(a[1]));
    }
  });
});

const openai: ModelPrice = { input: 2, output: 8, cache: openaiCache(0.5) };
const anthropic: ModelPrice = { input: 3, output: 15, cache: anthropicCache(1024) };

describe("token-prefix caches (OpenAI style)", () => {
  it("serve from exactly the minimum on: a prefix of the minimum is cached whole, one token less not at all", () => {
    // Random sizes seldom land on the minimum itself: each edge is named here.
    const prefix = openaiCache(0.5);
    expect([1023, 1024, 1151, 1152].map((n) => servedTokens(prefix, n))).toEqual([0, 1024, 1024, 1152]);
    const breakpoint = anthropicCache(1024);
    expect([1023, 1024, 1025].map((n) => servedTokens(breakpoint, n))).toEqual([0, 1024, 1025]);
    expect(servedTokens(NO_CACHE, 5000)).toBe(0);
  });

  it("serve nothing below the minimum, then whole steps of the shared prefix", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1, max: 256 }), (shared, min, step) => {
        const price: ModelPrice = { input: 1, output: 1, cache: { kind: "token-prefix", read: 0.5, minTokens: min, step } };
        const base = [sized("system", shared, "s")];
        const meter = createMeter(price);
        meter.add(base);
        const m = meter.add([...base, msg("user", "next")]);
        if (m.shared.tokens < min) expect(m.cachedTokens).toBe(0);
        else {
          expect(m.cachedTokens).toBeGreaterThanOrEqual(min);
          expect((m.cachedTokens - min) % step).toBe(0);
          expect(m.cachedTokens).toBeLessThanOrEqual(m.shared.tokens);
          expect(m.shared.tokens - m.cachedTokens).toBeLessThan(step);
        }
        expect(m.writtenTokens).toBe(0);
      }),
      { numRuns: 40 },
    );
  });

  it("prices a 2,000-token shared prefix at 1,920 cached tokens (1,024 + 7 steps of 128)", () => {
    const first = [sized("system", 2000, "s")];
    const sharedTokens = inputTokens(first) - TOKENS_PER_REPLY;
    const { prompts, totals } = measureSession([first, [...first, msg("user", "hello")]], openai);
    expect(prompts[0].cachedTokens).toBe(0);
    expect(prompts[1].shared.tokens).toBe(sharedTokens);
    expect(prompts[1].cachedTokens).toBe(1024 + Math.floor((sharedTokens - 1024) / 128) * 128);
    const fresh = prompts[1].tokens - prompts[1].cachedTokens;
    expect(prompts[1].cost).toBeCloseTo(((prompts[1].cachedTokens * 0.5 + fresh) * 2) / 1e6, 12);
    expect(totals.prompts).toBe(2);
    expect(totals.cachedTokens).toBe(prompts[1].cachedTokens);
    expect(totals.cacheBreaks).toBe(0);
  });

  it("count a rewritten earlier message as a cache break and serve only the prefix before it", () => {
    const a = [sized("system", 1500, "s"), sized("user", 600, "u"), msg("assistant", "ok")];
    const b = [a[0], msg("user", "summary"), msg("assistant", "ok"), msg("user", "more")];
    const { prompts, totals } = measureSession([a, b], openai);
    expect(prompts[1].cacheBreak).toBe(true);
    expect(totals.cacheBreaks).toBe(1);
    expect(prompts[1].cachedTokens).toBeLessThanOrEqual(messageTokens(a[0]) + 3);
    expect(prompts[1].cachedTokens).toBeGreaterThanOrEqual(1024);
  });
});

describe("breakpoint caches (Anthropic style)", () => {
  const system = sized("system", 1200, "s");
  const turn1: ChatMessage[] = [system, msg("user", "first question")];
  const turn2: ChatMessage[] = [...turn1, msg("assistant", "first answer"), msg("user", "second question")];

  it("write at the last message the first time, then read up to where the earlier request wrote", () => {
    const { prompts } = measureSession([turn1, turn2], anthropic);
    const upTo = (ms: ChatMessage[]): number => ms.reduce((n, m) => n + messageTokens(m), 0);
    expect(prompts[0].cachedTokens).toBe(0);
    expect(prompts[0].writtenTokens).toBe(upTo(turn1));
    expect(prompts[1].cachedTokens).toBe(upTo(turn1));
    expect(prompts[1].writtenTokens).toBe(upTo(turn2) - upTo(turn1));
    const p = prompts[1];
    expect(p.cost).toBeCloseTo(((p.cachedTokens * 0.1 + p.writtenTokens * 1.25 + (p.tokens - p.cachedTokens - p.writtenTokens)) * 3) / 1e6, 12);
  });

  it("serve nothing when a message before the entry changed, though a token-prefix cache would serve the start", () => {
    const edited = [system, msg("user", "first question, edited"), msg("user", "again")];
    const bp = measureSession([turn1, edited], anthropic).prompts[1];
    const tp = measureSession([turn1, edited], openai).prompts[1];
    expect(bp.cachedTokens).toBe(0);
    expect(tp.cachedTokens).toBeGreaterThanOrEqual(1024);
  });

  it("hit only at a boundary an earlier request wrote, found within the lookback of a breakpoint", () => {
    const long = [...turn1, ...Array.from({ length: 25 }, (_, i) => msg(i % 2 ? "user" : "assistant", `m${i}`))];
    // The default breakpoint is 25 boundaries after the entry: beyond the 20-block lookback.
    expect(measureSession([turn1, long], anthropic).prompts[1].cachedTokens).toBe(0);
    // A breakpoint within 20 boundaries of it finds it.
    const found = measureSession([turn1, { messages: long, breakpoints: [15, long.length - 1] }], anthropic).prompts[1];
    expect(found.cachedTokens).toBe(messageTokens(turn1[0]) + messageTokens(turn1[1]));
    // The lookback's edge: 20 boundaries back from the breakpoint (turn1 ends at 1) is found, 21 is not.
    const at = (b: number) => measureSession([turn1, { messages: long, breakpoints: [b] }], anthropic).prompts[1].cachedTokens;
    expect([at(21), at(22)]).toEqual([found.cachedTokens, 0]);
  });

  it("write a prefix of exactly the minimum, and nothing one token short of it; tool schemas are part of the prefix", () => {
    const upTo = turn1.reduce((n, m) => n + messageTokens(m), 0);
    const written = (minTokens: number) => measureSession([turn1], { ...anthropic, cache: anthropicCache(minTokens) }).prompts[0].writtenTokens;
    expect([written(upTo), written(upTo + 1)]).toEqual([upTo, 0]);
    // Tool schemas come before the messages in the cached prefix: written and read with them.
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { ref: { type: "string" } } } } }];
    const [first, second] = measureSession([{ messages: turn1, tools }, { messages: turn2, tools }], anthropic).prompts;
    expect(first.writtenTokens).toBe(upTo + toolTokens(tools));
    expect(second.cachedTokens).toBe(upTo + toolTokens(tools));
  });

  it("cache nothing below the minimum, and refuse more breakpoints than the provider allows or a breakpoint past the end", () => {
    const small = [msg("system", "short"), msg("user", "q")];
    const { prompts } = measureSession([small, [...small, msg("assistant", "a"), msg("user", "q2")]], anthropic);
    expect(prompts[0].writtenTokens).toBe(0);
    expect(prompts[1].cachedTokens).toBe(0);
    const five: Prompt = { messages: turn2.concat(msg("assistant", "x")), breakpoints: [0, 1, 2, 3, 4] };
    expect(() => createMeter(anthropic).add(five)).toThrow(/at most 4/);
    expect(() => createMeter(anthropic).add({ messages: turn1, breakpoints: [7] })).toThrow(/not the index/);
  });

  it("read system messages first, wherever they sit, as the Messages API's system blocks precede every message", () => {
    // A system message that joins mid-conversation (new rules, a summary before a tool step) goes
    // into `system`, ahead of the earlier messages: the entry written after them no longer matches.
    const question = sized("user", 2000, "q");
    const first: ChatMessage[] = [system, question];
    const rules = msg("system", "new rules: answer in French");
    const second: ChatMessage[] = [system, question, msg("assistant", "first answer"), rules, msg("user", "second question")];
    const third: ChatMessage[] = [...second, msg("assistant", "second answer"), msg("user", "third question")];
    // Marked as anthropicLlm marks them: the end of the leading system prompt and the last message.
    const { prompts } = measureSession([{ messages: first, breakpoints: [0, 1] }, { messages: second, breakpoints: [0, 4] }, { messages: third, breakpoints: [0, 6] }], anthropic);
    const tokensOf = (ms: ChatMessage[]): number => ms.reduce((n, m) => n + messageTokens(m), 0);
    // Only the system prompt's entry (written at its end by the first request) still heads the prompt.
    expect(prompts[1].cachedTokens).toBe(messageTokens(system));
    expect(prompts[1].writtenTokens).toBe(tokensOf(second) - messageTokens(system));
    // The next request reads all of the previous one: system blocks, then the messages in order.
    expect(prompts[2].cachedTokens).toBe(tokensOf(second));
    expect(prompts[2].writtenTokens).toBe(tokensOf(third) - tokensOf(second));
    // A breakpoint on the joining system message marks the end of the system blocks.
    const marked = measureSession([{ messages: first, breakpoints: [0, 1] }, { messages: second, breakpoints: [3, 4] }], anthropic).prompts[1];
    expect(marked.writtenTokens).toBe(tokensOf(second) - messageTokens(system));
  });

  it("never serve more than the prompt, and the cost is never above the uncached cost plus the write premium", () => {
    fc.assert(
      fc.property(fc.array(messages, { minLength: 1, maxLength: 5 }), (session) => {
        const prompts = session.map((ms) => [system, ...ms]);
        for (const p of measureSession(prompts, anthropic).prompts) {
          expect(p.cachedTokens + p.writtenTokens).toBeLessThanOrEqual(p.tokens);
          expect(p.cost).toBeLessThanOrEqual((p.tokens * 3 * 1.25) / 1e6 + 1e-12);
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe("prices", () => {
  it("no cache: every input token at the input price", () => {
    const price: ModelPrice = { input: 1, output: 2, cache: NO_CACHE };
    const { prompts } = measureSession([[sized("system", 2000, "s")], { messages: [sized("system", 2000, "s")], outputTokens: 10 }], price);
    expect(prompts[1].cachedTokens).toBe(0);
    expect(prompts[1].cost).toBeCloseTo((prompts[1].tokens + 20) / 1e6, 12);
  });

  it("reported usage is priced by the same function", () => {
    expect(requestPrice(anthropic, { inputTokens: 1000, cachedTokens: 600, writtenTokens: 300, outputTokens: 10 })).toBeCloseTo((600 * 0.3 + 300 * 3.75 + 100 * 3 + 150) / 1e6, 12);
    // Impossible figures (more cached than sent) are clamped, not priced negative.
    expect(requestPrice(openai, { inputTokens: 10, cachedTokens: 50, outputTokens: 0 })).toBeCloseTo((10 * 1) / 1e6, 12);
    // A negative count (a provider's garbled usage) is no refund.
    expect(requestPrice(openai, { inputTokens: 10, cachedTokens: 0, outputTokens: -500 })).toBe(requestPrice(openai, { inputTokens: 10, cachedTokens: 0, outputTokens: 0 }));
  });

  it("a model is priced by its longest name prefix; callers extend the table without changing the default", () => {
    expect(modelPrice("gpt-4o-mini-2024").input).toBe(0.15);
    expect(modelPrice("openai/gpt-4o").input).toBe(2.5);
    expect(lookupPrice("my-model")).toBeUndefined();
    const table = priceTable({ "my-model": { input: 7, output: 9, cache: NO_CACHE } });
    expect(modelPrice("my-model-large", table).input).toBe(7);
    expect(lookupPrice("my-model")).toBeUndefined();
    expect(createMeter("my-model", table).price.input).toBe(7);
    expect(() => priceTable({ bad: { input: -1, output: 1, cache: NO_CACHE } })).toThrow(/bad.*input/);
    expect(() => priceTable({ bad: { input: 1, output: 1, cache: { kind: "magic" } as never } })).toThrow(/bad/);
  });
});
