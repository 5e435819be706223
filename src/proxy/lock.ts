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

/** Whether the lock file at `path` was left by a process that no longer holds it. */
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

/**
 * Runs `fn` holding the lock file `path` (created exclusively), waiting up to LOCK_WAIT_MS for
 * another holder and taking over one left by an ended process of this host. Undefined when the
 * lock could not be had: the caller reports it.
 */
export function withLockFile<T>(path: string, fn: () => T): { value: T } | undefined {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    if (fd !== undefined) {
      try {
        HELD.add(path);
        writeSync(fd, `${HOST}\n${process.pid}\n`);
        closeSync(fd);
        return { value: fn() };
      } finally {
        HELD.delete(path);
        unlinkSync(path);
      }
    }
    if (abandoned(path)) {
      try {
        unlinkSync(path);
      } catch {
        // Another process took it over first.
      }
      continue;
    }
    if (Date.now() >= deadline) return undefined;
    // The callers are synchronous (an update answers in one step): a short blocking wait.
    Atomics.wait(pause, 0, 0, 10);
  }
}
