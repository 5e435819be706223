// Two proxies sharing one config file (each issuing virtual keys through its admin API): each
// update reads, changes and replaces the file, so one running between another's read and its
// rename was lost. A hook on the rename runs the second update at exactly that point.
import * as fs from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { CONFIG_FILE_LIMIT, ConfigFile } from "../../src/proxy/config-file.js";
import type { Parsed, ProxyConfig } from "../../src/proxy/config.js";
import { withLockFile } from "../../src/proxy/lock.js";
import { startProxy } from "../../src/proxy/index.js";
import { hashKey } from "../../src/proxy/tenancy.js";
import { tempDir } from "./setup.js";

/** `file` opened as the proxy opens its config file. */
function openConfig(file: string): ConfigFile {
  const opened = ConfigFile.open(file);
  if (!opened.ok) throw new Error(opened.error);
  return opened.value;
}

/** A new config file of no settings, config.json in `dir` (a new temporary directory), and it opened. */
function newConfig(dir = tempDir()): { file: string; config: ConfigFile } {
  const file = join(dir, "config.json");
  fs.writeFileSync(file, "{}\n");
  return { file, config: openConfig(file) };
}

let beforeRename: (() => void) | undefined;
let afterRead: ((path: fs.PathOrFileDescriptor) => void) | undefined;
let beforeOpen: ((path: fs.PathLike) => void) | undefined;
/** While set, the paths synced and renamed, in order: "fsync <path>", "rename <to>". */
let durability: string[] | undefined;
const openedPaths = new Map<number, string>();
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  return {
    ...real,
    openSync: ((path: fs.PathLike, ...rest: unknown[]) => {
      const hook = beforeOpen;
      hook?.(path);
      const fd = (real.openSync as (...a: unknown[]) => number)(path, ...rest);
      openedPaths.set(fd, String(path));
      return fd;
    }) as typeof fs.openSync,
    fsyncSync: (fd: number) => {
      durability?.push(`fsync ${openedPaths.get(fd) ?? fd}`);
      real.fsyncSync(fd);
    },
    readFileSync: ((path: fs.PathOrFileDescriptor, options?: unknown) => {
      const text = real.readFileSync(path, options as BufferEncoding);
      const hook = afterRead;
      hook?.(path);
      return text;
    }) as typeof fs.readFileSync,
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      const hook = beforeRename;
      beforeRename = undefined;
      hook?.();
      real.renameSync(from, to);
      durability?.push(`rename ${String(to)}`);
    },
  };
});

describe("config file shared by two processes", () => {
  it("does not lose an update another process made while this one was writing", async () => {
    const { file, config: a } = newConfig();
    const b = openConfig(file);
    let second: Promise<Parsed<ProxyConfig>> | undefined;
    beforeRename = () => {
      second = b.update({ keepMessages: false });
    };
    expect((await a.update({ compaction: { maxSummaryCalls: 7 } })).ok).toBe(true);
    expect(second).toBeDefined();
    // It waits for the first to let go of the lock (not blocking this process meanwhile), then updates.
    expect((await second!).ok).toBe(true);
    const final = JSON.parse(fs.readFileSync(file, "utf8")) as { keepMessages: boolean; compaction: { maxSummaryCalls: number } };
    expect(final.compaction.maxSummaryCalls).toBe(7);
    expect(final.keepMessages).toBe(false);
    a.close();
    b.close();
  });

  it("is waited for without blocking this process while another running process holds it", async () => {
    const { file, config } = newConfig();
    // Held by a process that runs (the test runner's), and never let go.
    fs.writeFileSync(`${fs.realpathSync(file)}.lock`, `${hostname()}\n${process.ppid}\n`);
    let turns = 0;
    const timer = setInterval(() => turns++, 1);
    const result = await config.update({ keepMessages: false });
    clearInterval(timer);
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/being updated by another process/) as unknown });
    // Before: the wait (up to 2 s) blocked the event loop: no timer, request or stream ran meanwhile.
    expect(turns).toBeGreaterThan(0);
    config.close();
  });

  it("takes over a lock file left by an ended process, or by an earlier process with this pid", async () => {
    const { file, config } = newConfig();
    const ended = spawnSync(process.execPath, ["-e", ""]).pid;
    for (const pid of [ended, process.pid]) {
      fs.writeFileSync(`${file}.lock`, `${hostname()}\n${pid}\n`);
      expect(await config.update({ compaction: { maxSummaryCalls: 3 } })).toMatchObject({ ok: true });
      expect(fs.existsSync(`${file}.lock`)).toBe(false);
    }
    config.close();
  });
});

describe("a config update whose file cannot be replaced", () => {
  // The temporary file written for the rename was left behind at every failed update, each a copy
  // of the settings (the summarizer's key among them).
  it("leaves no temporary file behind", async () => {
    const dir = tempDir();
    const { config } = newConfig(dir);
    beforeRename = () => {
      throw Object.assign(new Error("EXDEV: cross-device link not permitted"), { code: "EXDEV" });
    };
    const result = await config.update({ compaction: { summarizer: { apiKey: "sk-summary-secret" } } });
    config.close();
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/cannot write the config file/) as unknown });
    // Before: ["config.json", "config.json.<pid>.<time>.tmp"].
    expect(fs.readdirSync(dir)).toEqual(["config.json"]);
  });
});

describe("a lock file of this host naming a process that runs, older than any update", () => {
  // Its holder was killed and its pid is now another process's (pids are reused, in a container
  // soon): the docs say a lock 10 s old is taken over, but one naming a running pid never was.
  it("is taken over", async () => {
    const { file, config } = newConfig();
    fs.writeFileSync(`${file}.lock`, `${hostname()}\n${process.ppid}\n`);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${file}.lock`, old, old);
    // Before: { ok: false, error: "... being updated by another process" }, at every update.
    expect(await config.update({ compaction: { maxSummaryCalls: 3 } })).toMatchObject({ ok: true });
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
    config.close();
  });
});

describe("a lock file of another host on a shared mount, seen from a host whose clock differs from the mount's", () => {
  // Its age was this host's clock minus the file's time, which the file server sets: a clock a
  // minute behind kept an abandoned lock for 70 s, and one a minute ahead took a fresh one at once.
  const rows = [
    { clock: "a minute behind", skewMs: -60_000, writtenAgoMs: 20_000, expected: { ok: true } },
    { clock: "a minute ahead", skewMs: 60_000, writtenAgoMs: 0, expected: { ok: false } },
  ];
  it.each(rows)("is judged by the mount's clock (this host's $clock)", async ({ skewMs, writtenAgoMs, expected }) => {
    const { file, config } = newConfig();
    fs.writeFileSync(`${file}.lock`, "other-host\n4242\n");
    const written = new Date(Date.now() - writtenAgoMs);
    fs.utimesSync(`${file}.lock`, written, written);
    const now = Date.now.bind(Date);
    const skewed = vi.spyOn(Date, "now").mockImplementation(() => now() + skewMs);
    try {
      // Before: refused (its age read as -40 s), and taken over at once (read as 60 s).
      expect(await config.update({ compaction: { maxSummaryCalls: 3 } })).toMatchObject(expected);
    } finally {
      skewed.mockRestore();
      config.close();
    }
  });
});

describe("a holder that stalled past the stale age while another process took its lock over", () => {
  // Its release unlinked the lock by name: the other process's, which it still held.
  it("leaves the other's lock in place", async () => {
    const dir = tempDir();
    const { lock, inside, release, script } = holderScript(dir);
    let child: ReturnType<typeof spawn> | undefined;
    const got = await withLockFile(lock, () => {
      // This holder stalls (its lock's time a minute back, as after a minute's stall), and the other takes over.
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(lock, old, old);
      child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] });
      const pause = new Int32Array(new SharedArrayBuffer(4));
      const deadline = Date.now() + 60_000;
      while (!fs.existsSync(inside) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 10);
      return fs.existsSync(inside);
    });
    const after = fs.existsSync(lock) ? fs.readFileSync(lock, "utf8") : "(removed)";
    fs.writeFileSync(release, "");
    let out = "";
    child!.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    child!.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    await new Promise((done) => child!.once("close", done));
    expect(got).toEqual({ value: true });
    // Before: "(removed)", while the other process held it.
    expect(after).toBe(`${hostname()}\n${child!.pid}\n`);
    expect(out).toBe("held");
    expect(fs.existsSync(lock)).toBe(false);
  }, 120_000);
});

describe("a lock file left by an ended process, found so by two processes at once", () => {
  // Each checked it was abandoned and then unlinked it: the later one removed the lock the earlier
  // had just taken in its place, took it too, and both ran their read-change-write at once.
  it("is taken over by one of them only", async () => {
    const dir = tempDir();
    // The other process: takes the lock, says so, and holds it until told to let go.
    const { lock, inside, release, script } = holderScript(dir);
    const ended = spawnSync(process.execPath, ["-e", ""]).pid;
    fs.writeFileSync(lock, `${hostname()}\n${ended}\n`);
    let child: ReturnType<typeof spawn> | undefined;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    // Right after this process read the ended holder's lock (and found it abandoned), the other takes it over.
    afterRead = (path) => {
      if (path !== lock) return;
      afterRead = undefined;
      child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] });
      const deadline = Date.now() + 60_000;
      while (!fs.existsSync(inside) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 10);
    };
    let out = "";
    const got = await withLockFile(lock, () => fs.existsSync(inside) && !fs.existsSync(release));
    afterRead = undefined;
    fs.writeFileSync(release, "");
    expect(child).toBeDefined();
    let err = "";
    child!.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    child!.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    await new Promise((done) => child!.once("close", done));
    // Before: { value: true }, the lock held by both processes at once (and the other's release then failed: ENOENT).
    expect(got?.value).not.toBe(true);
    expect({ out, err }).toEqual({ out: "held", err: "" });
    expect(fs.existsSync(lock)).toBe(false);
    expect(fs.existsSync(`${lock}.reap`)).toBe(false);
  }, 120_000);
});

describe("a virtual key issued under a name another proxy sharing the config file issues at the same time", () => {
  // The name was checked free before the lock was taken: the other proxy's key of that name,
  // written in between, was replaced by this one's, and the key it had handed out stopped working.
  it("is refused as existing, and the other's key is kept", async () => {
    const { file, config: other } = newConfig();
    const proxy = await startProxy({ upstream: "http://127.0.0.1:9/v1", port: 0, logger: () => {}, configFile: file, adminToken: "adm", watchIntervalMs: 3_600_000 });
    try {
      // The other proxy issues "alice" just as this one is about to lock the file for its own "alice".
      let issued: ReturnType<typeof other.update> | undefined;
      beforeOpen = (path) => {
        if (path !== `${file}.lock`) return;
        beforeOpen = undefined;
        issued = other.update({ tenancy: { virtualKeys: { alice: { keyHash: hashKey("ptc-vk-others") } } } });
      };
      const res = await fetch(`${proxy.url}/ext/context_compaction/keys`, { method: "POST", headers: { authorization: "Bearer adm", "content-type": "application/json" }, body: JSON.stringify({ name: "alice" }) });
      beforeOpen = undefined;
      expect((await issued)?.ok).toBe(true);
      const body = (await res.json()) as { error?: { code?: string } };
      // Before: 200 with a new key, and the file's alice was this proxy's: the other's key was dead.
      expect({ status: res.status, code: body.error?.code }).toEqual({ status: 409, code: "key_exists" });
      const final = JSON.parse(fs.readFileSync(file, "utf8")) as { tenancy: { virtualKeys: Record<string, { keyHash: string }> } };
      expect(final.tenancy.virtualKeys.alice.keyHash).toBe(hashKey("ptc-vk-others"));
    } finally {
      beforeOpen = undefined;
      other.close();
      await proxy.close();
    }
  });
});

describe("the takeover of a lock file left by an ended process, while another process is taking it over", () => {
  // The other process: a real one, running withLockFile on the same lock with fs hooked. "kill"
  // ends it (SIGKILL) right after it created its takeover file, before anything was written in it;
  // "pause" holds it right before it removes the abandoned lock until `release` exists.
  const other = (dir: string, lock: string, mode: "kill" | "pause") => {
    const script = join(dir, `${mode}.mts`);
    const release = join(dir, "release");
    fs.writeFileSync(
      script,
      `import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const realOpen = fs.openSync, realUnlink = fs.unlinkSync;
const pause = new Int32Array(new SharedArrayBuffer(4));
fs.openSync = (path, ...rest) => {
  const fd = realOpen(path, ...rest);
  if (${JSON.stringify(mode)} === "kill" && String(path).startsWith(${JSON.stringify(`${lock}.reap`)})) process.kill(process.pid, "SIGKILL");
  return fd;
};
fs.unlinkSync = (path) => {
  if (${JSON.stringify(mode)} === "pause" && path === ${JSON.stringify(lock)}) {
    fs.writeFileSync(${JSON.stringify(join(dir, "reaping"))}, "");
    const deadline = Date.now() + 60_000;
    while (!fs.existsSync(${JSON.stringify(release)}) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 10);
  }
  realUnlink(path);
};
syncBuiltinESMExports();
const { withLockFile } = await import(${JSON.stringify(resolve("src/proxy/lock.ts"))});
const got = await withLockFile(${JSON.stringify(lock)}, () => {});
process.stdout.write(got === undefined ? "refused" : "held");
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const ended = new Promise<{ out: string; signal: NodeJS.Signals | null }>((done) => child.once("close", (_code, signal) => done({ out, signal })));
    return { ended, release };
  };

  it("is done at once after that process was killed in the middle of it", async () => {
    const dir = tempDir();
    const lock = join(dir, "config.json.lock");
    const ended = spawnSync(process.execPath, ["-e", ""]).pid;
    fs.writeFileSync(lock, `${hostname()}\n${ended}\n`);
    expect((await other(dir, lock, "kill").ended).signal).toBe("SIGKILL");
    let reads = 0;
    afterRead = (path) => {
      if (path === lock) reads++;
    };
    const got = await withLockFile(lock, () => "mine");
    afterRead = undefined;
    // Before: its empty takeover file was waited for (10 s, the stale age of a file naming no
    // process) in a loop that never yielded: the event loop blocked, the lock read ~10^6 times.
    expect(got).toEqual({ value: "mine" });
    expect(reads).toBeLessThan(10);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith("config.json.lock"))).toEqual([]);
  }, 60_000);

  it("is waited for without blocking this process, and left to that process", async () => {
    const dir = tempDir();
    const lock = join(dir, "config.json.lock");
    const ended = spawnSync(process.execPath, ["-e", ""]).pid;
    fs.writeFileSync(lock, `${hostname()}\n${ended}\n`);
    const taker = other(dir, lock, "pause");
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const deadline = Date.now() + 60_000;
    while (!fs.existsSync(join(dir, "reaping")) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 10);
    // A safety net for the code before: it looked again in a loop that never yielded, so the other
    // process is let go after this many looks (~never when this process waits as it should).
    let reads = 0;
    afterRead = (path) => {
      if (path === lock && ++reads === 100_000) fs.writeFileSync(taker.release, "");
    };
    let turns = 0;
    const timer = setInterval(() => turns++, 1);
    const got = await withLockFile(lock, () => "mine");
    clearInterval(timer);
    afterRead = undefined;
    fs.writeFileSync(taker.release, "");
    const { out } = await taker.ended;
    // Before: 100,000 looks with no turn of the event loop between them.
    expect(reads).toBeLessThan(100_000);
    expect(turns).toBeGreaterThan(0);
    expect({ got, out }).toEqual({ got: undefined, out: "held" });
    expect(fs.readdirSync(dir).filter((f) => f.startsWith("config.json.lock"))).toEqual([]);
  }, 120_000);
});

describe("a config update (a virtual key issued, its client given the key)", () => {
  it("is on the disk before it is answered: the new file's data synced before its rename, the directory after", async () => {
    const dir = fs.realpathSync(tempDir());
    const { file, config } = newConfig(dir);
    durability = [];
    try {
      expect((await config.update({ keepMessages: false })).ok).toBe(true);
      const ops = durability.filter((op) => !op.endsWith(".lock"));
      // Before: only the rename; after power loss the update (a key its client holds) could be gone.
      expect(ops).toHaveLength(3);
      expect(ops[0].startsWith(`fsync ${file}.`) && ops[0].endsWith(".tmp")).toBe(true);
      expect(ops.slice(1)).toEqual([`rename ${file}`, `fsync ${dir}`]);
    } finally {
      durability = undefined;
      config.close();
    }
  });
});

/**
 * A script for another process that takes the lock `<dir>/config.json.lock`, writes `inside` once
 * it holds it, holds it until `release` exists, then prints "held" (or "refused").
 */
function holderScript(dir: string): { lock: string; inside: string; release: string; script: string } {
  const lock = join(dir, "config.json.lock");
  const inside = join(dir, "inside");
  const release = join(dir, "release");
  const script = join(dir, "holder.mts");
  fs.writeFileSync(
    script,
    `import { existsSync, writeFileSync } from "node:fs";
import { withLockFile } from ${JSON.stringify(resolve("src/proxy/lock.ts"))};
const pause = new Int32Array(new SharedArrayBuffer(4));
const got = await withLockFile(${JSON.stringify(lock)}, () => {
  writeFileSync(${JSON.stringify(inside)}, "");
  const deadline = Date.now() + 60_000;
  while (!existsSync(${JSON.stringify(release)}) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 10);
});
process.stdout.write(got === undefined ? "refused" : "held");
`,
  );
  return { lock, inside, release, script };
}

describe("a config update past the size a config file may be", () => {
  // The proxy wrote what its next start refused to read: the file is read no further than CONFIG_FILE_LIMIT.
  it("is refused, the file and the running settings kept", async () => {
    const { file, config } = newConfig();
    const conversations = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${i}-${"c".repeat(CONFIG_FILE_LIMIT.bytes / 100)}`, { disabled: true }]));
    const result = await config.update({ conversations });
    config.close();
    expect(result).toEqual({ ok: false, error: `the settings would be too large to be a config file (more than ${CONFIG_FILE_LIMIT.bytes} bytes)` });
    expect(fs.readFileSync(file, "utf8")).toBe("{}\n");
    expect(config.current.conversations).toEqual({});
  });
});
