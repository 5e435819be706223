// Evaluation results → turn records: what a turn printed, called and defined, and the
// memory after it, with every value rendered as type, size, bounded sample and (when
// small enough) full EDN. Values themselves stay in the interpreter's Memory.
import { Budget, eachHostPart, type EvalResult, Fn, holdsStandInIn, isMap, Keyword, isSet, keywordText, type Limits, Marks, type Memory, type MemoryEntry, printSample, prStr, showStandIns, type ToolCallRecord, toHost, typeName, type Value, Vec } from "../lisp/index.js";
import type { DefinitionTrace, ToolCallTrace, Turn } from "./trace.js";

export interface RecordOptions {
  /** Items per collection in a sample. */
  sampleItems: number;
  /** Characters of a sample. */
  sampleChars: number;
  /** Largest EDN kept whole in a definition (`edn`) or a turn's value; larger values are cut. */
  ednBudget: number;
}

export const defaultRecordOptions: Readonly<RecordOptions> = Object.freeze({ sampleItems: 3, sampleChars: 80, ednBudget: 4096 });

export interface ValueSummary {
  type: string;
  size?: number;
  sample: string;
}

/** Element count of a collection, character count of a string. */
export function sizeOf(v: Value): number | undefined {
  if (typeof v === "string") return v.length;
  if (v instanceof Vec || isMap(v) || isSet(v)) return v.size;
  return undefined;
}

/**
 * Type label, size and bounded sample of a value: how prompts and summaries show data. A
 * summary's sample (`forSummary`) has no "(N items ...)" note (the type says the size) and
 * names every record key past the cut.
 */
export function describeValue(v: Value, opts: Pick<RecordOptions, "sampleItems" | "sampleChars">, forSummary = false): ValueSummary {
  const sample = printSample(v, { maxItems: opts.sampleItems, maxChars: opts.sampleChars, note: !forSummary }).text;
  const out: ValueSummary = { type: typeName(v), sample: forSummary ? sample + recordKeys(v, sample) : sample };
  const size = sizeOf(v);
  if (size !== undefined) out.size = size;
  return out;
}

/** describeValue of `shown`, what a prompt shows of `v` (its hidden parts stand-ins), with the stand-ins shown. */
export function describeShown(v: Value, shown: Value, opts: Pick<RecordOptions, "sampleItems" | "sampleChars">, forSummary = false): ValueSummary {
  const d = describeValue(shown, opts, forSummary);
  d.sample = showStandIns(d.sample);
  if (typeof shown === "string" && shown !== v) {
    // Shown whole as a stand-in: neither its size nor its sample.
    d.type = typeName(v);
    delete d.size;
  }
  return d;
}

/**
 * Records looked at for the lists under a path (a collection's own records are all looked at: see
 * keysOf), and keys listed before the rest are counted.
 */
const KEY_RECORDS = 10_000;
const MAX_KEYS = 60;
/** Keys in a path searched for records (`{:data {:orders [...]}}` is two; `[:results * :author]` two). */
const LIST_DEPTH = 6;
/**
 * Lists named apart before their keys are merged, while together they name at most MAX_KEYS keys:
 * a record's own records (an order's customer, shipping address, billing, items, payment) keep
 * their paths; a dictionary of record lists, one list per entry, shares one.
 */
const MAX_LISTS = 12;

/**
 * Every key of the records a value holds, in first-seen order, when the sample does not show
 * them all: a sample cut at its budget hides the later keys, which the mission may name
 * (`:revenue` for "Sum revenue"). Records are the maps of a vector or set (`, keys: :a :b`), of a
 * vector of vectors (pages), the values of a map of records (`, values' keys: ...`), a map keyed by
 * keywords itself (`, keys: ...`), and, by the path that reaches them (`*` for every element or
 * value), the maps of a vector or set under a map's key (`, keys of :rows: ...`, `, keys of [:data
 * :orders]: ...`) and records inside records: a field holding a record or a vector of them
 * (`, keys of :owner: ...`, `, keys of [* :items]: ...`, `, keys of [:results * :author]: ...`).
 * More than MAX_LISTS such lists (a dictionary of record lists) share one list (`, keys in its
 * vectors: ...`), so the text stays bounded however many entries the map has. Past MAX_KEYS the
 * rest are counted (`(+5 more)`), never left out unsaid; the keys `mission` names come first then
 * (a map's keys past 8 come in hash order, and the one the mission asked about was among the rest).
 * Empty otherwise.
 */
export function recordKeys(v: Value, sample: string, mission?: string): string {
  const lists: Array<{ path: string[]; keys: string[] }> = [];
  const budget = { left: KEY_RECORDS };
  let out: string;
  if (v instanceof Vec || isSet(v)) {
    const keys = keysOf(v);
    out = listed("keys", keys, sample, mission);
    const rows: Value[] = [];
    if (keys !== null && records(v, rows)) recordLists(rows, ["*"], lists, budget, true);
  } else {
    if (!isMap(v) || v.size === 0) return "";
    // One record (keyword keys are field names, as its shape takes them): its own keys, also when
    // every field holds a map (`{:user {...} :billing {...}}`). A dictionary's keys are data, which its shape names.
    out = everyKeyword(v.keys()) ? listed("keys", keysOf([v]), sample, mission) : "";
    const values = everyMap(v.values());
    if (values) out += listed("values' keys", keysOf(v.values()), sample, mission);
    // Those values' own keys are listed just above, together.
    recordLists([v], [], lists, budget, !values);
  }
  if (lists.length > MAX_LISTS || lists.reduce((n, l) => n + l.keys.length, 0) > MAX_KEYS) return out + listed("keys in its vectors", [...new Set(lists.flatMap((l) => l.keys))], sample, mission);
  for (const { path, keys } of lists) out += listed(`keys of ${path.length === 1 ? path[0] : `[${path.join(" ")}]`}`, keys, sample, mission);
  return out;
}

/** The maps of a vector of records, or of a vector of pages of them (nils skipped), pushed to `out` while it holds fewer than KEY_RECORDS; false when some element is neither. */
function records(v: Iterable<Value>, out: Value[]): boolean {
  for (const r of v) {
    for (const m of r instanceof Vec ? (r as Vec<Value>) : [r]) {
      // A nil is no record (a JSON null, a lookup that missed), not a sign that these are none.
      if (m === null) continue;
      if (!isMap(m)) return false;
      if (out.length >= KEY_RECORDS) return true;
      out.push(m);
    }
  }
  return true;
}

/**
 * The keys of the records under the keys of `maps` (the maps one path reaches), LIST_DEPTH keys
 * down, by the paths that reach them: vectors of records, and records (keyword-keyed maps) unless
 * `own` is false (the caller lists them together); `budget.left` entries at most are looked at.
 */
function recordLists(maps: readonly Value[], path: readonly string[], out: Array<{ path: string[]; keys: string[] }>, budget: { left: number }, own: boolean): void {
  // What each key holds across the maps, in first-seen order: records from vectors apart from maps.
  const held = new Map<Value, { vectors: Value[]; maps: Value[] }>();
  for (const m of maps) {
    if (!isMap(m)) continue;
    for (const [k, x] of m) {
      if (--budget.left < 0) break;
      const list = x instanceof Vec || isSet(x);
      if (!list && !isMap(x)) continue;
      let h = held.get(k);
      if (h === undefined) held.set(k, (h = { vectors: [], maps: [] }));
      if (list) {
        const rows: Value[] = [];
        if (records(x, rows)) for (const r of rows) if (h.vectors.length < KEY_RECORDS) h.vectors.push(r);
      } else h.maps.push(x);
    }
  }
  const depth = path.reduce((n, p) => (p === "*" ? n : n + 1), 0) + 1;
  for (const [k, { vectors, maps: inner }] of held) {
    const at = [...path, keyText(k)];
    if (vectors.length > 0) {
      out.push({ path: at, keys: keysOf(vectors) ?? [] });
      if (depth < LIST_DEPTH) recordLists(vectors, [...at, "*"], out, budget, true);
    }
    if (inner.length === 0) continue;
    // A record's field holding a record; a dictionary's keys are data, which its shape names.
    const record = inner.filter((m) => isMap(m) && everyKeyword(m.keys()));
    if (own && record.length > 0) out.push({ path: at, keys: keysOf(record) ?? [] });
    if (depth < LIST_DEPTH) recordLists(inner, at, out, budget, true);
  }
}

/** A key as a sample prints it (see keywordText). */
const keyText = (k: Value): string => (k instanceof Keyword ? keywordText(k.name) : prStr(k));

function everyKeyword(keys: Iterable<Value>): boolean {
  for (const k of keys) if (!(k instanceof Keyword)) return false;
  return true;
}

function everyMap(values: Iterable<Value>): boolean {
  for (const x of values) if (!isMap(x)) return false;
  return true;
}

/** The keys of the records among `rows` (maps, or vectors of maps one level down; nils are skipped), or null when some element is neither. */
function keysOf(rows: Iterable<Value>): string[] | null {
  // Keys as values (keywords are interned), printed once each at the end. Every record is looked
  // at: a log's :error first seen at row 12,000 was named nowhere when the first 10,000 were (150,000
  // records: 5 -> 32 ms, once per data key and per definition too big for its EDN).
  const keys = new Set<Value>();
  for (const r of rows) {
    const records = r instanceof Vec ? (r as Vec<Value>) : [r];
    for (const m of records) {
      if (m === null) continue;
      if (!isMap(m)) return null;
      for (const k of m.keys()) keys.add(k);
    }
  }
  return keys.size === 0 ? null : [...new Set([...keys].map(keyText))];
}

function listed(label: string, keys: string[] | null, sample: string, mission: string | undefined): string {
  if (keys === null || keys.every((k) => sample.includes(k + " "))) return "";
  if (keys.length > MAX_KEYS && mission !== undefined) {
    const named = keys.filter((k) => names(mission, k));
    if (named.length > 0) return keyList(label, [...named, ...keys.filter((k) => !named.includes(k))]);
  }
  return keyList(label, keys);
}

function keyList(label: string, keys: readonly string[]): string {
  const more = keys.length > MAX_KEYS ? ` (+${keys.length - MAX_KEYS} more)` : "";
  return `, ${label}: ${keys.slice(0, MAX_KEYS).join(" ")}${more}`;
}

const NAME_CHAR = /[\p{L}\p{N}_\-?!*+<>=/'.]/u;

/** Whether `text` names the key `key` (`:field_120`, `(keyword "First Name")`) as a word: `field_120`, not `field_12` inside it. */
function names(text: string, key: string): boolean {
  const name = key.startsWith(":") ? key.slice(1) : (/^\(keyword "(.*)"\)$/.exec(key)?.[1] ?? key);
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const before = text[at - 1] ?? " ";
    // A sentence's punctuation after a name ends it ("... field_120.").
    const after = text.slice(at + name.length, at + name.length + 2).replace(/^[.?!]/, "")[0] ?? " ";
    if ((before === ":" || !NAME_CHAR.test(before)) && !NAME_CHAR.test(after)) return true;
  }
  return false;
}

/** `vector[5]`, `string[120]`, `integer`: the type label with the size when there is one. */
export function typeLabel(s: Pick<ValueSummary, "type" | "size">): string {
  return s.size === undefined ? s.type : `${s.type}[${s.size}]`;
}

/**
 * The results, as the program had them, of recorded calls whose records show a hidden value as a
 * stand-in (a tool sent back a token it was given): the host's, never part of the trace. A
 * replayed call must answer with what the program had, not with the stand-in's text
 * (`replayAnswer`), and a saved state keeps them as it keeps its memory's values. `whole`: the
 * result was hidden whole (the tool called hideResult, a nested agent's answer computed from
 * hidden arguments), which the replayed call must say again; echoes are found again by the run.
 */
export interface HeldResult {
  result: unknown;
  whole: boolean;
}

const heldResults = new WeakMap<ToolCallTrace, HeldResult>();

/** Keeps the result `call`'s record stands in for (a saved state's `hiddenResults`, read back). */
export function holdResult(call: ToolCallTrace, held: HeldResult): void {
  heldResults.set(call, held);
}

/** The result as the program had it, when the record shows hidden parts of it as stand-ins. */
export function heldResult(call: ToolCallTrace): HeldResult | undefined {
  return heldResults.get(call);
}

/** The arguments a call's program made (what a resumed run matches its calls against): the record's, unless the host ran it with others. */
export function askedArgs(call: ToolCallTrace): unknown {
  return Object.hasOwn(call, "asked") ? call.asked : call.args;
}

/**
 * What a replayed call answers: the result the program had, as recorded (exactly, when its plain
 * JSON loses sets or map keys) or as held, hidden again as its record hid it: whole, through
 * `hideResult`, if it was, else the parts the record shows as stand-ins. The replay's own marks
 * may not find them: the resumed run's hidden context may hold another value (a token renewed
 * since), which the saved parts do not echo. A call that ran with the host's edited arguments
 * says so again (`ranWith`): its new record must not show the program's as what ran.
 */
export function replayAnswer(call: ToolCallTrace, info: { hideResult(parts?: readonly string[]): void; ranWith?(args: Record<string, unknown>): void }): unknown {
  if (Object.hasOwn(call, "asked") && typeof call.args === "object" && call.args !== null) info.ranWith?.(call.args as Record<string, unknown>);
  const held = heldResults.get(call);
  if (held === undefined) return call.exact !== undefined ? call.exact : call.result;
  if (held.whole) info.hideResult();
  else {
    // The texts the record does not show are the ones it hid: within one evaluation a hidden text is a stand-in wherever it stands.
    const shown = textsOf(call.result);
    const parts = [...textsOf(held.result)].filter((t) => !shown.has(t));
    if (parts.length > 0) info.hideResult(parts);
  }
  return held.result;
}

/** The strings, numbers and keys of host data (plain, or with the sets and maps a held result keeps), as text, to the depth hiding goes. */
function textsOf(x: unknown): Set<string> {
  const out = new Set<string>();
  eachHostPart(x, Infinity, (t) => void out.add(String(t)));
  return out;
}

/** Whether a value's plain JSON loses what it was: a set (written as an array), a map key that is not a keyword (written as a string). */
function lossy(v: Value, depth: number): boolean {
  if (depth > MAX_EXACT_DEPTH) return false;
  if (isSet(v)) return true;
  if (isMap(v)) {
    for (const [k, x] of v) if (!(k instanceof Keyword) || lossy(x, depth + 1)) return true;
  } else if (v instanceof Vec) {
    for (const x of v) if (lossy(x, depth + 1)) return true;
  }
  return false;
}
const MAX_EXACT_DEPTH = 256;

/** A value as host data keeping its sets and maps (see ToolCallTrace.exact): crossing back in, it is the value it was. */
function exactOf(v: Value): unknown {
  if (isSet(v)) return new Set([...v].map(exactOf));
  if (isMap(v)) return new Map([...v].map(([k, x]) => [exactOf(k), exactOf(x)]));
  if (v instanceof Vec) return [...v].map(exactOf);
  return toHost(v);
}

/** A tool call as the trace keeps it: plain data, with the name of the definition holding its result. */
function callTrace(c: ToolCallRecord, holder: string | undefined, hiding: { limits: Limits; marks: Marks } | undefined): ToolCallTrace {
  const out = { name: c.name, args: c.args } as ToolCallTrace;
  if (Object.hasOwn(c, "asked")) out.asked = c.asked;
  if (c.result !== undefined) out.result = c.result;
  if (c.result !== undefined && c.value !== undefined && !holdsStandInIn(c.result) && lossy(c.value, 0)) out.exact = exactOf(c.value);
  if (holder !== undefined) out.holder = holder;
  if (c.error !== undefined) out.error = c.error;
  if (c.errorKind !== undefined) out.errorKind = c.errorKind;
  if (c.errorHint !== undefined) out.errorHint = c.errorHint;
  if (c.size !== undefined) out.size = c.size;
  out.durationMs = c.durationMs;
  if (hiding !== undefined && c.value !== undefined && holdsStandInIn(c.result)) {
    try {
      // Marked itself, the result was hidden whole: an echo marks only the parts that echo.
      const result = lossy(c.value, 0) ? exactOf(c.value) : toHost(c.value, hiding.limits.maxNestingDepth, new Budget(hiding.limits));
      heldResults.set(out, { result, whole: hiding.marks.originOf(c.value) !== undefined });
    } catch {
      // The value crossed in within these limits; should it not cross back, the record stands alone, as before.
    }
  }
  return out;
}

/** The turn fields that come from running the program. */
export type EvaluationRecord = Pick<Turn, "prints" | "toolCalls" | "definitions" | "memory" | "error" | "valueHidden"> & { value?: string };

/**
 * Renders definitions for one run. A memory entry's rendering is computed once and shared
 * by every later snapshot that still holds it (entries are immutable and carried by identity).
 */
export class Recorder {
  private readonly cache = new WeakMap<MemoryEntry, DefinitionTrace>();

  constructor(readonly options: Readonly<RecordOptions> = defaultRecordOptions) {}

  definition(name: string, entry: MemoryEntry, marks?: Marks): DefinitionTrace {
    const cached = this.cache.get(entry);
    if (cached !== undefined && cached.name === name) return cached;
    // A value from hidden context is described with its hidden parts as stand-ins.
    let v = entry.value;
    if (entry.hidden !== undefined) {
      let m = marks;
      if (m === undefined) {
        m = new Marks();
        m.restore(v, entry.hidden);
      }
      v = m.hide(v);
    } else if (marks !== undefined) {
      v = marks.hide(v);
    }
    const kind = entry.value instanceof Fn ? "function" : "value";
    const full = kind === "function" ? undefined : printSample(v, { maxItems: Infinity, maxChars: this.options.ednBudget, maxDepth: Infinity });
    // Too big to keep whole: summaries have no EDN to read back and show this sample, so it is theirs.
    const d: DefinitionTrace = { name, kind, ...describeShown(entry.value, v, this.options, full?.truncated === true) };
    if (entry.doc !== undefined) d.doc = entry.doc;
    if (entry.value instanceof Fn) {
      const params = entry.value.paramLists();
      if (params !== undefined) d.params = params;
    } else if (full !== undefined && !full.truncated) {
      d.edn = showStandIns(full.text);
    }
    if (entry.source !== undefined) d.source = entry.source;
    this.cache.set(entry, d);
    return d;
  }

  /** Every name in memory, in definition order. */
  memory(memory: Memory, marks?: Marks): DefinitionTrace[] {
    const out: DefinitionTrace[] = [];
    for (const [name, entry] of memory) out.push(this.definition(name, entry, marks));
    return out;
  }

  /** EDN of a program's value, cut at the EDN budget. */
  value(v: Value, marks?: Marks): string {
    return showStandIns(printSample(marks === undefined ? v : marks.hide(v), { maxItems: Infinity, maxChars: this.options.ednBudget, maxDepth: 64 }).text);
  }

  /** What the program did: prints, tool calls, and (when it succeeded) its definitions. A failure defines nothing. */
  /** `limits`: the run's, within which a call's result that shows hidden parts as stand-ins is also kept as the program had it (`heldResult`). */
  evaluation(result: EvalResult, limits?: Limits): EvaluationRecord {
    const marks = result.marks;
    const hiding = marks === undefined || limits === undefined ? undefined : { limits, marks };
    const memory = this.memory(result.memory, marks);
    const prints = marks === undefined ? result.prints : result.prints.map(showStandIns);
    if (!result.ok) {
      const error = marks === undefined ? result.error : { ...result.error, message: showStandIns(result.error.message), ...(result.error.hint === undefined ? {} : { hint: showStandIns(result.error.hint) }) };
      return { prints, toolCalls: result.toolCalls.map((c) => callTrace(c, undefined, hiding)), definitions: [], memory, error };
    }
    // A definition holding the very value a tool returned holds its whole result: linked by
    // identity, so a summary describes the value once however large it is.
    const holders = new Map<Value, string>();
    for (const d of result.defs) if (typeof d.value === "object" && d.value !== null && !holders.has(d.value)) holders.set(d.value, d.name);
    for (const d of result.defs) if (typeof d.value === "string" && !holders.has(d.value)) holders.set(d.value, d.name);
    const toolCalls = result.toolCalls.map((c) => callTrace(c, c.value === undefined ? undefined : holders.get(c.value), hiding));
    const definitions = result.defs.map((d) => {
      const entry = result.memory.get(d.name);
      return entry !== undefined ? this.definition(d.name, entry, marks) : this.definition(d.name, { value: d.value, doc: d.doc, source: d.source }, marks);
    });
    const value = this.value(result.lisp, marks);
    // Said apart from the EDN: a large value's hidden part may lie past its cut.
    return marks !== undefined && marks.find(result.lisp) !== undefined ? { prints, toolCalls, definitions, memory, value, valueHidden: true } : { prints, toolCalls, definitions, memory, value };
  }
}
