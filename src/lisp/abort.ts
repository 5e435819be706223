// A promise raced against an abort signal. The listener goes as soon as either settles: a
// host's long-lived signal would otherwise keep one listener, and its closures, per call.

/**
 * Whether a host's `signal` option has what a run uses of one: a signal from another realm or
 * a polyfill serves; anything else would fail deep inside, or later, unhandled.
 */
export function isAbortSignal(x: unknown): x is AbortSignal {
  const s = x as Partial<AbortSignal> | null;
  try {
    return typeof s === "object" && s !== null && typeof s.aborted === "boolean" && typeof s.addEventListener === "function" && typeof s.removeEventListener === "function";
  } catch {
    // A Proxy whose trap throws (its text is the host's): not one that can be listened to.
    return false;
  }
}

/** What `unlessAborted` resolves to when the signal fires first. */
export const ABORTED: unique symbol = Symbol("aborted");

/** `p`'s value, or ABORTED as soon as `signal` fires (at once if it already has); `p`'s rejection passes through. */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}
