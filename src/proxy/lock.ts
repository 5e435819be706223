// Between processes on one host (two proxies on the default state directory): whether a lock's
// holder still runs, and a lock file held around a short synchronous read-change-write.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";

export const HOST = hostname();

/** Whether process `pid` of this host still runs: a holder killed mid-update leaves its lock to be taken at once. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, under another user.
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** How long a lock file holder is waited for: its holders keep it for one small file write. */
const LOCK_WAIT_MS = 2000;
/** A lock file whose holder cannot be checked (another host's, or none written in it yet) is left alone this long. */
const STALE_MS = 10_000;

/**
 * The lock files this process holds now. One naming this process's pid and not among them was left
 * by an earlier process that had the same pid (a container's proxy is pid 1 after every restart).
 */
const HELD = new Set<string>();

/** Whether the lock file at `path` was left by a process that no longer holds it (false when it is gone). */
function abandoned(path: string): boolean {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    // Gone already: free.
    return false;
  }
  const [host, pid] = text.split("\n");
  // Another host's process (a shared mount) cannot be asked: its lock is taken once far older than any write.
  if (host !== HOST || !/^\d+$/.test(pid ?? "")) {
    try {
      return Date.now() - statSync(path).mtimeMs > STALE_MS;
    } catch {
      return false;
    }
  }
  return Number(pid) === process.pid ? !HELD.has(path) : !alive(Number(pid));
}

/** Creates the lock file `path` exclusively, naming this process; false when another has it. */
function take(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  HELD.add(path);
  try {
    writeSync(fd, `${HOST}\n${process.pid}\n`);
  } catch (e) {
    release(path);
    throw e;
  } finally {
    closeSync(fd);
  }
  return true;
}

function release(path: string): void {
  HELD.delete(path);
  unlinkSync(path);
}

/**
 * Removes the lock file `path` if it is still abandoned, checked again holding `path.reap`. Two
 * processes that found it abandoned each unlinked it: the later one removed the lock the earlier
 * had just taken in its place, took it too, and both held it (the earlier's release then failed).
 */
function reap(path: string): void {
  const guard = `${path}.reap`;
  if (!take(guard)) {
    // Another process is taking it over; a guard left by an ended one goes, for the next round.
    if (abandoned(guard)) {
      try {
        unlinkSync(guard);
      } catch {
        // Gone already.
      }
    }
    return;
  }
  try {
    if (abandoned(path)) unlinkSync(path);
  } finally {
    release(guard);
  }
}

/**
 * Runs `fn` holding the lock file `path` (created exclusively), waiting up to LOCK_WAIT_MS for
 * another holder and taking over one left by an ended process of this host. Undefined when the
 * lock could not be had: the caller reports it. `fn` runs synchronously, so the lock is never held
 * across a wait; the wait for another process's lock does not block the event loop (requests and
 * streams stalled for up to 2 s behind an admin update).
 */
export async function withLockFile<T>(path: string, fn: () => T): Promise<{ value: T } | undefined> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    if (take(path)) {
      try {
        return { value: fn() };
      } finally {
        release(path);
      }
    }
    if (abandoned(path)) {
      reap(path);
      continue;
    }
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
