// What a CLI command writes to the Io it is given, and its exit code.
import { Readable } from "node:stream";
import type { Io } from "../../src/cli/eval.js";

export interface Captured {
  code: number;
  out: string;
  err: string;
}

export async function capture(run: (io: Io) => Promise<number>): Promise<Captured> {
  let out = "";
  let err = "";
  const io: Io = { stdin: Readable.from([]), stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } };
  const code = await run(io);
  return { code, out, err };
}
