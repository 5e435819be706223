// The settings' schema: every value it accepts must mean what it says once in use.
import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../src/lisp/index.js";
import { lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigFile } from "../../src/proxy/config-file.js";
import { parseConfig } from "../../src/proxy/config.js";
import { tempDir } from "./setup.js";

describe("a setting in milliseconds that a timer waits for", () => {
  // Past the longest timer Node keeps, setTimeout fires after 1 ms (with a TimeoutOverflowWarning
  // on stderr): a drainTimeoutMs of 99999999999 cut every in-flight request at once on SIGTERM,
  // as --drain-timeout did before it was bounded.
  it.each([
    [{ drainTimeoutMs: MAX_TIMER_MS + 1 }, "drainTimeoutMs"],
    [{ upstreamTimeoutMs: MAX_TIMER_MS + 1 }, "upstreamTimeoutMs"],
    [{ retries: { maxDelayMs: MAX_TIMER_MS + 1 } }, "retries.maxDelayMs"],
    [{ retries: { baseDelayMs: MAX_TIMER_MS + 1 } }, "retries.baseDelayMs"],
    [{ compaction: { deadlineMs: MAX_TIMER_MS + 1 } }, "compaction.deadlineMs"],
    [{ compaction: { summarizer: { timeoutMs: MAX_TIMER_MS + 1 } } }, "compaction.summarizer.timeoutMs"],
  ])("is refused past the longest timer: %j", (raw, path) => {
    const parsed = parseConfig(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain(path);
      expect(parsed.error).toContain(String(MAX_TIMER_MS));
    }
  });
  it("is taken up to the longest timer", () => {
    const parsed = parseConfig({ drainTimeoutMs: MAX_TIMER_MS, upstreamTimeoutMs: MAX_TIMER_MS, retries: { maxDelayMs: MAX_TIMER_MS, baseDelayMs: MAX_TIMER_MS }, compaction: { deadlineMs: MAX_TIMER_MS, summarizer: { timeoutMs: MAX_TIMER_MS } } });
    expect(parsed.ok).toBe(true);
  });
});

describe("an upstream, fallback or summarizer URL", () => {
  // Requests went to the URL's origin and path only: a gateway's user:password and Azure's
  // ?api-version were dropped without a word, so the upstream saw no credentials and no version.
  it.each([
    [{ upstream: "http://gw-user:gw-pass-S3CR3T@127.0.0.1:9/v1" }, "upstream", "user name or password"],
    [{ upstream: "https://api.example.com/v1?api-version=2024-02-01&key=S3CR3T" }, "upstream", "query"],
    [{ retries: { fallbackUpstream: "https://:S3CR3T@backup.example/v1" } }, "retries.fallbackUpstream", "user name or password"],
    [{ compaction: { summarizer: { baseURL: "http://u:S3CR3T@127.0.0.1:11/v1?x=1" } } }, "compaction.summarizer.baseURL", "query"],
  ])("with parts that are not sent is refused, without quoting it: %j", (raw, path, why) => {
    const parsed = parseConfig(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain(path);
      expect(parsed.error).toContain(why);
      expect(parsed.error).not.toContain("S3CR3T");
    }
  });
  it("that is not a URL is refused as before", () => {
    const parsed = parseConfig({ upstream: "http://[::1" });
    expect(parsed.ok).toBe(false);
  });
});

describe("a setting given on the command line (--upstream)", () => {
  // It is applied over the file's, for this run: an admin update of anything else wrote it into the
  // file, so the one-off override became the file's upstream for every later start.
  const open = (file: string, overrides: Record<string, unknown>) => {
    const opened = ConfigFile.open(file, overrides);
    if (!opened.ok) throw new Error(opened.error);
    return opened.value;
  };
  it("is not written into the config file by an update of another setting", async () => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, JSON.stringify({ upstream: "http://127.0.0.1:1111/v1" }));
    const config = open(file, { upstream: "http://127.0.0.1:2222/v1" });
    expect((await config.update({ keepMessages: false })).ok).toBe(true);
    expect(config.current).toMatchObject({ upstream: "http://127.0.0.1:2222/v1", keepMessages: false });
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ upstream: "http://127.0.0.1:1111/v1", keepMessages: false });
    config.close();
  });
  it("is not written into a file that names no upstream", async () => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, "{}\n");
    const config = open(file, { upstream: "http://127.0.0.1:2222/v1" });
    expect((await config.update({ keepMessages: false })).ok).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8"))).not.toHaveProperty("upstream");
    config.close();
  });
  it("gives way to an admin update of it, which is kept across a reload", async () => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, "{}\n");
    const config = open(file, { upstream: "http://127.0.0.1:2222/v1" });
    expect((await config.update({ upstream: "http://127.0.0.1:3333/v1" })).ok).toBe(true);
    expect(config.current.upstream).toBe("http://127.0.0.1:3333/v1");
    expect(config.reload().ok).toBe(true);
    expect(config.current.upstream).toBe("http://127.0.0.1:3333/v1");
    config.close();
  });
});

describe("a config file that is a symbolic link", () => {
  // An update renamed its temporary file over the link: the link became a plain copy, the file it
  // named kept the old settings, and edits of that file were no longer seen.
  it("is updated through the link, which stays a link to the file it names", async () => {
    const dir = tempDir();
    const real = join(dir, "real.json");
    const link = join(dir, "link.json");
    writeFileSync(real, "{}\n");
    symlinkSync(real, link);
    const opened = ConfigFile.open(link);
    if (!opened.ok) throw new Error(opened.error);
    const config = opened.value;
    expect((await config.update({ keepMessages: false })).ok).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(real, "utf8"))).toMatchObject({ keepMessages: false });
    writeFileSync(real, JSON.stringify({ idleTtlSeconds: 42 }));
    expect(config.sync()).toBe(true);
    expect(config.current.idleTtlSeconds).toBe(42);
    config.close();
  });
});

describe("a config file that holds no JSON object", () => {
  // Its settings were replaced by the command line's: an array, a string or a number was taken
  // for no settings at all, and the proxy ran on the defaults without a word.
  it.each(['[{"upstream": "http://127.0.0.1:1111/v1"}]', '"x"', "42", "true"])("is refused at start: %s", (text) => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, text);
    const opened = ConfigFile.open(file, { upstream: "http://127.0.0.1:2222/v1" });
    expect(opened.ok).toBe(false);
    if (!opened.ok) expect(opened.error).toMatch(/must hold a JSON object/);
  });
  it("is refused on reload, keeping the running settings", () => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, JSON.stringify({ idleTtlSeconds: 42 }));
    const opened = ConfigFile.open(file, { upstream: "http://127.0.0.1:2222/v1" });
    if (!opened.ok) throw new Error(opened.error);
    writeFileSync(file, "[]");
    expect(opened.value.reload().ok).toBe(false);
    expect(opened.value.current.idleTtlSeconds).toBe(42);
    opened.value.close();
  });
});

describe("an update while the config file holds an edit that does not load", () => {
  // The edit (a trailing comma) was rejected on reload, as it should be, and then the update wrote
  // the running settings over it: every other change in the edit was lost without a word.
  it("is refused with the file's problem, and the edit is left as it is", async () => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, "{}\n");
    const opened = ConfigFile.open(file);
    if (!opened.ok) throw new Error(opened.error);
    const edit = '{ "idleTtlSeconds": 42, "keepMessages": false, }';
    writeFileSync(file, edit);
    expect(opened.value.sync()).toBe(false);
    const updated = await opened.value.update({ compaction: { maxSummaryCalls: 3 } });
    expect(updated.ok).toBe(false);
    if (!updated.ok) expect(updated.error).toMatch(/not valid JSON/);
    expect(readFileSync(file, "utf8")).toBe(edit);
    // Once the edit is fixed, updates go through again, over it.
    writeFileSync(file, edit.replace(", }", " }"));
    expect((await opened.value.update({ compaction: { maxSummaryCalls: 3 } })).ok).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ idleTtlSeconds: 42, keepMessages: false, compaction: { maxSummaryCalls: 3 } });
    opened.value.close();
  });
});

describe("settings nested thousands of levels deep", () => {
  // Validating a strategy's options recursed once per level: a config file edited to hold such a
  // value threw RangeError out of the file watcher's timer (the proxy process died), at start it
  // reached the user as "RangeError: Maximum call stack size exceeded", and in an update as
  // "cannot lock the config file".
  const deep = (levels: number) => `{"compaction":{"strategy":{"name":"usage-ratio","options":{"x":${"[".repeat(levels)}${"]".repeat(levels)}}}}}`;
  it("are refused by the schema with the reason", () => {
    const parsed = parseConfig(JSON.parse(deep(20_000)));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(/nest more than \d+ levels/);
  });
  it("in an edit of the file are rejected on reload, the running settings kept", async () => {
    const file = join(tempDir(), "config.json");
    writeFileSync(file, JSON.stringify({ idleTtlSeconds: 42 }));
    const opened = ConfigFile.open(file);
    if (!opened.ok) throw new Error(opened.error);
    writeFileSync(file, deep(20_000));
    expect(opened.value.sync()).toBe(false);
    expect(opened.value.current.idleTtlSeconds).toBe(42);
    const updated = await opened.value.update(JSON.parse(deep(20_000)));
    expect(updated.ok).toBe(false);
    if (!updated.ok) expect(updated.error).toMatch(/nest more than \d+ levels/);
    opened.value.close();
  });
});

describe("an update that names __proto__", () => {
  // JSON.parse makes "__proto__" an own key, but the merge assigned it: the patch's object became
  // the merged settings' prototype, and the schema read settings through it. With no upstream set,
  // POST config {"__proto__":{"upstream":"http://evil/v1"}} pointed the proxy at that upstream.
  it.each([
    ['{"__proto__":{"upstream":"http://127.0.0.1:9/v1"}}', (c: ConfigFile) => c.current.upstream],
    ['{"compaction":{"summarizer":{"__proto__":{"model":"other"}}}}', (c: ConfigFile) => c.current.compaction.summarizer.model],
  ])("is refused as an unknown setting, nothing changed: %s", async (text, read) => {
    const opened = ConfigFile.open(undefined);
    if (!opened.ok) throw new Error(opened.error);
    const updated = await opened.value.update(JSON.parse(text));
    expect(updated.ok).toBe(false);
    if (!updated.ok) expect(updated.error).toMatch(/__proto__/);
    expect(read(opened.value)).toBeUndefined();
  });
});
