// The worker pool after a run's worker is ended (abort, hard stop, out of heap): the next run
// must not wait for a thread to start and load the interpreter (0.3-0.8 s from dist, up to 3 s
// under tsx on the project machine), which no limit of that run counts. The test waits on the
// pool's own state, never on time.
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { WorkerPool, type PoolWorker } from "../../src/lisp/isolate/pool.js";

async function ended(pool: WorkerPool, w: PoolWorker): Promise<void> {
  const exit = once(w.thread, "exit");
  pool.terminate(w);
  await exit;
}

describe("isolated mode: the pool after a worker is ended", () => {
  it("keeps a started spare once it has ended a worker, so the run after each later end gets a ready one", async () => {
    const pool = new WorkerPool(64);
    const first = await pool.acquire();
    await ended(pool, first);
    const second = await pool.acquire();
    // From the first end on, taking the last idle worker starts another in the background.
    const spares = pool.idleWorkers();
    expect(spares).toHaveLength(1);
    await spares[0].ready;
    await ended(pool, second);
    const third = await pool.acquire();
    expect(third).toBe(spares[0]);
    pool.terminate(third);
    for (const w of pool.idleWorkers()) pool.terminate(w);
  });

  it("starts no spare while no worker has been ended", async () => {
    const pool = new WorkerPool(64);
    const w = await pool.acquire();
    expect(pool.idleWorkers()).toHaveLength(0);
    pool.release(w);
    expect(pool.idleWorkers()).toEqual([w]);
    pool.terminate(w);
  });
});
