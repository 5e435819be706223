// A tool that makes parallel branches answer in another order than they started: the saved run's
// order, which a resumed run (answering from records at once) does not repeat.
import { z } from "zod";
import { tool } from "../../src/agent/tools.js";

/** tool/slow: answers "a" only once "b" has answered, so pmap branches over ["a" "b"] go on b first. */
export function answersBFirst() {
  let releaseA: () => void = () => undefined;
  const bAnswered = new Promise<void>((resolve) => (releaseA = resolve));
  return tool({
    description: "Slow.",
    input: z.object({ x: z.string() }),
    run: async ({ x }) => {
      if (x === "a") await bAnswered;
      else setImmediate(releaseA);
      return x.toUpperCase();
    },
  });
}
