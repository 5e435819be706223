// Output a command makes: files, checked before the work that fills them, so a run is not
// spent to fail at its last step; and text from files and models, made safe for a terminal.
import { chmodSync, closeSync, openSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** Why `file` cannot be written (no name, its folder is missing or takes no new file, or it is a folder), or undefined. */
export function unwritable(file: string): string | undefined {
  // An unset variable (--json "$OUT") names nothing; resolve("") would pass for the folder itself.
  if (file === "") return "the file name is empty";
  const dir = dirname(resolve(file));
  const folder = statSync(dir, { throwIfNoEntry: false });
  if (folder === undefined) return `the folder ${dir} does not exist`;
  if (!folder.isDirectory()) return `${dir} is not a folder`;
  const existing = statSync(file, { throwIfNoEntry: false });
  if (existing?.isDirectory()) return "it is a folder";
  // A FIFO or device is written in place (replacing), and opening one here could block.
  if (existing !== undefined && !existing.isFile()) return undefined;
  // The file is written beside its target and renamed into place, so that folder must take a
  // new file. Tried, not asked: access() says yes to root where the file system refuses.
  const folderOfTarget = existing === undefined ? dir : dirname(realpathSync(file));
  const probe = join(folderOfTarget, `.${basename(file)}.${process.pid}.probe`);
  try {
    closeSync(openSync(probe, "w"));
    rmSync(probe, { force: true });
  } catch (e) {
    return `the folder ${folderOfTarget} does not take new files (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  return undefined;
}

/** Whether `file` names one of `files`, read or written by the same command: writing it would lose that file. */
export function namesOneOf(file: string, files: readonly string[]): boolean {
  const target = resolve(file);
  // Through a symbolic or hard link another spelling names the same file: compare what the names lead to.
  const stat = statOf(file);
  return files.some((f) => {
    if (resolve(f) === target) return true;
    const other = stat === undefined ? undefined : statOf(f);
    return other !== undefined && stat !== undefined && other.dev === stat.dev && other.ino === stat.ino;
  });
}

/** The file a name leads to, or undefined when there is none to reach (missing, a file used as a folder, unreadable); the caller's own checks report those. */
function statOf(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/** An output file being replaced: `path` is where to write it, `commit` puts it in place, `abandon` drops it. */
export interface Replacement {
  readonly path: string;
  commit(): void;
  abandon(): void;
}

/**
 * Replaces `file` through a temporary file beside it and a rename, so a write that stops
 * halfway (a full disk, a kill) leaves the previous file whole instead of half of the new one.
 * The new file keeps the old one's permissions (a trace made private stays so) and a symbolic
 * link is written through; a FIFO or device (/dev/stdout) is written in place, as it cannot be replaced.
 * It is no more readable by group or others than any of `readFrom`, the files its content
 * comes from: a page made from a private trace holds what the trace holds.
 */
export function replacing(file: string, readFrom: readonly string[] = []): Replacement & { readonly mode: number } {
  const old = statOf(file);
  if (old !== undefined && !old.isFile()) return { path: file, mode: 0o666, commit: () => undefined, abandon: () => undefined };
  const target = old === undefined ? file : realpathSync(file);
  const path = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
  // The owner's bits stay as they are; group and others keep only what every input grants them.
  const shared = readFrom.reduce((bits, f) => bits & (statOf(f)?.mode ?? 0o777), 0o777) | ~0o077;
  const mode = (old === undefined ? 0o666 : old.mode & 0o7777) & shared;
  return {
    path,
    // Given when the temporary file is made, so the content is never readable more widely meanwhile.
    mode,
    commit() {
      if (old !== undefined) chmodSync(path, mode);
      renameSync(path, target);
    },
    abandon: () => rmSync(path, { force: true }),
  };
}

/** Writes `text` to `file` through `replacing` (made from the files `readFrom`): all of it, or (throwing) none of it. */
export function writeOutput(file: string, text: string, readFrom: readonly string[] = []): void {
  const r = replacing(file, readFrom);
  try {
    writeFileSync(r.path, text, { mode: r.mode });
    r.commit();
  } catch (e) {
    r.abandon();
    throw e;
  }
}

/**
 * Text from a file or a model as a terminal should show it: control characters other than
 * newline and tab written out (`\x1B`), and the bidi controls (`\u202E`). Printed raw, ESC and
 * the C1 controls start sequences that recolour or hide text, move the cursor, retitle the
 * window or set the clipboard; a lone carriage return writes over the line before it; a bidi
 * override, embedding or isolate shows a line, where the terminal applies them, in another
 * order than it holds.
 */
export function forTerminal(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x08\x0B-\x1F\x7F-\x9F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, (c) => {
      const code = c.charCodeAt(0);
      return code <= 0xff ? `\\x${code.toString(16).toUpperCase().padStart(2, "0")}` : `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
    });
}

/**
 * Text a program wrote (println, an error's message), for `stream`: forTerminal at a terminal;
 * to a file or pipe as it is, since there the program's characters are its output.
 */
export function forStream(stream: object, text: string): string {
  return (stream as { isTTY?: boolean }).isTTY === true ? forTerminal(text) : text;
}
