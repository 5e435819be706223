// `ptc reference --builtins`: every builtin from the registry with its signature, its
// one-line description and its examples (each run by test/core/registry.test.ts), by area.
import { allBuiltins } from "../lisp/index.js";

/** The name a program calls a builtin by: qualified when it is only reachable so. */
const callName = (b: { name: string; ns?: readonly string[]; unqualified?: boolean }): string => (b.unqualified === false && b.ns?.[0] ? `${b.ns[0]}/${b.name}` : b.name);

export function builtinsReference(): string {
  const byArea = new Map<string, string[]>();
  for (const b of allBuiltins()) {
    if (b.name.startsWith("%")) continue;
    const lines = [`${callName(b)} ${b.params} - ${b.doc.split("\n")[0]}`];
    for (const [source, result] of b.examples ?? []) lines.push(`  ${source} ;=> ${result}`);
    byArea.set(b.area, [...(byArea.get(b.area) ?? []), lines.join("\n")]);
  }
  return [...byArea].map(([area, entries]) => `## ${area}\n\n${entries.join("\n")}`).join("\n\n");
}
