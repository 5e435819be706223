// The worker threads of the isolated mode, one pool per heap cap. A worker runs one program at
// a time; one that is terminated (abort, timeout) or dies (out of heap, crash) is dropped and a
// warm one started in its place. Idle workers do not keep the process alive. A run asks for the
// worker that kept its memory, so an agent's turns usually go back to the same thread.
import { availableParallelism } from "node:os";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { FromWorker, ToWorker } from "./protocol.js";

/**
 * The worker next to this module: the built JS in dist, or under tsx/vitest the TS source,
 * through a bootstrap that registers tsx in the worker first (tsx's `--import` hook does
 * not reach a worker's entry module on Node 20). tsx is a dev dependency; only a checkout runs it.
 */
function entry(): { script: URL | string; evalScript: boolean } {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) return { script: new URL("./worker.js", here), evalScript: false };
  const api = pathToFileURL(createRequire(here).resolve("tsx")).href.replace(/loader\.mjs$/, "esm/api/index.mjs");
  const worker = new URL("./worker.ts", here).href;
  return { script: `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(worker)}); })`, evalScript: true };
}

export class PoolWorker {
  private static nextId = 1;
  readonly id = PoolWorker.nextId++;
  alive = true;
  /** Ended by the pool as one idle worker too many (not a run's end). */
  retired = false;
  /** Whatever listens to this worker's messages and its exit while it runs a program. */
  listener: ((m: FromWorker) => void) | null = null;
  onExit: ((why: ExitReason) => void) | null = null;
  /** A message from this worker that could not be read back (a value nested past what the host's stack rebuilds). */
  onUnreadable: ((e: unknown) => void) | null = null;
  readonly ready: Promise<void>;

  constructor(
    private readonly pool: WorkerPool,
    readonly thread: Worker,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      const first = (m: FromWorker): void => {
        if (m.type !== "ready") return;
        thread.off("message", first);
        resolve();
      };
      thread.on("message", first);
      thread.once("exit", () => reject(new Error("the worker stopped while starting")));
    });
    this.ready.catch(() => undefined);
    thread.on("message", (m: FromWorker) => this.listener?.(m));
    // Unheard, such a message would leave its run waiting for ever.
    thread.on("messageerror", (e) => this.onUnreadable?.(e));
    let error: Error | null = null;
    thread.on("error", (e) => (error = e));
    thread.once("exit", () => {
      this.alive = false;
      this.pool.dropped(this);
      const out = (error as { code?: string } | null)?.code === "ERR_WORKER_OUT_OF_MEMORY";
      this.onExit?.(out ? "out_of_memory" : error !== null ? "crashed" : "terminated");
    });
  }

  post(m: ToWorker): void {
    this.thread.postMessage(m);
  }
}

export type ExitReason = "out_of_memory" | "crashed" | "terminated";

/**
 * Workers are started on demand, never waited for: a program waiting on a tool holds its
 * worker, and that tool may run an agent whose programs need workers of their own, so a cap on
 * running workers could deadlock. What is capped is how many idle ones are kept.
 */
export class WorkerPool {
  private readonly idle: PoolWorker[] = [];
  /**
   * Set once a run's worker has been ended or has died: from then on taking the last idle worker
   * starts a spare, so the run after the next end finds one started instead of waiting for a
   * thread to load the interpreter (time no limit of that run counts). A host that never ends a
   * worker never pays for a spare.
   */
  private spares = false;

  constructor(
    readonly maxHeapMb: number,
    private readonly keepIdle: number = Math.max(2, availableParallelism()),
  ) {}

  /** A worker for one run: `prefer` when it is idle, else any idle one, else a new one. */
  async acquire(prefer?: PoolWorker): Promise<PoolWorker> {
    const at = prefer === undefined ? -1 : this.idle.indexOf(prefer);
    const w = (at >= 0 ? this.idle.splice(at, 1)[0] : this.idle.pop()) ?? this.spawn();
    if (this.spares && this.idle.length === 0) this.addSpare();
    w.thread.ref();
    await w.ready;
    return w;
  }

  release(w: PoolWorker): void {
    w.listener = null;
    w.onExit = null;
    w.onUnreadable = null;
    if (!w.alive) return;
    if (this.idle.length >= this.keepIdle) {
      // One too many idle, not a run's worker ended: no reason to keep spares.
      w.retired = true;
      return this.terminate(w);
    }
    w.thread.unref();
    this.idle.push(w);
  }

  /** The idle workers now, most recently released last. */
  idleWorkers(): PoolWorker[] {
    return this.idle.slice();
  }

  /** Ends a worker at once (its program is abandoned). */
  terminate(w: PoolWorker): void {
    w.listener = null;
    w.onExit = null;
    w.onUnreadable = null;
    w.alive = false;
    void w.thread.terminate();
  }

  /** Called when a worker has exited, for whatever reason. */
  dropped(w: PoolWorker): void {
    const at = this.idle.indexOf(w);
    if (at >= 0) this.idle.splice(at, 1);
    if (!w.retired) this.spares = true;
    // A warm replacement, so the run after an abort or a crash does not wait for a thread to start.
    if (this.idle.length === 0) this.addSpare();
  }

  private addSpare(): void {
    const spare = this.spawn();
    spare.thread.unref();
    this.idle.push(spare);
  }

  private spawn(): PoolWorker {
    const { script, evalScript } = entry();
    const thread = new Worker(script, { eval: evalScript, resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, maxYoungGenerationSizeMb: Math.max(4, Math.min(32, this.maxHeapMb / 8)) } });
    return new PoolWorker(this, thread);
  }
}

const pools = new Map<number, WorkerPool>();

/** The process's pool for workers with this heap cap. */
export function poolFor(maxHeapMb: number): WorkerPool {
  let p = pools.get(maxHeapMb);
  if (p === undefined) pools.set(maxHeapMb, (p = new WorkerPool(maxHeapMb)));
  return p;
}
