// A benchmark session: an agent (mission, tools, output, turn budget), the data it runs
// on, and the replies a model wrote turn by turn. Running it through SubAgent.run with a
// scripted LLM gives a real trace (programs evaluated, tools called), from which both
// prompt views are rebuilt and measured.
import type { z } from "zod";
import type { Tool } from "../../src/agent/tools.js";

export type SessionKind = "exploration" | "tool-heavy" | "error-recovery";

export interface Session {
  readonly name: string;
  readonly kind: SessionKind;
  readonly prompt: string;
  readonly tools: Readonly<Record<string, Tool>>;
  readonly output?: z.ZodType;
  readonly context: Readonly<Record<string, unknown>>;
  /** One reply per turn; the last one returns. */
  readonly replies: readonly string[];
  /** Turns that are meant to fail (the session's error-recovery steps), 1-based. */
  readonly failingTurns?: readonly number[];
}

/** A reply as a model writes it: a few sentences of reasoning, then one program. */
export const reply = (prose: string, code: string): string => `${prose}\n\n\`\`\`clojure\n${code.trim()}\n\`\`\``;

/** A deterministic pseudo-random generator (LCG), so the data is the same on every run. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
