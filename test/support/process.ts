// A child process's outcome, for tests that run the built bin: its exit code and all it wrote.
import type { ChildProcessWithoutNullStreams } from "node:child_process";

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Waits for `child` to close, killing it after `limitMs` (a hang guard only: a loaded machine can take seconds to start a process). */
export function outcome(child: ChildProcessWithoutNullStreams, limitMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
