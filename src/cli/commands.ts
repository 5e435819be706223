// The `ptc` command's dispatch: each subcommand parses its own options and returns an exit
// code. Kept apart from the bin (main.ts) so tests run commands in-process instead of spawning.
import { parseArgs } from "node:util";
import { runCompareCommand } from "./compare.js";
import { version } from "./version.js";
import { runDemoCommand } from "./demo.js";
import { runProxyCommand } from "./proxy.js";
import { runEvalCommand, usageFailure, type Io } from "./eval.js";
import { runReplCommand } from "./repl.js";
import { runTraceCommand } from "./trace.js";
import { runViewCommand } from "./view.js";
import { languageReference } from "../agent/prompt/reference.js";
import { builtinsReference } from "./reference.js";
import { forTerminal } from "./output.js";

const USAGE = `Usage: ptc <command> [options]

Commands:
  eval     run a PTC-Lisp program: ptc eval -e '(+ 1 2)', ptc eval FILE, ptc eval -
  repl     interactive PTC-Lisp session
  demo     run the offline scripted agent demo
  trace    inspect a recorded agent run (ptc trace show FILE)
  compare  compaction strategies side by side on transcripts (JSONL)
  view     web viewer for recorded runs and compare reports (ptc view FILE...)
  proxy    OpenAI-compatible proxy that compacts any app's conversations
  reference  print the language reference (generated from the builtin registry)

Options:
  -h, --help       show this help (ptc <command> --help for a command's options)
  -v, --version    print the version

Exit codes: 0 success, 1 the program or run failed, 2 a usage or input error.
`;

const REFERENCE_USAGE = `usage: ptc reference [--builtins]

Prints the PTC-Lisp language reference generated from the builtin registry: the same text
the agent's system prompt uses (functions that work as in Clojure are listed by name).

  --builtins   every builtin instead: its signature, a one-line description and runnable
               examples with their results, by area
`;

const COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  eval: runEvalCommand,
  repl: runReplCommand,
  demo: runDemoCommand,
  compare: runCompareCommand,
  trace: runTraceCommand,
  view: runViewCommand,
  proxy: (args, io) => runProxyCommand(args, io),
  reference: async (args, io) => {
    if (args.length === 1 && (args[0] === "--help" || args[0] === "-h")) {
      io.stdout.write(REFERENCE_USAGE);
      return 0;
    }
    if (args.length === 1 && args[0] === "--builtins") {
      io.stdout.write(builtinsReference() + "\n");
      return 0;
    }
    if (args.length > 0) {
      io.stderr.write(`${forTerminal(`ptc reference: takes no arguments but --builtins, got ${args.join(" ")}`)}\n${REFERENCE_USAGE}`);
      return 2;
    }
    io.stdout.write(languageReference() + "\n");
    return 0;
  },
};

/** Runs `ptc ARGV...` and returns the exit code. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const [first, ...rest] = argv;
  if (first !== undefined && Object.hasOwn(COMMANDS, first)) return COMMANDS[first](rest, io);
  // `ptc help CMD` and `ptc --help CMD` are the same request as `ptc CMD --help`.
  if (first === "help" || ((first === "--help" || first === "-h") && rest.length > 0 && !rest[0].startsWith("-"))) {
    if (rest.length === 0) {
      io.stdout.write(USAGE);
      return 0;
    }
    const [cmd] = rest;
    if (rest.length === 1 && Object.hasOwn(COMMANDS, cmd)) return COMMANDS[cmd](["--help"], io);
    io.stderr.write(forTerminal(`ptc help: unknown command '${rest.join(" ")}'; the commands are ${Object.keys(COMMANDS).join(", ")}\n`));
    return 2;
  }
  if (first === undefined) {
    io.stderr.write(USAGE);
    return 2;
  }
  if (!first.startsWith("-")) {
    io.stderr.write(forTerminal(`ptc: unknown command '${first}'; the commands are ${Object.keys(COMMANDS).join(", ")}\nRun 'ptc --help' for usage.\n`));
    return 2;
  }
  try {
    const { values } = parseArgs({ args: argv, options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "v" } } });
    if (values.version) io.stdout.write(`ptc-lisp ${version()}\n`);
    else io.stdout.write(USAGE);
    return 0;
  } catch (e) {
    return usageFailure("", e, io);
  }
}

