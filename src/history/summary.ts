// One compressed turn, rendered from its trace record: what the program defined, which
// tools it called (with arguments and the shape of each result) and what it printed.
// The text depends only on the turn, the sample bounds and two facts supplied by the
// view (which of its definitions were superseded later, how many of its println lines
// are still inside the history limit), so it is byte-stable from one prompt to the next.
// It carries no header: a summary is told from a program by its `; ` lines, and the
// turn's place in the conversation already says which turn it was.
import { renderOutput, seenPrints } from "../trace/feedback.js";
import { recordKeys, typeLabel } from "../trace/record.js";
import type { DefinitionTrace, ToolCallTrace, Turn } from "../trace/trace.js";
import { cutPoint, equals, Fn, type Form, formText, isMap, isSet, keyword, keywordText, LFloat, LMap, LSet, printSample, quoteString, read, readableStandIns, toLisp, type Value, Vec } from "../lisp/index.js";
import { splitThinking } from "../llm/thinking.js";
import { dictionaryKeys, elementShape, keyShape, SHAPE_STRING, valueShape } from "./shape.js";

export interface SummaryOptions {
  /** Items shown per collection in samples and tool arguments. */
  sampleItems: number;
  /** Characters of one sample, tool argument list or result shape. */
  sampleChars: number;
  /** Tool calls listed one per line; the rest are counted by tool name. */
  toolCallsPerTurn: number;
  /** Characters of println output shown, cut as the loop's feedback cuts it. */
  maxPrintChars?: number;
}

export interface SummaryContext {
  /** Names this turn defined that a later turn redefines: left out (the newer one is shown where it was made). */
  superseded?: ReadonlySet<string>;
  /** How many of the turn's println lines (the most recent ones) are shown; the rest are counted as dropped. */
  printsShown: number;
  /**
   * Names this turn defined that an earlier turn defined too: their lines say `(redefined)`, so
   * an earlier line for the name reads as stale without rewriting it (see markSuperseded).
   */
  redefines?: ReadonlySet<string>;
  /** Names this turn defined that a later program read: once some of its output is dropped, they keep their samples. */
  read?: ReadonlySet<string>;
  /**
   * Earlier data definitions this turn's program read whose own lines no longer showed their
   * values (their output dropped): shown here with their samples (`; Read: name = ...`).
   */
  reads?: readonly DefinitionTrace[];
  /**
   * What a turn that printed nothing shows of its data (default "sample"): the view lowers it
   * to "shape" when samples would make the summary larger than the turn it replaces, and to
   * "none" when it keeps the turn as written (its program says what it defined).
   */
  teach?: Detail;
}

/** Longest docstring shown; docstrings are the model's own notes and usually short. */
const MAX_DOC = 200;
/** Significant digits of a float in a sample. */
const SAMPLE_DIGITS = 12;
/** Nesting a sample shows (deeper levels print as `...`; a small collection shows all of it). */
const SAMPLE_DEPTH = 4;

export interface RenderedSummary {
  text: string;
  /**
   * The text less what the turn taught the model (samples and record shapes): what the
   * size rule compares with the program it replaces, so a learning is never dropped for size.
   */
  code: string;
  /** Tool calls the summary lists (the rest are only counted). */
  toolCallsListed: number;
}

/** The line that marks a summarized turn that did not succeed (its error is in the feedback after it). */
const FAILED: Partial<Record<Turn["status"], string>> = {
  error: "; (failed program omitted)",
  no_code: "; (reply without a program omitted)",
  invalid_return: "; (program omitted: its return value was rejected)",
};

/** Renders the summary that replaces a turn's program in the compressed view. */
export function renderSummary(turn: Turn, ctx: SummaryContext, options: SummaryOptions): RenderedSummary {
  const lines: string[] = [];
  const bare: string[] = [];
  const detail = detailOf(turn, ctx, options);
  // Functions first, then data, each in the order the program defined them. A name a later
  // turn redefines has no line: the newer definition is shown where it was made.
  const again = (d: DefinitionTrace): boolean => ctx.redefines?.has(d.name) ?? false;
  for (const d of turn.definitions) {
    if (d.kind !== "function" || (ctx.superseded?.has(d.name) ?? false)) continue;
    const line = definitionLine(d, false, "none", options, again(d)) + (d.params === undefined ? madeBy(turn, d) : "");
    lines.push(line);
    bare.push(line);
  }
  for (const d of turn.definitions) {
    if (d.kind === "function" || (ctx.superseded?.has(d.name) ?? false)) continue;
    // A small collection the program wrote out keeps it in place of the program: beside output
    // that did not print it (`(def weights {...})` then `(println "ok")`) it was in no line.
    const written = writtenOut(turn, d);
    lines.push(definitionLine(d, false, written ? "sample" : detail(d), options, again(d)));
    bare.push(definitionLine(d, false, "none", options, again(d)));
  }
  // What the program read is what it taught, like a sample: not counted against the program's size.
  if (ctx.reads !== undefined) for (const d of ctx.reads) lines.push(readLine(d, options));
  const from = lines.length;
  const toolCallsListed = toolLines(turn.toolCalls, holders(turn.definitions, ctx.superseded), options, lines);
  if (turn.prints.length > 0) lines.push(outputBlock(turn.prints, ctx.printsShown, options.maxPrintChars));
  const failed = FAILED[turn.status];
  if (failed !== undefined) lines.push(failed);
  // Nothing else left: the turn's names, marked, rather than a summary saying it did nothing.
  else if (lines.length === 0 && turn.definitions.length > 0) for (const d of turn.definitions) lines.push(definitionLine(d, true, "none", options));
  else if (lines.length === 0) lines.push("; (no definitions, tool calls or output)");
  for (let i = from; i < lines.length; i++) bare.push(lines[i]);
  return { text: lines.join("\n"), code: bare.join("\n"), toolCallsListed };
}

/**
 * What each data definition's line adds to its type. Samples or output, not both (as the
 * design has it): a turn that printed shows its data without samples while its output is
 * shown, a turn that printed nothing shows samples. Once some of the turn's output is dropped
 * (its summary is rewritten then anyway), a definition a later program read keeps its sample:
 * the model used that fact, and may need it for the answer. Once every line is dropped, the
 * others show the keys of their records (`vector[25] of {:id integer, ...}`): the structure
 * the model needs to write code against them, at a fraction of a sample.
 */
function detailOf(turn: Turn, ctx: SummaryContext, options: SummaryOptions): (d: DefinitionTrace) => Detail {
  if (turn.prints.length === 0) {
    const teach = ctx.teach ?? "sample";
    return () => teach;
  }
  if (ctx.printsShown >= seenPrints(turn.prints, options.maxPrintChars).lines.length) return () => "none";
  const rest: Detail = ctx.printsShown <= 0 ? "shape" : "none";
  return (d) => (ctx.read?.has(d.name) === true ? "sample" : rest);
}

/**
 * What a turn kept in full taught the model beyond its program: the live data definitions a
 * summary would sample (`; Defined: reviews = vector[3], sample: [...]`): all of them when it
 * printed nothing, so exploring without println still shows the values, and once its output
 * is dropped, those a later program read; and the earlier definitions it read whose values
 * were gone (`; Read: ...`, see SummaryContext.reads). Empty when there is nothing.
 */
export function learnedLines(turn: Turn, ctx: SummaryContext, options: SummaryOptions): string {
  if (turn.status !== "ok") return "";
  const detail = detailOf(turn, ctx, options);
  const lines: string[] = [];
  for (const d of turn.definitions) if (d.kind !== "function" && !(ctx.superseded?.has(d.name) ?? false) && detail(d) === "sample") lines.push(definitionLine(d, false, "sample", options, ctx.redefines?.has(d.name) ?? false));
  if (ctx.reads !== undefined) for (const d of ctx.reads) lines.push(readLine(d, options));
  return lines.join("\n");
}

/**
 * `; Read: name = type[size], sample: ...`: an earlier definition the turn's program read,
 * whose own line shows no value (its turn printed; the output goes once the println limit
 * drops it). Written once with the reader's summary, so no earlier text changes for it.
 */
function readLine(d: DefinitionTrace, options: SummaryOptions): string {
  return `; Read: ${d.name} = ${typeLabel(d)}, sample: ${definitionSample(d, options)}`;
}

/**
 * `; Function: name [params] - "doc"` or `; Defined: name - "doc" = type[size], sample: ...`;
 * a superseded definition is only named, so the newer one is the only value shown; a
 * redefinition says so (`; Defined: name (redefined) = ...`).
 */
export function definitionLine(d: DefinitionTrace, superseded: boolean, detail: Detail, options: SummaryOptions, redefined = false): string {
  const label = d.kind === "function" ? "; Function: " : "; Defined: ";
  if (superseded) return `${label}${d.name} (redefined later)`;
  let s = label + d.name + (redefined ? " (redefined)" : "");
  if (d.kind === "function" && d.params) s += " " + d.params;
  if (d.doc) s += " - " + quoteString(d.doc.length > MAX_DOC ? d.doc.slice(0, MAX_DOC) + "..." : d.doc);
  if (d.kind === "function") return s;
  // Scalars and short strings are their own best description, whatever else is shown.
  if (isWhole(d)) return `${s} = ${definitionSample(d, options)}`;
  s += " = " + typeLabel(d);
  if (detail === "sample") s += ", sample: " + definitionSample(d, options);
  else if (detail === "shape") s += definitionShape(d, options);
  return s;
}

const madeByCache = new WeakMap<DefinitionTrace, string>();

/**
 * ` = (partial sort-by :total >)`: what a function with no parameter list of its own was made
 * from (partial, comp, memoize, fnil), its definition's value as written when that is short.
 * Before, `; Function: by-total` once the program was summarized: neither what it takes nor what
 * it wraps was in any line. Empty for a definition inside another form (a `let`: its locals would
 * read as globals) or a long expression.
 */
function madeBy(turn: Turn, d: DefinitionTrace): string {
  let text = madeByCache.get(d);
  if (text !== undefined) return text;
  text = "";
  const source = d.source?.trim();
  const program = turn.program;
  try {
    const form = source === undefined || program === null ? undefined : programForms(turn).find((f) => program.slice(f.loc.offset, f.loc.end) === source);
    const def = form?.type === "list" ? form.items : [];
    const value = def.at(-1);
    if (def.length >= 3 && def[0].type === "symbol" && def[0].name === "def" && value !== undefined && source !== undefined) {
      const written = formText(program ?? "", value);
      if (written.length <= SMALL_EDN && !written.includes("\n")) text = " = " + written;
    }
  } catch {
    // A program the reader rejects says nothing more.
  }
  madeByCache.set(d, text);
  return text;
}

const WHOLE_TYPES: ReadonlySet<string> = new Set(["nil", "boolean", "integer", "float", "keyword"]);

/** Characters of EDN up to which a collection is shown as its value (`= {:attempts 3 :delay 10}`). */
const SMALL_EDN = 80;

/**
 * A scalar, a short string or a regex whose EDN fits in SMALL_EDN characters: shown as its value on
 * every line. A regex said `= regex` beside its turn's output, and refining one
 * (`#"charge|refund|invoice"`) after the accuracy that output printed needs its pattern.
 */
export function isWhole(d: DefinitionTrace): boolean {
  return WHOLE_TYPES.has(d.type) || (d.type === "string" && (d.size ?? Infinity) <= SHAPE_STRING) || (d.type === "regex" && (d.edn ?? d.sample).length <= SMALL_EDN);
}

/**
 * A collection whose whole EDN fits in SMALL_EDN characters: its sample is the whole value,
 * also where a larger one would show its shape (`{:attempts 3 :delay 10}`, not `{:attempts integer ...}`).
 */
export function isSmall(d: DefinitionTrace): boolean {
  return d.kind === "value" && COLLECTION_TYPES.has(d.type) && d.edn !== undefined && d.edn.length <= SMALL_EDN;
}

const programLiterals = new WeakMap<Turn, Value[]>();

/** A value whose EDN shows a function (`{:vip? #fn[c]}`): code the program wrote, which no output prints. */
export const holdsFunctions = (d: DefinitionTrace): boolean => COLLECTION_TYPES.has(d.type) && (d.edn ?? d.sample).includes("#fn[");

/**
 * A small collection or string (EDN of 80 characters or less) the turn's program holds as a
 * literal: its value, which full history shows in the program and a summary would not. Compared as
 * values, not as text: written with a comment
 * inside, a float's trailing zero (`4.50`), an exponent, a character, or as a set or a map past
 * eight entries (printed in hash order), its EDN was in no program, and `cfg = map[3]` beside the
 * turn's output left the keys the next program reads in no line. A value holding functions counts
 * too, whatever its size (its sample lists every key): its keys are in the program and in no
 * output (`{:double (fn [x] ...)}` read `handlers = map[2]` beside the output of
 * `((:double handlers) 4)`, and a table of six the same).
 */
export function writtenOut(turn: Turn, d: DefinitionTrace): boolean {
  if (d.kind !== "value" || turn.program === null) return false;
  if (holdsFunctions(d)) return true;
  // A string as a collection: past 40 characters a line shows its size, and one the program wrote
  // (`(def sql "SELECT id, total FROM orders WHERE status = 'paid'")`) was in no line.
  if (!isSmall(d) && !(d.type === "string" && d.edn !== undefined && d.edn.length <= SMALL_EDN)) return false;
  let literals = programLiterals.get(turn);
  if (literals === undefined) programLiterals.set(turn, (literals = literalsOf(turn)));
  const v = literals.length === 0 ? undefined : ednValue(d.edn ?? "");
  return v !== undefined && literals.some((l) => equals(l, v));
}

/** The strings, vectors, maps and sets of constants a program writes, nested ones too (`[1 2]` in `{:a [1 2]}`). */
function literalsOf(turn: Turn): Value[] {
  const out: Value[] = [];
  const walk = (f: Form): void => {
    if (f.type === "string") out.push(f.value);
    else if (f.type === "vector" || f.type === "map" || f.type === "set") {
      const v = formValue(f);
      if (v !== undefined) out.push(v);
    }
    if ("items" in f) for (const x of f.items) walk(x);
  };
  for (const f of programForms(turn)) walk(f);
  return out;
}

const formsOf = new WeakMap<Turn, readonly Form[]>();

/**
 * The top-level forms of a turn's program, read once per turn record for every line that looks at
 * what it wrote (its literals, what a function was made from, the form a definition sits in); none
 * for a program the reader rejects, which writes nothing out.
 */
export function programForms(turn: Turn): readonly Form[] {
  let forms = formsOf.get(turn);
  if (forms === undefined) {
    try {
      forms = turn.program === null ? [] : read(turn.program, 256);
    } catch {
      forms = [];
    }
    formsOf.set(turn, forms);
  }
  return forms;
}

const COLLECTION_TYPES: ReadonlySet<string> = new Set(["vector", "map", "set", "list"]);

/** What a data definition's line adds to its type: a sample, the shape of its records, or nothing. */
export type Detail = "sample" | "shape" | "none";

const shapeCache = new WeakMap<DefinitionTrace, string>();

/**
 * What a definition's line shows once its turn's output is dropped: the merged shape of a
 * collection's elements (` of {:id integer, :name string}`), a map's keys with the types of
 * their values, or a sample (values too big for the trace's EDN).
 */
function definitionShape(d: DefinitionTrace, options: SummaryOptions): string {
  let text = shapeCache.get(d);
  if (text !== undefined) return text;
  const v = d.edn === undefined || d.type === "string" ? undefined : ednValue(d.edn);
  if (isSmall(d)) text = ", sample: " + definitionSample(d, options);
  else if (v instanceof Vec || isSet(v)) text = v.size === 0 ? "" : " of " + elementShape(v, 1);
  else if (isMap(v)) text = v.size === 0 ? "" : " " + keyShape(v, 0);
  // A long string says its size: its text is what the model printed, and can print again.
  else text = d.type === "string" ? "" : ", sample: " + definitionSample(d, options);
  // A shape lists a few keys and counts the rest: every record key is named, as under a sample.
  if (v !== undefined && !isSmall(d)) text += recordKeys(v, text);
  shapeCache.set(d, text);
  return text;
}

const sampleCache = new WeakMap<DefinitionTrace, { key: string; text: string }>();

/**
 * A bounded sample of a data definition, printed by the interpreter's sample printer
 * with the view's bounds from the value read back from its EDN. A value too big for the
 * trace's EDN budget keeps the sample recorded with it.
 */
export function definitionSample(d: DefinitionTrace, options: SummaryOptions): string {
  const key = `${options.sampleItems}/${options.sampleChars}`;
  const hit = sampleCache.get(d);
  if (hit !== undefined && hit.key === key) return hit.text;
  const value = d.edn === undefined ? undefined : ednValue(d.edn);
  // A small collection whole, at any depth (its EDN bounds it); no "(N items, showing first M)"
  // note: the type label gives the size.
  const small = isSmall(d);
  const bounds = { maxItems: small ? Infinity : options.sampleItems, maxChars: small ? SMALL_EDN : options.sampleChars, maxDepth: small ? Infinity : SAMPLE_DEPTH, note: false };
  const sample = value === undefined ? d.sample : printSample(value, bounds).text;
  // Every record key, and the keys a dictionary's shape names, when the sample's budget cut some off.
  const text = value === undefined || small ? sample : sample + dictionaryKeys(value, sample) + recordKeys(value, sample);
  sampleCache.set(d, { key, text });
  return text;
}

/**
 * Reads EDN data back into a value for a sample; undefined when it is not plain data (then
 * the recorded sample is used). Floats come back with at most 12 significant digits.
 */
export function ednValue(edn: string): Value | undefined {
  try {
    const text = readableFns(readableStandIns(edn));
    if (text === undefined) return undefined;
    const forms = read(text, 256);
    return forms.length === 1 ? formValue(forms[0]) : undefined;
  } catch {
    return undefined;
  }
}

/** A function as a sample prints it, `#fn[label]`, read back from EDN: it prints so again, and is no data to call. */
class ShownFn extends Fn {
  constructor(readonly name: string) {
    super();
  }
  call(): Value {
    throw new Error(`${this.name} is a sample's function`);
  }
}

const FN_TAG = "#fn[";
const FN_HEAD = "fn-shown-in-edn";

/**
 * EDN with each function (`#fn[x]`, which the reader refuses) written as a form formValue reads
 * back as one: `(fn-shown-in-edn "x")`. Before, a value holding functions read back as nothing,
 * so it showed its recorded sample, with its `(6 items, showing first 3)` note and no keys past the
 * cut: a table of six handlers kept three of its keys in the prompt. Undefined when a label does not end.
 */
function readableFns(edn: string): string | undefined {
  if (!edn.includes(FN_TAG)) return edn;
  let out = "";
  let from = 0;
  for (let i = 0; i < edn.length; i++) {
    const c = edn[i];
    if (c === '"') {
      // Skip the string, escapes included.
      for (i++; i < edn.length && edn[i] !== '"'; i++) if (edn[i] === "\\") i++;
    } else if (c === "#" && edn.startsWith(FN_TAG, i)) {
      // The label ends at the bracket that closes the tag's (a label holds parameter vectors: `#fn[[a b] c]`).
      let depth = 0;
      let j = i + FN_TAG.length - 1;
      for (; j < edn.length; j++) {
        if (edn[j] === "[") depth++;
        else if (edn[j] === "]" && --depth === 0) break;
      }
      if (j >= edn.length) return undefined;
      out += edn.slice(from, i) + `(${FN_HEAD} ${quoteString(edn.slice(i + FN_TAG.length, j))})`;
      from = j + 1;
      i = j;
    }
  }
  return out + edn.slice(from);
}

function formValue(f: Form): Value | undefined {
  switch (f.type) {
    case "nil":
      return null;
    case "boolean":
    case "string":
    case "char":
      return f.value;
    case "int":
      return f.value;
    case "float": {
      // A sample is a preview: binary rounding noise (14484.200000000003) carries no
      // information, so floats keep 12 significant digits.
      const x = Number.isFinite(f.value) ? Number(f.value.toPrecision(SAMPLE_DIGITS)) : f.value;
      return Number.isInteger(x) ? new LFloat(x) : x;
    }
    case "keyword":
      return keyword(f.name);
    // A keyword the reader cannot read as one, as samples write it (`(keyword "Order ID")`: see keywordText).
    // A function, as readableFns writes it.
    case "list": {
      const [head, name] = f.items;
      if (f.items.length !== 2 || head.type !== "symbol" || name.type !== "string") return undefined;
      return head.name === "keyword" ? keyword(name.value) : head.name === FN_HEAD ? new ShownFn(name.value) : undefined;
    }
    case "vector":
    case "set": {
      const items: Value[] = [];
      for (const x of f.items) {
        const v = formValue(x);
        if (v === undefined) return undefined;
        items.push(v);
      }
      return f.type === "vector" ? Vec.fromArray(items) : LSet(items);
    }
    case "map": {
      const entries: Array<[Value, Value]> = [];
      for (let i = 0; i < f.items.length; i += 2) {
        const k = formValue(f.items[i]);
        const v = formValue(f.items[i + 1]);
        if (k === undefined || v === undefined) return undefined;
        entries.push([k, v]);
      }
      return LMap(entries);
    }
    default:
      return undefined;
  }
}

/**
 * Tool calls, grouped by tool and outcome in order of first call: one call is
 * `; Tool: name {args} -> shape`; several with the same outcome share a line whose
 * arguments list each distinct value (`{:service "payments" :hour 14|15|16}`), so a
 * fan-out over many items still says exactly what was asked. Groups past the limit are
 * counted by tool. Returns the number of calls listed.
 */
function toolLines(calls: readonly ToolCallTrace[], defs: readonly DefinitionTrace[], options: SummaryOptions, out: string[]): number {
  // `calls`: the group's calls, unless a definition holds their result (the line names it).
  const groups = new Map<string, { name: string; outcome: string; sizes: Array<[number, number]>; args: unknown[]; calls: ToolCallTrace[] | undefined }>();
  for (const c of calls) {
    const holder = holderOf(c, defs);
    const outcome = holder ?? outcomeOf(c, options);
    // Calls whose results differ only in sizes share a line, the sizes given as ranges:
    // a fan-out over 36 ids is one line, not one per result length.
    const sizes = outcome.startsWith('"') ? [] : [...outcome.matchAll(SIZE)].map((m) => Number(m[1]));
    const key = c.name + "\u0000" + (sizes.length === 0 ? outcome : outcome.replace(SIZE, "[]"));
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { name: c.name, outcome, sizes: sizes.map((n) => [n, n]), args: [c.args], calls: holder === undefined ? [c] : undefined });
    else {
      g.args.push(c.args);
      g.calls?.push(c);
      sizes.forEach((n, i) => {
        const r = g.sizes[i];
        if (n < r[0]) r[0] = n;
        if (n > r[1]) r[1] = n;
      });
    }
  }
  let listed = 0;
  let lines = 0;
  let left = groups.size;
  const rest = new Map<string, number>();
  for (const g of groups.values()) {
    left--;
    if (lines < options.toolCallsPerTurn) {
      // Small results whole: on the group's one line when they are all alike (a call alone, five
      // comments answered `{:ok true}`), else, for as many calls as a sample shows items, a line per
      // call while every later group keeps its line. Merged into one shape, three health checks read
      // `-> {:status string, :p95-ms integer}` once their printed statuses were dropped, and which
      // service was degraded was in no line; a fan-out keeps its one line.
      const smalls = g.calls?.map(smallResult);
      const whole = smalls?.every((x) => x !== undefined) === true ? (smalls as string[]) : undefined;
      const alike = whole?.every((x) => x === whole[0]) === true;
      if (whole !== undefined && (alike || (whole.length <= options.sampleItems && lines + whole.length + left <= options.toolCallsPerTurn))) {
        if (alike) out.push(groupLine(g.name, g.args, whole[0], options));
        else whole.forEach((x, k) => out.push(groupLine(g.name, [g.args[k]], x, options)));
        listed += g.args.length;
        lines += alike ? 1 : whole.length;
        continue;
      }
      let i = 0;
      const outcome = g.sizes.length === 0 ? g.outcome : g.outcome.replace(SIZE, () => {
        const [lo, hi] = g.sizes[i++];
        return lo === hi ? `[${lo}]` : `[${lo}..${hi}]`;
      });
      out.push(groupLine(g.name, g.args, outcome, options));
      listed += g.args.length;
      lines++;
    } else {
      rest.set(g.name, (rest.get(g.name) ?? 0) + g.args.length);
    }
  }
  if (rest.size > 0) out.push(`; Tool calls not listed: ${calls.length - listed} (${[...rest].map(([name, n]) => `${name} x${n}`).join(", ")})`);
  return listed;
}

/** A size in a result shape: `vector[12]`, `string[874]`. */
const SIZE = /\[(\d+)\]/g;

/** The turn's data definitions still shown with their value: candidates for holding a tool result. */
function holders(definitions: readonly DefinitionTrace[], superseded: ReadonlySet<string> | undefined): DefinitionTrace[] {
  return definitions.filter((d) => d.kind === "value" && !(superseded?.has(d.name) ?? false));
}

const resultEdns = new WeakMap<ToolCallTrace, { chars: number; text: string | undefined }>();

/**
 * The name of the definition that holds a call's whole result, if one does: then the
 * line says where the result went (`-> client-src`) and the definition's own line gives
 * its type and sample, instead of describing the same value twice. Only definitions of
 * the result's type and size are compared, and the result's EDN is printed only as far
 * as the longest of theirs, so a large result that nothing holds costs a size check.
 */
function holderOf(call: ToolCallTrace, defs: readonly DefinitionTrace[]): string | undefined {
  const r = call.result;
  if (call.error !== undefined || r === null || r === undefined) return undefined;
  // Recorded by identity when the turn ran; a holder redefined later is not named.
  if (call.holder !== undefined) return defs.some((d) => d.name === call.holder) ? call.holder : undefined;
  // A scalar shape already shows the value itself; only collections and long strings are linked.
  let type: string;
  let size: number;
  if (Array.isArray(r)) [type, size] = ["vector", r.length];
  else if (typeof r === "object") [type, size] = ["map", Object.keys(r).length];
  else if (typeof r === "string" && r.length > SHAPE_STRING) [type, size] = ["string", r.length];
  else return undefined;
  let chars = 0;
  // Traces written before holders were recorded: the definition whose EDN is the result's.
  for (const d of defs) if (d.type === type && d.size === size && d.edn !== undefined) chars = Math.max(chars, d.edn.length);
  if (chars === 0) return undefined;
  let hit = resultEdns.get(call);
  // A shorter print that was cut may hide a match; a whole one is the answer for any length.
  if (hit === undefined || (hit.text === undefined && hit.chars < chars)) {
    const printed = printSample(toLisp(r), { maxItems: Infinity, maxChars: chars, maxDepth: Infinity });
    hit = { chars, text: printed.truncated ? undefined : printed.text };
    resultEdns.set(call, hit);
  }
  const edn = hit.text;
  return edn === undefined ? undefined : defs.find((d) => d.edn === edn)?.name;
}

/** One tool call's line. */
export function toolLine(call: ToolCallTrace, options: SummaryOptions): string {
  return groupLine(call.name, [call.args], smallResult(call) ?? outcomeOf(call, options), options);
}

function outcomeOf(call: ToolCallTrace, options: SummaryOptions): string {
  if (call.error !== undefined) return "error: " + cut(call.error.replace(/\s+/g, " "), options.sampleChars);
  return resultShape(call.result, options.sampleChars * 2, true);
}

const smallResults = new WeakMap<ToolCallTrace, string | null>();

/**
 * A collection result whose EDN fits in SMALL_EDN characters, whole, as a small definition is shown:
 * a ticket the program only printed the id of (`{:id "TCK-77" :status "open"}`) read `{:id string,
 * :status string}` once that output was dropped, the id in no line of the prompt.
 */
function smallResult(call: ToolCallTrace): string | undefined {
  let text = smallResults.get(call);
  if (text === undefined) {
    const r = call.result;
    text = null;
    // An empty one reads as well as its shape (`vector[0]`).
    if (call.error === undefined && typeof r === "object" && r !== null && Object.keys(r).length > 0) {
      try {
        const printed = printSample(toLisp(r, 256), { maxItems: Infinity, maxChars: SMALL_EDN, maxDepth: Infinity, note: false });
        if (!printed.truncated) text = printed.text;
      } catch {
        // Not plain data: its shape says what it is.
      }
    }
    smallResults.set(call, text);
  }
  return text ?? undefined;
}

function groupLine(name: string, args: readonly unknown[], outcome: string, options: SummaryOptions): string {
  const text = args.length === 1 ? argsText(args[0], options) : mergedArgs(args, options);
  return `; Tool: ${name}${args.length === 1 ? "" : ` x${args.length}`}${text === "" ? "" : " " + text} -> ${outcome}`;
}

/** Distinct values listed per argument before the rest are counted. */
const MAX_VARIANTS = 12;

/** The arguments of several calls as one map: a shared value once, differing values joined by `|`. */
function mergedArgs(args: readonly unknown[], options: SummaryOptions): string {
  const plain = args.every((a) => typeof a === "object" && a !== null && !Array.isArray(a));
  const variants = (texts: string[]): string => {
    const distinct = [...new Set(texts)];
    const shown = distinct.slice(0, MAX_VARIANTS).join("|");
    return distinct.length > MAX_VARIANTS ? `${shown}|...(${distinct.length - MAX_VARIANTS} more)` : shown;
  };
  if (!plain) return variants(args.map((a) => argsText(a, options)));
  const keys: string[] = [];
  for (const a of args) for (const k of Object.keys(a as object)) if (!keys.includes(k)) keys.push(k);
  if (keys.length === 0) return "";
  const valueOptions = { ...options, sampleChars: Math.max(10, Math.floor(options.sampleChars / 2)) };
  // Keys as a sample of one call's arguments writes them (`(keyword "Order ID")`: see keywordText).
  const parts = keys.map((k) => `${keywordText(k)} ${variants(args.map((a) => argsText((a as Record<string, unknown>)[k] ?? null, valueOptions) || "nil"))}`);
  return `{${parts.join(" ")}}`;
}

function argsText(args: unknown, options: SummaryOptions): string {
  if (args === undefined || args === null) return "";
  if (typeof args === "object" && !Array.isArray(args) && Object.keys(args).length === 0) return "";
  try {
    const v = toLisp(args, SAMPLE_DEPTH + 2);
    // Whole when it fits in the budget, as a small collection is: three items of a batch of five
    // ids (`{:ids ["o1" "o2" "o3" ...]}`) left the two the next batch must skip in no line.
    const whole = printSample(v, { maxItems: Infinity, maxChars: options.sampleChars, maxDepth: Infinity, note: false });
    return whole.truncated ? printSample(v, { maxItems: options.sampleItems, maxChars: options.sampleChars, maxDepth: SAMPLE_DEPTH, note: false }).text : whole.text;
  } catch {
    return "...";
  }
}

function cut(s: string, max: number): string {
  return s.length > max ? s.slice(0, cutPoint(s, max)) + "..." : s;
}

/**
 * The shape of a tool result (plain JSON as the trace holds it), read as the program saw it:
 * scalars as values, collections as type and size with the merged shape of their elements,
 * maps with their keys. `vector[12] of {:id integer, :title string}` tells the model what
 * came back and how to reach into it, at a fraction of a sample's size.
 */
export function resultShape(result: unknown, maxChars: number, keys = false): string {
  let v: Value;
  try {
    v = toLisp(result, 256);
  } catch {
    return "...";
  }
  const shape = cut(valueShape(v), maxChars);
  // `keys`: every record key named after it, as after a definition's shape (a shape lists eight and
  // counts the rest, within maxChars): tickets of twenty fields read `{..., :first-response-minutes...`
  // once their printed ids were dropped, and the `:team` the next program filtered on was in no line.
  return keys ? shape + recordKeys(v, shape) : shape;
}

/**
 * The turn's println output: the most recent `shown` of the lines its feedback showed (the
 * same head, with the same cut note when the output was cut), with a count of older lines
 * dropped, as a feedback shows it (`; Output (5 dropped):`).
 */
function outputBlock(prints: readonly string[], shown: number, maxChars: number | undefined): string {
  return "; " + renderOutput(seenPrints(prints, maxChars), shown);
}

/** Characters of the model's prose kept in a `; Note:` line. */
const NOTE_CHARS = 160;

/** A fenced block, to its closing fence or the end; and a fence alone. */
const FENCED = /(`{3,}|~{3,})[\s\S]*?(\1|$)/g;
const FENCE = /`{3,}|~{3,}/;

/**
 * The model's own prose around its program, as a `; Note:` line (empty when it wrote none):
 * what it concluded or planned. Shown once, at the end of the turn's summary in the next
 * prompt, where removing it later leaves the text before it, and so the cached prefix, as it was.
 */
export function noteLine(reply: string, program: string | null = null): string {
  // The program is not prose however it came: fenced with ``` or ~~~ (as the extractor reads
  // both), or bare; other fenced blocks (expected output, say) are not prose either.
  // A reasoning model's <think> block is its drafting, not what it concluded.
  const answer = splitThinking(reply).answer;
  const body = program?.trim() ?? "";
  // Unfenced, the program is the whole answer (as the extractor takes it), maybe repaired before it
  // ran (smart quotes, odd spaces) and so not found as written: no prose, not the program as a note.
  if (body !== "" && !answer.includes(body) && !FENCE.test(answer)) return "";
  const prose = (body === "" ? answer : answer.replace(body, " "))
    .replace(FENCED, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (prose === "") return "";
  if (prose.length <= NOTE_CHARS) return "; Note: " + prose;
  // Cut at the last word boundary within the limit, or at the limit when that boundary is in the
  // first half: a single longer word, or prose without spaces between words (Japanese, Chinese),
  // whose last space may follow a leading label ('結果: ...' kept only '結果:').
  const space = prose.lastIndexOf(" ", NOTE_CHARS);
  return "; Note: " + prose.slice(0, space > NOTE_CHARS / 2 ? space : cutPoint(prose, NOTE_CHARS)) + "...";
}
