// Two proxies sharing one config file (each issuing virtual keys through its admin API): each
// update reads, changes and replaces the file, so one running between another's read and its
// rename was lost. A hook on the rename runs the second update at exactly that point.
import * as fs from "node:fs";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ConfigFile } from "../../src/proxy/config-file.js";
import type { Parsed, ProxyConfig } from "../../src/proxy/config.js";
import { tempDir } from "./setup.js";

let beforeRename: (() => void) | undefined;
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  return {
    ...real,
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      const hook = beforeRename;
      beforeRename = undefined;
      hook?.();
      real.renameSync(from, to);
    },
  };
});

describe("config file shared by two processes", () => {
  it("does not lose an update another process made while this one was writing", () => {
    const file = join(tempDir(), "config.json");
    fs.writeFileSync(file, "{}\n");
    const open = () => {
      const opened = ConfigFile.open(file);
      if (!opened.ok) throw new Error(opened.error);
      return opened.value;
    };
    const a = open();
    const b = open();
    let second: Parsed<ProxyConfig> | undefined;
    beforeRename = () => {
      second = b.update({ keepMessages: false });
    };
    expect(a.update({ compaction: { maxSummaryCalls: 7 } }).ok).toBe(true);
    expect(second).toBeDefined();
    const final = JSON.parse(fs.readFileSync(file, "utf8")) as { keepMessages: boolean; compaction: { maxSummaryCalls: number } };
    expect(final.compaction.maxSummaryCalls).toBe(7);
    // The second update either reached the file or was refused with a reason; never "ok" and lost.
    if (second!.ok) expect(final.keepMessages).toBe(false);
    else expect(second!.error).toMatch(/being updated by another process/);
    a.close();
    b.close();
  });

  it("takes over a lock file left by an ended process, or by an earlier process with this pid", () => {
    const file = join(tempDir(), "config.json");
    fs.writeFileSync(file, "{}\n");
    const opened = ConfigFile.open(file);
    if (!opened.ok) throw new Error(opened.error);
    const ended = spawnSync(process.execPath, ["-e", ""]).pid;
    for (const pid of [ended, process.pid]) {
      fs.writeFileSync(`${file}.lock`, `${hostname()}\n${pid}\n`);
      expect(opened.value.update({ compaction: { maxSummaryCalls: 3 } })).toMatchObject({ ok: true });
      expect(fs.existsSync(`${file}.lock`)).toBe(false);
    }
    opened.value.close();
  });
});
