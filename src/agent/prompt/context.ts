// Context keys → prompt lines: `data/products ; vector[7], sample: [{:name "Laptop" ...} ...]`.
// Keys starting with `_` are readable by programs but never shown to the LLM.
import { isHiddenKey, isSymbolName, toLisp } from "../../lisp/index.js";
import { describeValue, recordKeys, typeLabel, type RecordOptions } from "../../trace/record.js";

export { isHiddenKey };

/** One line per visible context key, in the context's key order. Throws a LispError for data that cannot cross (cyclic, too deep). */
export function contextLines(context: Readonly<Record<string, unknown>>, opts: Pick<RecordOptions, "sampleItems" | "sampleChars">, maxDepth: number): string[] {
  const lines: string[] = [];
  for (const key of Object.keys(context)) {
    if (isHiddenKey(key)) continue;
    if (!isSymbolName(key)) {
      lines.push(`; context key ${JSON.stringify(key)} cannot be read: it is not a valid name after data/`);
      continue;
    }
    const value = toLisp(context[key], maxDepth, 0, `data/${key}`);
    const summary = describeValue(value, opts);
    lines.push(`data/${key} ; ${typeLabel(summary)}, sample: ${summary.sample}${recordKeys(value, summary.sample)}`);
  }
  return lines;
}
