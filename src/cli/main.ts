#!/usr/bin/env node
// The `ptc` bin. The exit code is set on the process rather than calling process.exit(), so
// output still being written to a pipe is not cut off.
import { runCli } from "./commands.js";
import { processIo } from "./eval.js";

// A reader that stops early (ptc ... | head -1) closes the pipe: the rest of the output has
// nowhere to go, which is no failure of the command (the command still finishes, so files it
// writes are complete). Any other failed write (a full disk) loses output the user asked for:
// say so and stop with exit 1.
for (const [stream, name] of [[process.stdout, "standard output"], [process.stderr, "standard error"]] as const) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") return;
    process.stderr.write(`ptc: cannot write to ${name} (${e.code ?? e.message}): the output is lost\n`);
    process.exit(1);
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
