// Input files a command reads, as text. Decoded strictly: a file saved in another encoding
// (Latin-1, Windows-1252) would otherwise reach the program, the view or the report with its
// characters silently replaced by U+FFFD. A leading byte-order mark, which some editors write
// and JSON.parse refuses as a character no one can see, is dropped.
import { constants } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { TextDecoder } from "node:util";

/** Why an input's bytes cannot be read as text: too many of them, or not UTF-8 (the first bad byte and where it is). */
export class TextInputError extends Error {
  override readonly name = "TextInputError";
}

/** The most bytes an input may have, what it is too large for (in the error's words), and where the bound comes from. */
export interface ReadLimit {
  bytes: number;
  what: string;
  why?: string;
}

const tooLarge = (name: string, max: number, limit: ReadLimit): TextInputError => new TextInputError(`${name} is too large to ${limit.what} (more than ${max} bytes${limit.why === undefined ? "" : `; ${limit.why}`})`);

const AS_TEXT: ReadLimit = { bytes: constants.MAX_STRING_LENGTH, what: "read as text" };

/**
 * The text of the file `path` (named `name` in errors), as decodeText reads it. Read at most one
 * byte past `limit` (by default the most a string holds): a device or FIFO without an end
 * (/dev/zero, a stream that never closes) would otherwise be read into memory until the process
 * died, and it has no size to check first. Errors opening or reading the file are thrown as they
 * are, for the command to report.
 */
export function readText(path: string, name: string, limit: ReadLimit = AS_TEXT): string {
  const max = Math.min(limit.bytes, constants.MAX_STRING_LENGTH);
  // An unset variable (--replay "$REC") names nothing: said as such, not as "cannot read  (ENOENT)" with a blank for the name.
  if (path === "") throw new TextInputError("the file name is empty");
  const fd = openSync(path, "r");
  try {
    // A regular file's size is known: one buffer. Anything else grows as it is read.
    const stat = fstatSync(fd);
    // Refused before reading any of it: a regular file's size is all there is to check.
    if (stat.isFile() && stat.size > max) throw tooLarge(name, max, limit);
    let buffer = Buffer.allocUnsafe(Math.min(max + 1, stat.isFile() && stat.size > 0 ? stat.size + 1 : 1 << 16));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > max) throw tooLarge(name, max, limit);
        const grown = Buffer.allocUnsafe(Math.min(max + 1, length * 2));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return decodeText(buffer.subarray(0, length), name);
  } finally {
    closeSync(fd);
  }
}

/** The text of a whole stream (standard input), as decodeText reads it; refused once past `limit` (by default the most a string holds: < /dev/zero has no end). */
export async function readStreamText(stream: AsyncIterable<Buffer | string>, name: string, limit: ReadLimit = AS_TEXT): Promise<string> {
  const max = Math.min(limit.bytes, constants.MAX_STRING_LENGTH);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    chunks.push(bytes);
    length += bytes.length;
    if (length > max) throw tooLarge(name, max, limit);
  }
  return decodeText(Buffer.concat(chunks), name);
}

const decoder = (ignoreBOM = false): TextDecoder => new TextDecoder("utf-8", { fatal: true, ignoreBOM });

/** The text of `bytes` (from the input `name`, as errors call it), or a TextInputError saying why not (where it stops being UTF-8). */
export function decodeText(bytes: Uint8Array, name: string): string {
  // Past the longest string there is, decoding fails for its size, not its bytes; and searching
  // the bytes for a bad one decodes hundreds of megabytes some thirty times over.
  if (bytes.length > constants.MAX_STRING_LENGTH) throw new TextInputError(`${name} is too large to read as text (${bytes.length} bytes; the most is ${constants.MAX_STRING_LENGTH})`);
  try {
    return decoder().decode(bytes);
  } catch {
    throw new TextInputError(`${name} is not UTF-8 text: ${whereInvalid(bytes)} (save it as UTF-8)`);
  }
}

const decodes = (bytes: Uint8Array, stream: boolean): boolean => {
  try {
    decoder().decode(bytes, { stream });
    return true;
  } catch {
    return false;
  }
};

/**
 * The lines of a stream as they come (split at a newline, a carriage return before it dropped),
 * each decoded strictly: a TextInputError names the first bad byte by its line and column in the
 * whole input, as decodeText does. For input read line by line (ptc repl), which decodeText
 * would make wait for its end. A line past `limit` (by default the most a string holds) is refused
 * as soon as it is: one without an end (< /dev/zero) would otherwise be kept until memory ran out.
 */
export async function* textLines(stream: AsyncIterable<Buffer | string>, name: string, limit: ReadLimit = AS_TEXT): AsyncGenerator<string> {
  const max = Math.min(limit.bytes, constants.MAX_STRING_LENGTH);
  const tooLong = (): TextInputError => new TextInputError(`${name} line ${line} is too long to ${limit.what} (more than ${max} bytes${limit.why === undefined ? "" : `; ${limit.why}`})`);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 1;
  const decode = (bytes: Uint8Array): string => {
    try {
      // A BOM opens the input only; inside it U+FEFF is a character like any other.
      const text = decoder(line > 1).decode(bytes);
      line++;
      return text.endsWith("\r") ? text.slice(0, -1) : text;
    } catch {
      throw new TextInputError(`${name} is not UTF-8 text: ${whereInvalid(bytes, line)} (save it as UTF-8)`);
    }
  };
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, from)) {
      if (pendingBytes + nl - from > max) throw tooLong();
      pending.push(bytes.subarray(from, nl));
      yield decode(Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
      from = nl + 1;
    }
    if (from < bytes.length) {
      pending.push(bytes.subarray(from));
      pendingBytes += bytes.length - from;
      if (pendingBytes > max) throw tooLong();
    }
  }
  if (pending.length > 0) yield decode(Buffer.concat(pending));
}

/** The first byte that is not UTF-8, as "byte 0xFC at line L, column C" (`bytes` starting at line `firstLine`). */
export function whereInvalid(bytes: Uint8Array, firstLine = 1): string {
  if (decodes(bytes, true)) return "it ends inside a character";
  // Bytes [0, lo) stream as the start of a text, [0, hi) do not: narrowed to hi = lo + 1.
  let lo = 0;
  let hi = bytes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (decodes(bytes.subarray(0, mid), true)) lo = mid;
    else hi = mid;
  }
  // Byte lo cannot follow. It is the bad one unless [0, lo) ends inside a character (Latin-1's
  // é, 0xE9, opens a three-byte one): then that character's first byte is.
  let bad = lo;
  if (!decodes(bytes.subarray(0, lo), false)) {
    bad = lo - 1;
    while ((bytes[bad] & 0xc0) === 0x80) bad--;
  }
  const lineStart = bytes.lastIndexOf(0x0a, bad) + 1;
  let line = firstLine;
  for (let i = 0; i < lineStart; i++) if (bytes[i] === 0x0a) line++;
  // Columns count characters, as the reader's do: the line's text before the bad byte.
  const column = decoder().decode(bytes.subarray(lineStart, bad)).length + 1;
  return `byte 0x${bytes[bad].toString(16).toUpperCase().padStart(2, "0")} at line ${line}, column ${column}`;
}
