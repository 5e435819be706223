// Placeholder: `ptc demo` is being written.
export async function runDemoCommand(args: string[]): Promise<number> {
  process.stderr.write(`ptc demo: not available yet (${args.join(" ")})\n`);
  return 2;
}
