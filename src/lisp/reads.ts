// The names a program reads from memory: the free symbols the analyzer resolves as globals
// (not locals, not qualified names), found without running it. The compressed history view
// asks it which earlier definitions a later program used.
import { Analyzer } from "./analyzer/analyze.js";
import type { Form } from "./forms.js";
import { defaultLimits } from "./limits.js";
import { read } from "./reader.js";

/**
 * A globals set that holds every name and records the ones asked for: the analyzer asks it
 * only for a symbol that is neither a local nor qualified, before it looks for a builtin, so
 * what it records is every free name (a builtin too; a caller keeps the names it defined).
 */
class FreeNames extends Set<string> {
  readonly asked = new Set<string>();
  override has(name: string): boolean {
    this.asked.add(name);
    return true;
  }
}

/** Every host name is taken to exist: a reference to one is not a read from memory. */
const ANY = { has: (): boolean => true, keys: (): string[] => [], names: (): string[] => [] };

/**
 * The free names of `source`, in order of first use. A program the analyzer rejects gives
 * every symbol it names (a superset); one the reader rejects gives none.
 */
export function freeNames(source: string): string[] {
  let forms: Form[];
  try {
    forms = read(source, defaultLimits.maxNestingDepth, defaultLimits.maxSourceForms);
  } catch {
    return [];
  }
  const globals = new FreeNames();
  const analyzer = new Analyzer({ source, globals, tools: ANY, data: ANY, maxRegexPatternLength: defaultLimits.maxRegexPatternLength });
  try {
    for (const form of forms) analyzer.analyzeTop(form);
    return [...globals.asked];
  } catch {
    const names = new Set<string>();
    symbols(forms, names);
    return [...names];
  }
}

function symbols(forms: readonly Form[], into: Set<string>): void {
  for (const f of forms) {
    if (f.type === "symbol") into.add(f.name);
    else if ("items" in f) symbols(f.items, into);
  }
}
