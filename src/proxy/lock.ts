// Between processes on one host (two proxies on the default state directory): whether a lock's
// holder still runs, and a lock file held around a short synchronous read-change-write.
import { closeSync, openSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";

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
/** A lock file whose holder cannot be checked (another host's, none written in it yet, or a pid that runs) is left alone this long. */
const STALE_MS = 10_000;

/**
 * The lock files this process holds now. One naming this process's pid and not among them was left
 * by an earlier process that had the same pid (a container's proxy is pid 1 after every restart).
 */
const HELD = new Set<string>();

/**
 * Who holds the lock file at `path`: "gone" (free), "ended" (a process of this host that no
 * longer runs, or this pid's earlier process), else "unknown" (another host's, none written in
 * it yet, or a pid that runs, perhaps a reused one): judged by its age (reap).
 */
function holder(path: string): "gone" | "ended" | "unknown" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return "gone";
  }
  const [host, pid] = text.split("\n");
  if (host !== HOST || !/^\d+$/.test(pid ?? "")) return "unknown";
  return (Number(pid) === process.pid ? !HELD.has(path) : !alive(Number(pid))) ? "ended" : "unknown";
}

/**
 * Whether the file at `path` is older than STALE_MS at `now`, a time read off the same filesystem
 * (a file just written there): a shared mount's file times are its server's, and a host whose
 * clock differs from it by a minute took a fresh lock as stale, or an abandoned one as fresh.
 */
function stale(path: string, now: number): boolean {
  try {
    return now - statSync(path).mtimeMs > STALE_MS;
  } catch {
    return false;
  }
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
    // Just created, and with nothing (or part) of this process's name in it: removed by name.
    HELD.delete(path);
    rmSync(path, { force: true });
    throw e;
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Removes the lock file `path` if it is still this process's: one that stalled past STALE_MS may
 * have been taken over, and unlinking by name removed the new holder's lock while it held it.
 */
function release(path: string): void {
  HELD.delete(path);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    // Taken over and let go already.
    return;
  }
  if (text === `${HOST}\n${process.pid}\n`) unlinkSync(path);
}

/** Whether the takeover file `file` of process `who` (`<host>.<pid>`) may be its process's, taking over now. */
function reaping(file: string, who: string, now: number): boolean {
  const dot = who.lastIndexOf(".");
  const pid = who.slice(dot + 1);
  // An ended process of this host: no longer taking over anything.
  if (who.slice(0, dot) === HOST && /^\d+$/.test(pid) && !alive(Number(pid))) return false;
  // Held for a moment only: one older than any takeover was left (another host's, or a reused pid).
  return !stale(file, now);
}

/**
 * Removes the lock file `path` if it is abandoned (its holder ended, or it is older than any
 * write); false while it is held, or another process is taking it over (the caller waits and
 * looks again). Two processes that found it abandoned each unlinked it: the
 * later one removed the lock the earlier had just taken in its place, and both held it. So each
 * first creates a takeover file of its own (`<lock>.reap.<host>.<pid>`: who it is is in the name,
 * so a process killed at any point leaves nothing that reads as another's), then looks for
 * another's: it goes on only if there is none, so of two that look at once at most one goes on.
 * A shared guard file did the same, but one left by a killed process could only be removed by
 * name, racing its next holder, and one killed before writing its pid in it was waited for 10 s
 * in a loop that never yielded.
 */
function reap(path: string): boolean {
  const dir = dirname(path);
  const prefix = `${basename(path)}.reap.`;
  const mine = `${path}.reap.${HOST}.${process.pid}`;
  // One left by an earlier process with this pid is this process's name: made anew.
  rmSync(mine, { force: true });
  closeSync(openSync(mine, "wx", 0o600));
  try {
    // The filesystem's time now, which every age here is measured against.
    const now = statSync(mine).mtimeMs;
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix) || name === basename(mine)) continue;
      const file = join(dir, name);
      if (reaping(file, name.slice(prefix.length), now)) return false;
      // Its own name, which no running process uses: removing it takes nothing from another.
      rmSync(file, { force: true });
    }
    const who = holder(path);
    if (who === "unknown" && !stale(path, now)) return false;
    if (who !== "gone") unlinkSync(path);
    return true;
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Runs `fn` holding the lock file `path` (created exclusively), waiting up to LOCK_WAIT_MS for
 * another holder and taking over one left by an ended process of this host, or one older than any
 * write (a reused pid's, another host's on a shared mount). Undefined when the
 * lock could not be had: the caller reports it. `fn` runs synchronously, so the lock is never held
 * across a wait; the wait for another process's lock (or takeover) does not block the event loop
 * (requests and streams stalled for up to 2 s behind an admin update).
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
    // A lock whose holder runs is looked at in reap too: its age can only be read there.
    if (holder(path) !== "gone" && reap(path)) continue;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
