// The one price table: list prices per model and how the model's provider caches prompts.
// Prices are dollars per million tokens. Callers extend the table by passing their own entries
// (`priceTable`); nothing here is mutated, so two users of the library never see each other's prices.
import { z } from "zod";
import { mustBe } from "../llm/args.js";

/**
 * How a provider serves a prompt from its cache.
 * - `token-prefix` (OpenAI, Gemini, DeepSeek): automatic; the longest common token prefix with a
 *   recent request, counted from `minTokens` on, in whole `step`s.
 * - `breakpoint` (Anthropic): only up to a message boundary where an earlier request placed a
 *   breakpoint and wrote the cache; writing costs `write` times the input price.
 * - `none`: every input token at the input price.
 */
export type CacheModel =
  | { readonly kind: "none" }
  | {
      readonly kind: "token-prefix";
      /** Price of a cached input token as a multiple of the input price. */
      readonly read: number;
      /** Shortest prompt prefix the provider caches at all. */
      readonly minTokens: number;
      /** Hits grow in steps of this many tokens. */
      readonly step: number;
    }
  | {
      readonly kind: "breakpoint";
      readonly read: number;
      /** Price of a token written into the cache as a multiple of the input price (1.25 for 5 minutes, 2 for an hour). */
      readonly write: number;
      /** Shortest prefix (up to a breakpoint) that is cached; below it the request is processed uncached. */
      readonly minTokens: number;
      /** Breakpoints allowed in one request. */
      readonly maxBreakpoints: number;
      /** Message boundaries before a breakpoint at which the provider also looks for an earlier entry. */
      readonly lookback: number;
    };

export type CacheKind = CacheModel["kind"];

export interface ModelPrice {
  /** Uncached input, dollars per million tokens. */
  readonly input: number;
  readonly output: number;
  readonly cache: CacheModel;
}

/** A price table: model-name prefix → price. A model is priced by its longest matching prefix. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** OpenAI's prompt cache: from 1,024 tokens on, in 128-token steps. */
export const openaiCache = (read: number): CacheModel => ({ kind: "token-prefix", read, minTokens: 1024, step: 128 });

/** Anthropic's 5-minute cache: reads at 0.1x, writes at 1.25x, at most 4 breakpoints, a 20-block lookback. */
export const anthropicCache = (minTokens: number, write = 1.25): CacheModel => ({ kind: "breakpoint", read: 0.1, write, minTokens, maxBreakpoints: 4, lookback: 20 });

export const NO_CACHE: CacheModel = { kind: "none" };

/** What a cache bills a token it serves, as a multiple of the input price (1 without a cache). */
export const readMultiplier = (c: CacheModel): number => (c.kind === "none" ? 1 : c.read);

/** What a cache bills a token written into it, as a multiple of the input price (only breakpoint caches charge for writes). */
export const writeMultiplier = (c: CacheModel): number => (c.kind === "breakpoint" ? c.write : 1);

const p = (input: number, output: number, cache: CacheModel): ModelPrice => ({ input, output, cache });

/** Published list prices and cache rules (November 2026); check the provider's price page before relying on one. */
export const DEFAULT_PRICES: PriceTable = {
  "gpt-5-nano": p(0.05, 0.4, openaiCache(0.1)),
  "gpt-5-mini": p(0.25, 2, openaiCache(0.1)),
  "gpt-5": p(1.25, 10, openaiCache(0.1)),
  "gpt-4.1-nano": p(0.1, 0.4, openaiCache(0.25)),
  "gpt-4.1-mini": p(0.4, 1.6, openaiCache(0.25)),
  "gpt-4.1": p(2, 8, openaiCache(0.25)),
  "gpt-4o-mini": p(0.15, 0.6, openaiCache(0.5)),
  "gpt-4o": p(2.5, 10, openaiCache(0.5)),
  "claude-haiku-4": p(1, 5, anthropicCache(4096)),
  "claude-sonnet-4-6": p(3, 15, anthropicCache(2048)),
  "claude-sonnet-4": p(3, 15, anthropicCache(1024)),
  "claude-opus-4-1": p(15, 75, anthropicCache(1024)),
  "claude-opus-4-0": p(15, 75, anthropicCache(1024)),
  "claude-opus-4-5": p(5, 25, anthropicCache(4096)),
  "claude-opus-4-6": p(5, 25, anthropicCache(4096)),
  "gemini-2.5-flash": p(0.3, 2.5, { kind: "token-prefix", read: 0.25, minTokens: 1024, step: 1 }),
  "gemini-2.5-pro": p(1.25, 10, { kind: "token-prefix", read: 0.25, minTokens: 4096, step: 1 }),
  "deepseek-chat": p(0.28, 0.42, { kind: "token-prefix", read: 0.1, minTokens: 64, step: 64 }),
};

/**
 * Each provider's cache, as its current models bill it: a fixed price given with a provider
 * name caches this way. An older model that bills otherwise (gpt-4o reads at 0.5x) is priced
 * by its name from the table instead.
 */
export const PROVIDER_CACHES: Readonly<Record<string, CacheModel>> = {
  openai: openaiCache(0.1),
  anthropic: anthropicCache(1024),
  "anthropic-1h": anthropicCache(1024, 2),
  gemini: { kind: "token-prefix", read: 0.25, minTokens: 1024, step: 1 },
  deepseek: { kind: "token-prefix", read: 0.1, minTokens: 64, step: 64 },
  none: NO_CACHE,
};

/** A fixed price (dollars per million tokens) with its provider's cache model; throws on a provider with none. */
export function providerPrice(input: number, output: number, provider = "openai"): ModelPrice {
  const cache = Object.hasOwn(PROVIDER_CACHES, provider) ? PROVIDER_CACHES[provider] : undefined;
  if (cache === undefined) throw new Error(`compaction: unknown provider "${provider}" for cache prices (known: ${Object.keys(PROVIDER_CACHES).join(", ")})`);
  return { input, output, cache };
}

/** The options schema of a fixed price, as strategies and triggers take it: `providerPrice`'s arguments. */
export const fixedPriceSchema = z.object({ input: z.number().min(0), output: z.number().min(0), provider: z.string().default("openai") }).strict();

/** Used for a model no table knows: a mid-range price with OpenAI-style caching. */
export const FALLBACK_MODEL_PRICE: ModelPrice = p(1, 4, openaiCache(0.5));

/** The default table extended (or overridden, entry by entry) with `extra`. */
export function priceTable(extra: PriceTable = {}): PriceTable {
  for (const [name, price] of Object.entries(extra)) checkPrice(name, price);
  return { ...DEFAULT_PRICES, ...extra };
}

/**
 * The price of a model by longest name prefix (provider-qualified names such as
 * "openai/gpt-4o" are looked up by their last part), or the fallback when none matches.
 */
export function modelPrice(model: string | undefined, table: PriceTable = DEFAULT_PRICES): ModelPrice {
  // null, as JSON says "no model", is no model.
  if (model !== undefined && model !== null && typeof model !== "string") throw new TypeError(mustBe("modelPrice: model", "a model name", model));
  return lookupPrice(model, table) ?? FALLBACK_MODEL_PRICE;
}

/** The price of a model, or undefined when the table has no entry for it (so callers can say "unknown"). */
export function lookupPrice(model: string | undefined, table: PriceTable = DEFAULT_PRICES): ModelPrice | undefined {
  const name = (model ?? "").toLowerCase().split("/").pop() ?? "";
  if (name === "") return undefined;
  let best: string | undefined;
  for (const prefix of Object.keys(table)) if (name.startsWith(prefix.toLowerCase()) && (best === undefined || prefix.length > best.length)) best = prefix;
  return best === undefined ? undefined : table[best];
}

const amount = z.number().finite().nonnegative();
const count = z.number().int().nonnegative();
const priceSchema = z.object({
  input: amount,
  output: amount,
  cache: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("none") }),
    z.object({ kind: z.literal("token-prefix"), read: amount, minTokens: count, step: count.min(1) }),
    z.object({ kind: z.literal("breakpoint"), read: amount, write: amount, minTokens: count, maxBreakpoints: count.min(1), lookback: count }),
  ]),
});

function checkPrice(name: string, price: ModelPrice): void {
  const r = priceSchema.safeParse(price);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new TypeError(`price table: entry "${name}": ${issue.path.join(".") || "price"}: ${issue.message}`);
  }
}
