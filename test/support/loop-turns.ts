// Turns of the event loop while something runs: work done in one synchronous go (a count of
// megabytes) shows as none, so a test can tell a task that yields from one that holds the loop.

/** Starts counting turns of the event loop; `count()` is how many so far, `stop()` ends the count. */
export function loopTurns(): { count(): number; stop(): void } {
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    count: () => turns,
    stop: () => {
      ticking = false;
    },
  };
}
