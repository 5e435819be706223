// What a CLI command writes to the process's stdout and stderr while it runs, and its exit code:
// for commands that write to the process streams directly rather than through an Io.
import { vi } from "vitest";

export interface Captured {
  code: number;
  out: string;
  err: string;
}

export async function capture(run: () => Promise<number>): Promise<Captured> {
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((err += String(chunk)), true));
  try {
    const code = await run();
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}
