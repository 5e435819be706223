// Output a command makes: files, checked before the work that fills them, so a run is not
// spent to fail at its last step; and text from files and models, made safe for a terminal.
import { statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";

/** Why `file` cannot be written (its folder is missing, or it is a folder), or undefined. */
export function unwritable(file: string): string | undefined {
  const dir = dirname(resolve(file));
  const folder = statSync(dir, { throwIfNoEntry: false });
  if (folder === undefined) return `the folder ${dir} does not exist`;
  if (!folder.isDirectory()) return `${dir} is not a folder`;
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) return "it is a folder";
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

/**
 * Text from a file or a model as a terminal should show it: control characters other than
 * newline and tab written out (`\x1B`). Printed raw, ESC and the C1 controls start sequences
 * that recolour or hide text, move the cursor, retitle the window or set the clipboard; a lone
 * carriage return writes over the line before it.
 */
export function forTerminal(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\r\n/g, "\n").replace(/[\x00-\x08\x0B-\x1F\x7F-\x9F]/g, (c) => `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}
