// How a program is isolated from its host: in the host's own thread ("none"), or in a worker
// thread with a hard heap cap that abort and timeout end at once ("worker").
import { z } from "zod";
import { LispError, unreadable } from "../errors.js";

export const IsolationOptions = z
  .object({
    mode: z.enum(["none", "worker"]).default("worker"),
    /** The worker's heap cap (V8 old generation), in MB: a program past it fails with `memory_exceeded`. */
    maxHeapMb: z.number().int().min(16).default(512),
  })
  .strict();

/** `"none"`, `"worker"`, or the worker's options. */
export type Isolation = "none" | "worker" | z.input<typeof IsolationOptions>;
export type ResolvedIsolation = z.output<typeof IsolationOptions>;

export function resolveIsolation(i: Isolation): ResolvedIsolation {
  let parsed: ReturnType<typeof IsolationOptions.safeParse>;
  try {
    parsed = IsolationOptions.safeParse(typeof i === "string" ? { mode: i } : i);
  } catch (e) {
    throw unreadable(e, "isolation");
  }
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new LispError("value_error", `isolation${issue.path.length > 0 ? "." + issue.path.join(".") : ""}: ${issue.message}`, undefined, 'use "none", "worker" or { mode: "worker", maxHeapMb: 512 }');
}
