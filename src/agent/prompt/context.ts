// Context keys → prompt lines: `data/products ; vector[7], sample: [{:name "Laptop" ...} ...]`.
// Keys starting with `_` are readable by programs but never shown to the LLM.
import { type ContextReader, contextValue, isHiddenKey, isSymbolName } from "../../lisp/index.js";
import { describeValue, recordKeys, typeLabel, type RecordOptions } from "../../trace/record.js";

export { isHiddenKey };

/**
 * One line per visible context key, in the context's key order, each read by `reader` (the run's
 * limits and clock). Throws a LispError for data that cannot cross (cyclic, too deep, too big, too slow).
 */
export function contextLines(context: Readonly<Record<string, unknown>>, opts: Pick<RecordOptions, "sampleItems" | "sampleChars">, reader: ContextReader): string[] {
  const lines: string[] = [];
  for (const key of Object.keys(context)) {
    if (isHiddenKey(key)) continue;
    if (!isSymbolName(key)) {
      lines.push(`; context key ${JSON.stringify(key)} cannot be read: it is not a valid name after data/`);
      continue;
    }
    const value = reader.value(key, contextValue(context, key));
    const summary = describeValue(value, opts);
    lines.push(`data/${key} ; ${typeLabel(summary)}, sample: ${summary.sample}${recordKeys(value, summary.sample)}`);
  }
  return lines;
}
