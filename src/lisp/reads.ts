// The names a program reads from memory: the free symbols the analyzer resolves as globals
// (not locals, not qualified names), found without running it. The compressed history view
// asks it which earlier definitions a later program used.
import { Analyzer } from "./analyzer/analyze.js";
import type { Node } from "./analyzer/nodes.js";
import { children } from "./compile-async.js";
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
  const got = prepared(source);
  if (got === null) return [];
  const { forms, globals, analyzer } = got;
  try {
    for (const form of forms) analyzer.analyzeTop(form);
    return [...globals.asked];
  } catch {
    const names = new Set<string>();
    symbols(forms, names);
    return [...names];
  }
}

/** The source read, and an analyzer that takes every name to exist and records the free ones; null when it does not read. */
function prepared(source: string): { forms: Form[]; globals: FreeNames; analyzer: Analyzer } | null {
  let forms: Form[];
  try {
    forms = read(source, defaultLimits.maxNestingDepth, defaultLimits.maxSourceForms);
  } catch {
    return null;
  }
  const globals = new FreeNames();
  return { forms, globals, analyzer: new Analyzer({ source, globals, tools: ANY, data: ANY, maxRegexPatternLength: defaultLimits.maxRegexPatternLength, maxNestingDepth: defaultLimits.maxNestingDepth }) };
}

function symbols(forms: readonly Form[], into: Set<string>): void {
  for (const f of forms) {
    if (f.type === "symbol") into.add(f.name);
    else if ("items" in f) symbols(f.items, into);
  }
}

/**
 * The names a definition's source reads while it is being made: what the value it defines
 * depends on. A function it makes as its value (the definition's value itself, an item of a
 * collection literal, what a let or do ends with) reads its names when it is called, whatever
 * they hold then, and is not looked into; any other function may be called while the value is
 * made (passed to mapv, partial, comp), and its reads count. A source the analyzer rejects
 * gives every symbol it names (a superset).
 */
export function definitionReads(source: string): string[] {
  const got = prepared(source);
  if (got === null) return [];
  const { forms, analyzer } = got;
  const names = new Set<string>();
  // `value`: the node's value is what is defined (or held by it), not something called now.
  const walk = (node: Node, value: boolean): void => {
    switch (node.op) {
      case "fn":
        if (value) return;
        break;
      case "global":
        names.add(node.name);
        return;
      case "def":
        return walk(node.init, true);
      case "vector":
      case "set":
      case "map":
        for (const c of node.items) walk(c, value);
        return;
      case "let":
        for (const b of node.binds) walk(b.init, false);
        return walk(node.body, value);
      case "do":
        node.body.forEach((c, i) => walk(c, value && i === node.body.length - 1));
        return;
    }
    for (const c of children(node)) walk(c, false);
  };
  try {
    for (const form of forms) walk(analyzer.analyzeTop(form).node, false);
  } catch {
    symbols(forms, names);
  }
  return [...names];
}
