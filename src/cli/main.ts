#!/usr/bin/env node
// The `ptc` bin. The exit code is set on the process rather than calling process.exit(), so
// output still being written to a pipe is not cut off.
import { runCli } from "./commands.js";
import { processIo } from "./eval.js";

// A reader that stops early (ptc ... | head -1) closes the pipe: the rest of the output has
// nowhere to go, which is no failure of the command (the command still finishes, so files it
// writes are complete).
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
}

runCli(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`ptc: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
