// Placeholder: `ptc trace show` is being written.
export async function runTraceCommand(args: string[]): Promise<number> {
  process.stderr.write(`ptc trace: not available yet (${args.join(" ")})\n`);
  return 2;
}
