// Output files a command writes: checked before the work that fills them, so a run is not
// spent to fail at its last step.
import { statSync } from "node:fs";
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
  return files.some((f) => resolve(f) === target);
}
