// Where the live configuration is kept: defaults, then the config file, then API updates. The
// current value is one immutable object swapped in a single assignment, so a request sees
// either the old settings or the new ones, never a mix. Updates are validated whole before
// anything changes and written atomically (temporary file, then rename); edits to the file
// are picked up without a restart, and a bad edit keeps the running settings.
import { closeSync, existsSync, fsyncSync, openSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { mergeConfig, parseConfig, type Parsed, type ProxyConfig } from "./config.js";
import { withLockFile } from "./lock.js";
import { jsonSyntaxError } from "../json/json-error.js";
import { type ReadLimit, readText, TextInputError } from "../json/text-input.js";

/**
 * Settings are a small JSON object; thousands of virtual keys are well under a megabyte. A file
 * past this is no config file, and one without an end (/dev/zero) is read no further. Updates
 * that would write past it are refused, so the proxy never writes a file it will not read back.
 */
export const CONFIG_FILE_LIMIT: ReadLimit = { bytes: 16 * 1024 * 1024, what: "be a config file" };

export class ConfigFile {
  private value: ProxyConfig;
  private timer: NodeJS.Timeout | undefined;
  // The file's text as last loaded or written: a poll that reads the same text changes nothing.
  private seen: string | undefined;
  // The file's own settings as last loaded or written, without the command line's over them.
  private fileRaw: Record<string, unknown>;
  // Why the file's text as last read does not load (an edit in progress), while it does not.
  private rejected: string | undefined;
  // The file's inode, size and times when syncIfChanged last read it.
  private stamp: string | undefined;

  /**
   * @param file the config file (optional: without one, updates live in memory only)
   * @param overrides settings given on the command line, applied over the file's
   */
  private constructor(
    readonly file: string | undefined,
    private overrides: Record<string, unknown>,
    loaded: Loaded,
    private readonly onReload: (result: Parsed<ProxyConfig>) => void,
  ) {
    this.value = loaded.value;
    this.fileRaw = loaded.raw;
    this.seen = file === undefined ? undefined : readConfigText(file).text;
  }

  /** Loads the file (if it exists) over the defaults; fails with the reason when it is invalid. */
  static open(file: string | undefined, overrides: Record<string, unknown> = {}, onReload: (result: Parsed<ProxyConfig>) => void = () => {}): Parsed<ConfigFile> {
    const loaded = load(file, overrides);
    return loaded.ok ? { ok: true, value: new ConfigFile(file, overrides, loaded, onReload) } : loaded;
  }

  get current(): ProxyConfig {
    return this.value;
  }

  /**
   * Applies a partial update: all of it or, when any part is invalid, none of it. `refuse` says why
   * the settings as they are now (read again under the lock) take no such update (`refused`): a
   * check made before the lock missed what another proxy sharing the file wrote meanwhile.
   */
  async update(patch: unknown, refuse?: (current: ProxyConfig) => string | undefined): Promise<Parsed<ProxyConfig> | { ok: false; error: string; refused: true }> {
    if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return { ok: false, error: "the update must be a JSON object" };
    if (this.file === undefined) return this.apply(patch, refuse);
    // Read, changed and replaced under a lock file: another proxy sharing the file (issuing a
    // key) between this one's read and its rename had its change overwritten.
    let locked: { value: ReturnType<ConfigFile["apply"]> } | undefined;
    try {
      // Beside the file a link names: proxies given two links to one file share its lock.
      locked = await withLockFile(`${resolved(this.file)}.lock`, () => {
        this.sync();
        // Written over, an edit that does not load yet lost every other change in it.
        if (this.rejected !== undefined) return { ok: false, error: `${this.rejected}\nfix the file first: an update would write the running settings over it` };
        return this.apply(patch, refuse);
      });
    } catch (e) {
      return { ok: false, error: `cannot lock the config file ${this.file}: ${(e as Error).message}` };
    }
    return locked?.value ?? { ok: false, error: `the config file ${this.file} is being updated by another process (${this.file}.lock); try again` };
  }

  /** Validates `patch` over the current settings, and writes the result to the file if there is one. */
  private apply(patch: object, refuse: ((current: ProxyConfig) => string | undefined) | undefined): Parsed<ProxyConfig> | { ok: false; error: string; refused: true } {
    const refused = refuse?.(this.value);
    if (refused !== undefined) return { ok: false, error: refused, refused: true };
    const parsed = parseConfig(mergeConfig(this.value, patch));
    if (!parsed.ok) return parsed;
    // Admin updates come after the command line: one that sets an overridden setting replaces it, reloads too.
    const overrides = Object.fromEntries(Object.entries(this.overrides).filter(([k]) => !Object.hasOwn(patch, k)));
    if (this.file !== undefined) {
      // A setting still overridden keeps the file's own value there: the command line's is for this run
      // only (an update of anything else wrote --upstream into the file, for every later start).
      const kept: Record<string, unknown> = { ...parsed.value };
      for (const k of Object.keys(overrides)) {
        if (Object.hasOwn(this.fileRaw, k)) kept[k] = this.fileRaw[k];
        else delete kept[k];
      }
      const text = JSON.stringify(kept, null, 2) + "\n";
      if (Buffer.byteLength(text) > CONFIG_FILE_LIMIT.bytes) return { ok: false, error: `the settings would be too large to ${CONFIG_FILE_LIMIT.what} (more than ${CONFIG_FILE_LIMIT.bytes} bytes)` };
      const written = writeAtomic(this.file, text);
      if (written !== undefined) return { ok: false, error: written };
      this.seen = text;
      this.fileRaw = kept;
      this.rejected = undefined;
    }
    this.overrides = overrides;
    this.value = parsed.value;
    return parsed;
  }

  /** Re-reads the file; a file that no longer validates leaves the running settings alone. */
  reload(): Parsed<ProxyConfig> {
    if (this.file !== undefined) this.seen = readConfigText(this.file).text;
    const loaded = load(this.file, this.overrides);
    if (loaded.ok) {
      this.value = loaded.value;
      this.fileRaw = loaded.raw;
    }
    this.rejected = loaded.ok ? undefined : loaded.error;
    this.onReload(loaded);
    return loaded;
  }

  /**
   * Reloads when the file's text changed since it was last read or written. Before an update too:
   * another proxy sharing the file may have written it since the last poll (a key it issued), and
   * an update built on the older settings would drop that change from the file. True when it
   * loaded new settings.
   */
  sync(): boolean {
    if (this.file === undefined) return false;
    // A missing file is most likely being replaced: keep the running settings.
    const { text } = readConfigText(this.file);
    if (text === undefined || text === this.seen) return false;
    return this.reload().ok;
  }

  /**
   * sync() for the request path, where anyone can send an unknown virtual key: reads the file only
   * when its inode, size or times changed since this last read it (each such request read the whole
   * file). Another proxy's update renames a new file into place, so a key it issued is still seen
   * at once; an edit in place that keeps all of them (within one clock tick) waits for the poll.
   */
  syncIfChanged(): boolean {
    if (this.file === undefined) return false;
    // Taken before the read: a change after it differs from the stamp, and is read next time.
    const stamp = fileStamp(this.file);
    if (stamp === undefined || stamp === this.stamp) return false;
    this.stamp = stamp;
    return this.sync();
  }

  /** Reloads when the file's text changes (read by polling: editors that replace the file are seen too). */
  watch(intervalMs = 1000): void {
    if (this.file === undefined || this.timer !== undefined) return;
    this.timer = setInterval(() => this.sync(), intervalMs);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * The file's text, or why it cannot be read. Bounded (CONFIG_FILE_LIMIT) and strictly UTF-8, as
 * every input file: a config file without an end (/dev/zero) was read to the longest string.
 */
function readConfigText(file: string): { text: string; error?: undefined } | { text?: undefined; error: string } {
  try {
    return { text: readText(file, file, CONFIG_FILE_LIMIT) };
  } catch (e) {
    return { error: `cannot read the config file ${file}${e instanceof TextInputError ? `: ${e.message}` : ""}` };
  }
}

/** What changes when a file is replaced or written (inode, size, times), or undefined when it cannot be looked at (missing: most likely being replaced). */
function fileStamp(file: string): string | undefined {
  try {
    const s = statSync(file, { bigint: true, throwIfNoEntry: false });
    return s === undefined ? undefined : `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** The settings, with the file's own part (its JSON object) beside them. */
type Loaded = { ok: true; value: ProxyConfig; raw: Record<string, unknown> };

function load(file: string | undefined, overrides: Record<string, unknown>): Loaded | { ok: false; error: string } {
  let raw: unknown = {};
  if (file !== undefined && existsSync(file)) {
    const { text, error } = readConfigText(file);
    if (text === undefined) return { ok: false, error };
    try {
      raw = JSON.parse(text);
    } catch (e) {
      return { ok: false, error: `the config file ${file} is not valid JSON: ${jsonSyntaxError(text, e)}` };
    }
    // Else the command line's settings replaced it whole (mergeConfig), and the defaults ran without a word.
    if (raw !== null && (typeof raw !== "object" || Array.isArray(raw))) return { ok: false, error: `the config file ${file} must hold a JSON object of settings, not ${Array.isArray(raw) ? "an array" : `a ${typeof raw}`}` };
  }
  const parsed = parseConfig(mergeConfig(raw, overrides));
  if (!parsed.ok) return { ok: false, error: `invalid configuration${file === undefined ? "" : ` in ${file}`}:\n${parsed.error}` };
  // An object, or null: no settings.
  return { ...parsed, raw: (raw ?? {}) as Record<string, unknown> };
}

/**
 * The file `file` names, through any symbolic links: renamed over a link, the temporary file made
 * the link a plain copy that edits of the file it named no longer reached.
 */
function resolved(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    // Not there yet: written where named.
    return file;
  }
}

/**
 * Writes through a temporary file and a rename, so a reader never sees half a file, and syncs it
 * to the disk before answering: an update may be a virtual key its client now holds, which a power
 * loss must not take back (nor leave an empty file renamed over the settings). Returns an error message or undefined.
 */
function writeAtomic(named: string, text: string): string | undefined {
  const file = resolved(named);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    // The file may hold the summarizer's key: readable by its owner only.
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeFileSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    // Written in part (a full disk) or not renamed: a copy of the settings, secrets and all, left behind at every failed update.
    rmSync(tmp, { force: true });
    return `cannot write the config file ${named}: ${(e as Error).message}`;
  }
  syncDirectory(dirname(file));
  return undefined;
}

/** Makes a rename in `dir` durable. Best effort: some systems cannot open or sync a directory (Windows), and the file is in place already. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // The rename stands; only its durability across a power loss is not assured here.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
