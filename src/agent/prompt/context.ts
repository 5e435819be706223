// Context keys → prompt lines: `data/products ; vector[7], sample: [{:name "Laptop" ...} ...]`.
// Keys starting with `_` are readable by programs but never shown to the LLM.
import { isHiddenKey, isMap, isSymbolName, prStr, toLisp, type Value, Vec } from "../../lisp/index.js";
import { describeValue, typeLabel, type RecordOptions } from "../../trace/record.js";

export { isHiddenKey };

/** Records looked at, and keys listed at most, for a collection's record keys. */
const KEY_RECORDS = 500;
const MAX_KEYS = 40;

/**
 * Every key of a vector of records (maps), in first-seen order, when the sample does not show
 * them all: a sample cut at its budget hides the later keys, which the mission may name
 * (`:revenue` for "Sum revenue").
 */
function recordKeys(v: Value, sample: string): string {
  if (!(v instanceof Vec) || v.size === 0) return "";
  const keys = new Map<string, true>();
  let looked = 0;
  for (const r of v as Vec<Value>) {
    if (++looked > KEY_RECORDS) break;
    if (!isMap(r)) return "";
    for (const k of r.keys()) if (keys.size < MAX_KEYS) keys.set(prStr(k), true);
  }
  const all = [...keys.keys()];
  // Listed only when the sample leaves some out.
  return all.every((k) => sample.includes(k + " ")) ? "" : `, keys: ${all.join(" ")}`;
}

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
