// Context keys → prompt lines: `data/products ; vector[7], sample: [{:name "Laptop" ...} ...]`.
// Keys starting with `_` are readable by programs but never shown to the LLM.
import { type ContextReader, contextValue, isHiddenKey, isSymbolName, shownName, showStandIns } from "../../lisp/index.js";
import { describeShown, recordKeys, typeLabel, type RecordOptions } from "../../trace/record.js";

export { isHiddenKey };

/** A key as messages quote it: whole, or when long by its start and its length. */
export function quotedKey(key: string): string {
  return shownName(key, JSON.stringify);
}

/** Whether `data/<key>` is longer than a program may be: no program can then read the key. */
export function tooLongToName(key: string, maxSourceChars: number): boolean {
  return key.length + "data/".length > maxSourceChars;
}

/**
 * One line per visible context key, in the context's key order, each read by `reader` (the run's
 * limits and clock). Throws a LispError for data that cannot cross (cyclic, too deep, too big, too slow).
 * Record keys the `mission` names are listed first where not all fit (recordKeys).
 */
export function contextLines(context: Readonly<Record<string, unknown>>, opts: Pick<RecordOptions, "sampleItems" | "sampleChars">, reader: ContextReader, mission?: string): string[] {
  const lines: string[] = [];
  // data/key must fit in a program's source, or no program can read the key.
  const { maxSourceChars } = reader.limits;
  for (const key of Object.keys(context)) {
    if (isHiddenKey(key)) continue;
    if (tooLongToName(key, maxSourceChars)) {
      lines.push(`; context key ${quotedKey(key)} cannot be read: data/ and the key are longer than a program may be (${maxSourceChars} characters)`);
      continue;
    }
    if (!isSymbolName(key)) {
      lines.push(`; context key ${quotedKey(key)} cannot be read: it is not a valid name after data/`);
      continue;
    }
    const x = contextValue(context, key);
    const value = reader.value(key, x);
    const shown = reader.prompted(key, x);
    const summary = describeShown(value, shown, opts);
    lines.push(`data/${key} ; ${typeLabel(summary)}, sample: ${summary.sample}${showStandIns(recordKeys(shown, summary.sample, mission))}`);
  }
  return lines;
}
