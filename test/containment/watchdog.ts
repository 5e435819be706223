// Runs work items in a child Node process with a heap cap and a per-item time limit. The child
// writes one JSON line when it starts an item and one when it ends it; an item that hangs past
// the limit, or a child that dies (out-of-heap abort, crash), is reported for that item and a
// fresh child carries on with the rest. The test runner itself never runs an attack.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ItemResult<T> {
  id: string;
  /** What the child reported, when it finished the item. */
  done?: T;
  /** "hang" past the limit or "crash" (the child died: out of heap, abort, exit). */
  failure?: "hang" | "crash";
  detail?: string;
  ms: number;
}

export interface WatchdogOptions {
  script: string;
  /** Extra arguments before the item ids. */
  args?: string[];
  heapMb?: number;
  itemLimitMs: number;
  /** Called as each item ends, for progress. */
  onResult?: (r: ItemResult<unknown>) => void;
}

function runChild<T>(ids: string[], o: WatchdogOptions, results: Map<string, ItemResult<T>>): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${o.heapMb ?? 512}`, "--import", "tsx", o.script, ...(o.args ?? []), ...ids], { stdio: ["ignore", "pipe", "pipe"] });
    let current: string | null = null;
    let started = 0;
    let stderr = "";
    let timer: NodeJS.Timeout | undefined;
    const record = (r: ItemResult<T>): void => {
      results.set(r.id, r);
      o.onResult?.(r);
    };
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (current !== null) record({ id: current, failure: "hang", ms: performance.now() - started });
        current = null;
        child.kill("SIGKILL");
      }, o.itemLimitMs);
    };
    child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      let msg: { start?: string; done?: string; result?: T };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      if (msg.start !== undefined) {
        current = msg.start;
        started = performance.now();
        arm();
      } else if (msg.done !== undefined) {
        record({ id: msg.done, done: msg.result, ms: performance.now() - started });
        current = null;
      }
    });
    arm();
    child.on("exit", (code, sig) => {
      clearTimeout(timer);
      if (current !== null) record({ id: current, failure: "crash", detail: `exit ${code ?? sig}: ${stderr.slice(-500)}`, ms: performance.now() - started });
      resolve();
    });
  });
}

/** Runs every id to an answer, a hang or a crash; a dead child is replaced for the ids left. */
export async function watch<T>(ids: string[], o: WatchdogOptions): Promise<Array<ItemResult<T>>> {
  const results = new Map<string, ItemResult<T>>();
  let left = ids;
  while (left.length > 0) {
    await runChild(left, o, results);
    const next = left.filter((id) => !results.has(id));
    // A child that died before starting anything would loop forever: the first id takes the blame.
    if (next.length === left.length) results.set(left[0], { id: left[0], failure: "crash", detail: "the child ended before starting", ms: 0 });
    left = left.filter((id) => !results.has(id));
  }
  return ids.map((id) => results.get(id) as ItemResult<T>);
}
