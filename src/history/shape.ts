// The shape of a value, as summaries describe data whose sample or output is not shown:
// scalars and short strings as themselves, collections as type and size with the shape of
// their elements, maps with their keys and the types of their values. Element shapes come
// from all elements (up to a bound), not the first: `:score float|integer` when scores are
// mixed, `:note string|nil` when some records lack it.
import { isMap, isSet, Keyword, keywordText, printSample, quoteString, standInType, typeName, type Value, Vec } from "../lisp/index.js";

/** Keys of a map shown in a shape; more are summarized as `...`. */
const SHAPE_KEYS = 8;
/** Strings up to this length are shown whole. */
export const SHAPE_STRING = 40;
/** Elements read to merge a collection's element shape. */
const SCAN = 1000;
/** Distinct element shapes listed before the rest are elided. */
const VARIANTS = 3;

/** A scalar or a string short enough to show as itself: a line shows its value, never just its type. */
export function isShownWhole(v: Value): boolean {
  if (typeof v === "string") return v.length <= SHAPE_STRING;
  return v === null || typeof v === "number" || typeof v === "boolean" || typeName(v) === "float" || v instanceof Keyword;
}

/**
 * The shape of a value. At depth 0 scalars are values and maps their key list; deeper,
 * scalars are type names and collections below depth 2 only their type.
 */
export function valueShape(v: Value, depth = 0): string {
  // A hidden part (read back from a recorded value's EDN): its stand-in, deeper the type it names.
  const hidden = typeof v === "string" ? standInType(v) : undefined;
  if (hidden !== undefined) return depth === 0 ? quoteString(v as string) : hidden;
  if (depth === 0 && isShownWhole(v)) return scalarText(v);
  if (depth === 0 && typeof v === "string") return `string[${v.length}]`;
  if (v instanceof Vec || isSet(v)) {
    // Sizes only at the top: elements of different sizes share one shape.
    const head = depth === 0 ? `${typeName(v)}[${v.size}]` : typeName(v);
    if (v.size === 0 || depth >= 2) return head;
    return `${head} of ${elementShape(v, depth + 1)}`;
  }
  if (isMap(v)) return depth >= 2 ? "map" : keyShape(v, depth);
  return typeName(v);
}

/**
 * A map's keys and what they hold. A record (keyword keys) lists each key with the shape of
 * its value: `{:a integer, :b string, ... 4 more}`. A dictionary (other keys) lists its keys
 * once and the merged shape of its values: `{"north" "south" "east"} -> float`.
 */
export function keyShape(m: Value, depth: number): string {
  if (!isMap(m)) return "";
  if (m.keySeq().every((k) => k instanceof Keyword)) {
    const parts = ordered(m.entrySeq().map(([k, x]): [string, Value] => [keyText(k), x]).toArray()).slice(0, SHAPE_KEYS);
    return keyList(parts.map(([k, x]) => `${k} ${valueShape(x, depth + 1)}`), m.size, ", ");
  }
  const keys = ordered(m.keySeq().map((k): [string, null] => [keyText(k), null]).toArray()).slice(0, SHAPE_KEYS);
  return `${keyList(keys.map(([k]) => k), m.size, " ")} -> ${elementShape(m.valueSeq(), depth + 1)}`;
}

/**
 * `, keys: "north" "south" "east" "west"`: the keys a dictionary's shape names (a map keyed by other
 * than keywords: see keyShape), after a sample of it that shows fewer. A record's keys are listed
 * after a sample (recordKeys), a dictionary's were not, as its shape names them; but a line shows a
 * sample in place of the shape (a value a later program read, a turn that printed nothing), so
 * `plan-stats = map[4], sample: {"Starter" {...} "Enterprise" {...} "Growth" {...}}` named no "Pro",
 * which the same line unread, as a shape, did. Empty when the sample shows them (whole).
 */
export function dictionaryKeys(v: Value, sample: string): string {
  if (!isMap(v) || v.keySeq().every((k) => k instanceof Keyword)) return "";
  const keys = ordered(v.keySeq().map((k): [string, Value] => [keyText(k), k]).toArray()).slice(0, SHAPE_KEYS);
  // A key past SHAPE_STRING characters is listed cut, but a sample may show it whole: looked for
  // as cut, one shown whole was never found, and a sample of its every key listed them again.
  if (keys.every(([text, k]) => sample.includes((typeof k === "string" ? quoteString(k) : text) + " "))) return "";
  return `, keys: ${keyList(keys.map(([text]) => text), v.size, " ").slice(1, -1)}`;
}

/** The merged shape of a collection's elements: records by the union of their keys, anything else by its distinct shapes. */
export function elementShape(items: Iterable<Value>, depth: number): string {
  const seen: Value[] = [];
  for (const x of items) {
    seen.push(x);
    if (seen.length >= SCAN) break;
  }
  if (seen.length > 0 && seen.every(isMap)) return recordShape(seen, depth);
  return variants(seen.map((x) => valueShape(x, depth)));
}

function recordShape(records: readonly Value[], depth: number): string {
  const keys = new Map<string, { shapes: string[] }>();
  for (const r of records) {
    if (!isMap(r)) continue;
    for (const [k, x] of r.entrySeq()) {
      const text = keyText(k);
      let entry = keys.get(text);
      if (entry === undefined) keys.set(text, (entry = { shapes: [] }));
      entry.shapes.push(valueShape(x, depth + 1));
    }
  }
  const parts: string[] = [];
  for (const [text, { shapes }] of ordered([...keys]).slice(0, SHAPE_KEYS)) {
    // A key some records lack reads as nil in those.
    for (let i = shapes.length; i < records.length; i++) shapes.push("nil");
    parts.push(`${text} ${variants(shapes)}`);
  }
  return keyList(parts, keys.size, ", ");
}

/**
 * Entries in the map's own order when all are shown (small maps keep insertion order), else
 * sorted by key: a large map's order is its hashes', so the keys shown are the first by name.
 */
function ordered<T>(entries: Array<[string, T]>): Array<[string, T]> {
  return entries.length > SHAPE_KEYS ? entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) : entries;
}

/** Distinct shapes, most frequent first, joined by `|`. */
function variants(shapes: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const s of shapes) counts.set(s, (counts.get(s) ?? 0) + 1);
  const ordered = [...counts].sort((a, b) => b[1] - a[1]).map(([s]) => s);
  return ordered.length > VARIANTS ? ordered.slice(0, VARIANTS).join("|") + "|..." : ordered.join("|");
}

function keyText(k: Value): string {
  if (k instanceof Keyword) return keywordText(k.name);
  if (typeof k === "string") return quoteString(k.length > SHAPE_STRING && standInType(k) === undefined ? k.slice(0, SHAPE_STRING) + "..." : k);
  return isShownWhole(k) ? scalarText(k) : typeName(k);
}

function scalarText(v: Value): string {
  return printSample(v, { maxItems: 1, maxChars: SHAPE_STRING + 2, maxDepth: 1, note: false }).text;
}

function keyList(parts: string[], total: number, separator: string): string {
  if (total > SHAPE_KEYS) parts.push(`... ${total - SHAPE_KEYS} more`);
  return `{${parts.join(separator)}}`;
}
