// Provenance of hidden context. A run's `_`-prefixed context keys may be used by a program
// (a token passed to a tool) but never shown to a model. The interpreter, not a text search,
// knows which values came from them: a value read from hidden context is marked with its
// place, and every value a builtin computes from a marked one (a cut, an upper-cased copy,
// the parts of a split, a count) is marked as derived, collections and all. What is shown
// (printed output, tool-call lines, samples, error messages) shows marked values as stand-ins
// (`<hidden string from data/_creds :crm :token>`); text that merely equals a hidden value is
// never touched.
//
// Strings and numbers have no identity in the host language, so they are marked by value:
// within one evaluation a string or number equal to a marked one counts as marked. So that
// ordinary values are not caught that way, strings shorter than 3 characters and integers
// below 1,000 in size are marked only once the program takes them out of hidden data (`pin`):
// a hidden string's characters, a hidden card's CVV. Collections and other objects are marked
// by identity; collections are immutable, so what one holds is found once.
import { Builtin, type BuiltinDef } from "./core/registry.js";
import { isFieldName, isHiddenKey } from "./hidden-names.js";
import { isLiteral } from "./literals.js";
import { sortOrder } from "./core/sorted.js";
import { formatFloat, quoteString, regexText } from "./printer.js";
import { STAND_IN_CLOSE, STAND_IN_OPEN } from "./stand-in.js";
import type { EvaluateOptions, Memory } from "./evaluate.js";
import type { Budget } from "./interop.js";
import { chargeIfRunning, run, runMarks } from "./runtime.js";
import { Closure } from "./fn.js";
import { Fn, isMap, isSet, Keyword, LFloat, type LMap, type LSet, Regex, typeName, type Value } from "./values.js";
import { Vec } from "./vector.js";

export { isHiddenKey };

/** Whether a run may meet hidden context: its context or its callers' has hidden keys, or memory holds marked values. */
export function meetsHidden(ctx: EvaluateOptions["ctx"], memory: Memory, callers: EvaluateOptions["callerHidden"] = []): boolean {
  if (ctx !== undefined && Object.keys(ctx).some(isHiddenKey)) return true;
  if (callers.some((c) => Object.keys(c).some(isHiddenKey))) return true;
  for (const entry of memory.values()) if (entry.hidden !== undefined) return true;
  return false;
}

/** Where a marked value came from: its place (`data/_creds :crm :token`) and whether it was computed from it. */
export interface Origin {
  readonly path: string;
  /** The hidden key's place, `data/_creds`. */
  readonly root: string;
  readonly derived: boolean;
  /**
   * A kept value's keywords made from hidden text that read as field names (`:acme-corp`): by
   * spelling they cannot be told from the data's own keys, so the next evaluation is told which.
   */
  readonly keywords?: readonly string[];
  /**
   * A kept value's short strings and small numbers that were hidden when it was kept (marked, or
   * held by a collection read from hidden context, or by a function): the next evaluation marks
   * only these again, not a page size of 7 kept beside a token. Absent: all of them are taken to be.
   */
  readonly smalls?: ReadonlyArray<string | number>;
  /** Public text cut where a hidden needle, pattern or bound said: its length is a position, hidden like one. */
  readonly cut?: boolean;
}

/** A stand-in is written between these private-use characters until it is shown (`showStandIns`). */
export { STAND_IN_CLOSE, STAND_IN_OPEN };

/** The text a marked value is shown as, for a value of type `type`. */
export function standIn(type: string, o: Origin): string {
  return `${STAND_IN_OPEN}hidden ${type} ${o.derived ? "derived from " + o.root : "from " + o.path}${STAND_IN_CLOSE}`;
}

const STAND_IN = /"\uE000([^\uE000\uE001"]*)\uE001"|\uE000([^\uE000\uE001]*)\uE001/g;

const SHOWN_STAND_IN = /<hidden [a-z]+ (?:derived )?from /;

/** Whether text holds a stand-in, shown or not (a recorded value computed from hidden context). */
export function holdsStandIn(text: string): boolean {
  return text.includes(STAND_IN_OPEN) || SHOWN_STAND_IN.test(text);
}

/** Text with every stand-in shown unquoted, `<hidden string from data/_creds :token>`; a stand-in cut short still shows as one. */
export function showStandIns(text: string): string {
  if (!text.includes(STAND_IN_OPEN)) return text;
  return text.replace(STAND_IN, (_m, a: string | undefined, b: string | undefined) => `<${a ?? b ?? ""}>`).replace(/\uE000/g, "<").replace(/\uE001/g, ">");
}

// A shown stand-in outside a string literal, or a string literal (left as it is).
const SHOWN_IN_EDN = /"(?:[^"\\]|\\.)*"|<(hidden [a-z]+ (?:derived )?from [^<>"]*)>/g;

/**
 * EDN as a trace records it (stand-ins shown) with each stand-in written back as the string it was
 * printed from, so that it reads back as data (a summary's sample, keys and shape of a value
 * holding hidden parts) and prints as a stand-in again. Strings that merely read like one stay.
 */
export function readableStandIns(edn: string): string {
  if (!SHOWN_STAND_IN.test(edn)) return edn;
  return edn.replace(SHOWN_IN_EDN, (m, text: string | undefined) => (text === undefined ? m : `"${STAND_IN_OPEN}${text}${STAND_IN_CLOSE}"`));
}

/** The type a stand-in string names (`integer` for a hidden integer), or undefined for any other string. */
export function standInType(s: string): string | undefined {
  if (!s.startsWith(STAND_IN_OPEN)) return undefined;
  return /^\uE000hidden ([a-z]+) /.exec(s)?.[1];
}

/** Every string in plain data with its stand-ins shown; the same object back when none held one. */
export function showStandInsIn<T>(x: T, depth = 0): T {
  if (typeof x === "string") return showStandIns(x) as T;
  if (x === null || typeof x !== "object" || depth > 64) return x;
  if (Array.isArray(x)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < x.length; i++) {
      const v = showStandInsIn(x[i] as unknown, depth + 1);
      if (v !== x[i] && out === null) out = x.slice(0, i);
      if (out !== null) out.push(v);
    }
    return (out ?? x) as T;
  }
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return x;
  // Entries, made an object at the end: assigning a key "__proto__" would set the prototype instead.
  let out: Array<[string, unknown]> | null = null;
  const entries = Object.entries(x as Record<string, unknown>);
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i];
    const w = showStandInsIn(v, depth + 1);
    if (w !== v && out === null) out = entries.slice(0, i);
    if (out !== null) out.push([k, w]);
  }
  return (out === null ? x : Object.fromEntries(out)) as T;
}

/** Whether plain data holds a stand-in, in a string or a key (a tool call's arguments or result as recorded). */
export function holdsStandInIn(x: unknown, depth = 0): boolean {
  if (typeof x === "string") return x.includes(STAND_IN_OPEN);
  if (x === null || typeof x !== "object") return false;
  // Deeper than hiding goes (Marks.hide): taken to hold one.
  if (depth > 64) return true;
  if (Array.isArray(x)) return x.some((v) => holdsStandInIn(v, depth + 1));
  for (const [k, v] of Object.entries(x as Record<string, unknown>)) if (k.includes(STAND_IN_OPEN) || holdsStandInIn(v, depth + 1)) return true;
  return false;
}

/**
 * The keys of a tool's arguments (`args`, as the tool gets them) that carry hidden context: whose
 * values, as shown, hold a stand-in, in a string or a key, and those that are hidden themselves,
 * which the shown arguments hold as stand-ins instead (a key the program made of a token).
 */
export function hiddenKeys(args: Record<string, unknown>, shown: Record<string, unknown>): string[] {
  return Object.keys(args).filter((k) => !Object.hasOwn(shown, k) || holdsStandInIn(shown[k]));
}

/** Builtins that pick an element out of a collection: the element keeps its own mark, not its siblings'. */
const SELECTORS = new Set(["get", "get-in", "first", "second", "last", "nth", "peek", "ffirst", "fnext", "val", "key", "ex-message", "ex-data", ".getMessage"]);
/** Builtins that read a number out of a string: a small one read from a marked string is a piece of it. */
const PARSERS = new Set(["parse-long", "parse-int", "parse-double", "extract-int", "parseInt", "parseLong", "parseDouble"]);
/** Builtins that find text in text: where a marked piece is in public text tells the piece ((nth alpha i) spells it back). */
const SEARCHES = new Set(["index-of", "last-index-of", ".indexOf", ".lastIndexOf"]);
/**
 * Builtins that build a collection of their arguments' own values, computing none: each keeps its
 * own mark, and the public ones beside a hidden one stay shown ((assoc req :token tok) hid the
 * region beside it, and every equal string in the evaluation). Not when an argument is a marked
 * collection: its entries, copied in, include booleans and nils that are hidden only by it.
 */
const STRUCTURAL = new Set([
  ...["assoc", "assoc-in", "dissoc", "merge", "conj", "select-keys", "hash-map", "array-map", "sorted-map", "vector", "into", "zipmap", "ex-info", "Exception."],
  // The one value they replace is computed by the function they are given, whose builtins mark it.
  ...["update", "update-in"],
]);
/** Of those, the ones whose every argument is a key or value of the result, none a collection whose entries it copies in. */
const OF_VALUES = new Set(["hash-map", "array-map", "sorted-map", "vector"]);
/** Of those, the ones that add values as they are to the collection they are given first (`conj` onto a map copies a map's entries in). */
const ADDS_VALUES = new Set(["assoc", "assoc-in", "conj"]);
/**
 * Of those, the ones that take a string argument apart, or run a transducer: given a marked string
 * (its characters are pieces of it) or a transducer holding a mark (`(drop d)`, which chose the
 * elements), the result is derived whole.
 */
const TAKES_APART = new Set(["into", "zipmap"]);
/** Builtins that cut text where a needle, pattern or bound says: given public text and a hidden needle, what they cut is `Origin.cut`. */
const CUTTERS = new Set(["split", ".split", "replace", "replace-first", "subs", ".substring"]);
/** Cutters given the pattern first, the text second. */
const PATTERN_FIRST = new Set(["re-split", "re-find", "re-seq", "re-matches", "extract"]);
/** Builtins that cut a sorted collection at a bound: given a hidden bound, what they keep is `Origin.cut` (its size is where the bound sits). */
const BOUNDED = new Set(["subseq", "rsubseq"]);
/** Builtins that tell a value's size or type, never what it holds: not marked, however large, unless it was cut by a hidden needle. */
const SHAPE_ONLY = new Set(["count", "type"]);
/** Builtins whose output a model sees: marked arguments are shown as stand-ins. */
const SINKS = new Set(["println", "print", "prn", "pr"]);

// A builtin's roles above as bits, found once when it is wrapped (Marks.builtin): a call then
// reads no set (every builtin call of a run with hidden context goes through `after`).
const SELECTOR = 1;
const PARSER = 2;
const SEARCH = 4;
const BUILDS = 8;
const SHAPE = 16;
const APART = 32;
const CUTS = 64;
const CUTS_SECOND = 128;
const BOUNDS = 256;
const VALUES = 512;
const ADDS = 1024;
const CONJ = 2048;
function roleOf(name: string): number {
  return (
    (SELECTORS.has(name) ? SELECTOR : 0) |
    (PARSERS.has(name) ? PARSER : 0) |
    (SEARCHES.has(name) ? SEARCH : 0) |
    (STRUCTURAL.has(name) ? BUILDS : 0) |
    (TAKES_APART.has(name) ? APART : 0) |
    (CUTTERS.has(name) ? CUTS : 0) |
    (PATTERN_FIRST.has(name) ? CUTS | CUTS_SECOND : 0) |
    (SHAPE_ONLY.has(name) ? SHAPE : 0) |
    (BOUNDED.has(name) ? BOUNDS : 0) |
    (OF_VALUES.has(name) ? VALUES : 0) |
    (ADDS_VALUES.has(name) ? ADDS : 0) |
    (name === "conj" ? CONJ : 0)
  );
}

/** Nodes one evaluation may visit marking derived collections; past it, every value it shows is hidden. */
const WALK_BUDGET = 1_000_000;

function markable(v: Value): v is string | number {
  return typeof v === "string" ? v.length >= 3 : typeof v === "number" && (!Number.isInteger(v) || Math.abs(v) >= 1000);
}

/**
 * A string or number too short to mark by value in general (0 and 1 are never marked: a flag's
 * value is no secret, and they are in every count).
 */
function small(v: Value): v is string | number {
  return typeof v === "string" ? v.length > 0 && v.length < 3 : typeof v === "number" && Number.isInteger(v) && Math.abs(v) < 1000 && v !== 0 && v !== 1;
}

/** Builtins the compiler inlines for plain numbers: run without their fast paths, so no arithmetic slips past. */
const INLINED = new Set(["+", "-", "*", "<", ">", "<=", ">=", "=", "inc", "dec", "zero?"]);

function children(v: object): Iterable<Value> | null {
  if (v instanceof Vec) return v as Vec<Value>;
  if (isMap(v)) return iterEntries(v);
  if (isSet(v)) return v as LSet;
  if (v instanceof Closure) return v.env;
  return null;
}

function* iterEntries(m: LMap): Iterable<Value> {
  for (const [k, x] of m) {
    yield k;
    yield x;
  }
}

/** A hidden map's key as its values' place shows it: a field name as written, any other key as `…` (it is hidden itself). */
function keyText(k: Value): string {
  if (k instanceof Keyword && isFieldName(k.name)) return ":" + k.name;
  if (typeof k === "number" && !markable(k) && !small(k)) return String(k);
  return "…";
}

/** The fewest characters of a hidden string or number that text is searched for (shorter ones are too common). */
export const QUOTED_MIN = 4;

/**
 * The texts a hidden value is quoted as: itself, and escaped when that differs: as JSON (a
 * message built with JSON.stringify), as printed data (`describe`), which also escapes DEL,
 * and as a printed regex's source (`#"..."`), which escapes only quotes.
 */
export function quotedForms(value: string): string[] {
  const forms = [value];
  for (const q of [JSON.stringify(value).slice(1, -1), quoteString(value).slice(1, -1), regexText(value)]) if (!forms.includes(q)) forms.push(q);
  return forms;
}

/**
 * `text` with every quote of a hidden value, whole or cut short (`…`, `...`), replaced by its
 * stand-in: `found` pairs each hidden value's text (QUOTED_MIN+ characters) with its stand-in.
 * With `anyCase`, quotes in another case count too.
 */
export function hideQuoted(text: string, found: Array<[string, string]>, anyCase = false): string {
  return new QuoteIndex(found, anyCase).hide(text);
}

const fold = (t: string, anyCase: boolean): string => (anyCase && t.toLowerCase().length === t.length ? t.toLowerCase() : t);

/**
 * Hidden texts indexed by their first `head` characters (QUOTED_MIN unless told), so a message is
 * searched in one pass over it however many values are hidden (a program catching errors in a
 * loop asks for every one of them). Each is tagged with what stands for it: its stand-in, or its
 * origin. A text shorter than `head` is never found.
 */
export class QuoteIndex<T = string> {
  private readonly heads = new Map<string, Bucket<T>>();
  private added = 0;

  constructor(
    found: Array<[string, T]>,
    private readonly anyCase: boolean,
    private readonly head = QUOTED_MIN,
  ) {
    this.addAll(found);
  }

  /** Indexes many texts together: each bucket they go to is sorted once, not each text put in its place in turn. */
  addAll(found: ReadonlyArray<readonly [string, T]>): void {
    const touched = new Set<Bucket<T>>();
    for (const [quoted, shown] of found) this.put(quoted, shown, touched);
    for (const b of touched) {
      b.sorted.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[2] - y[2]));
      if (b.sorted.length > SCANNED) {
        b.exact = undefined;
        b.lengths = undefined;
        b.cuts = undefined;
        for (const e of b.sorted) indexed(b, e);
      }
    }
  }

  /** Indexes a hidden text; in any case (a tool's message) reversed too, from ECHO_MIN characters: a tool may send an argument back reversed. */
  add(quoted: string, shown: T): void {
    this.put(quoted, shown);
  }

  /** Indexes a text in its place, or, with `bulk`, at the end of its bucket, which is noted there to be sorted. */
  private put(quoted: string, shown: T, bulk?: Set<Bucket<T>>): void {
    this.insert(fold(quoted, this.anyCase), shown, bulk);
    if (this.anyCase && quoted.length >= ECHO_MIN) this.insert(fold(reversed(quoted), true), shown, bulk);
  }

  private insert(s: string, shown: T, bulk: Set<Bucket<T>> | undefined): void {
    if (s.length < this.head) return;
    const head = s.slice(0, this.head);
    let b = this.heads.get(head);
    if (b === undefined) this.heads.set(head, (b = { sorted: [] }));
    const entry: Entry<T> = [s, shown, this.added++];
    if (bulk !== undefined) {
      b.sorted.push(entry);
      bulk.add(b);
      return;
    }
    // In text order, the place found by halving (many values share a head, "user", "http").
    let lo = 0;
    let hi = b.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (b.sorted[mid][0] <= s) lo = mid + 1;
      else hi = mid;
    }
    b.sorted.splice(lo, 0, entry);
    if (b.exact !== undefined) indexed(b, entry);
    else if (b.sorted.length > SCANNED) for (const e of b.sorted) indexed(b, e);
    b.cuts?.clear();
  }

  hide(this: QuoteIndex<string>, text: string): string {
    if (this.heads.size === 0) return text;
    const low = fold(text, this.anyCase);
    const dots = ellipses(text);
    let out = "";
    let from = 0;
    let i = 0;
    while (i + this.head <= text.length) {
      const hit = this.match(text, low, i, dots);
      if (hit === null) {
        i++;
        continue;
      }
      // A hidden text starting inside this one may reach past it (`"K7Z2Q9-`, a piece with the
      // quote before it, then the whole token): the stretch they cover together is hidden.
      let end = hit.end;
      for (let j = i + 1; j < end && j + this.head <= text.length; j++) {
        const next = this.match(text, low, j, dots);
        if (next !== null && next.end > end) end = next.end;
      }
      out += text.slice(from, i) + hit.shown;
      i = from = end;
    }
    return from === 0 ? text : out + text.slice(from);
  }

  /** The tag of the first hidden text that `text` quotes, whole or cut short (`…`, `...`) after at least `head` of its characters. */
  quote(text: string): T | undefined {
    if (this.heads.size === 0) return undefined;
    const low = fold(text, this.anyCase);
    const dots = ellipses(text);
    for (let i = 0; i + this.head <= text.length; i++) {
      const hit = this.match(text, low, i, dots);
      if (hit !== null) return hit.shown;
    }
    return undefined;
  }

  /** The tag of the longest hidden text that goes on past `text` (of `head`+ characters, folded as indexed): `text` is its start, cut short (see standsFor; `breaks`, compactForms'). */
  startOf(text: string, breaks: Breaks): T | undefined {
    const b = this.heads.get(text.slice(0, this.head));
    // A character no folded text holds: any that follows the start will do.
    const e = b === undefined ? undefined : cutAt(b, text, STAND_IN_OPEN);
    return e !== undefined && standsFor(text, e[0], breaks) ? e[1] : undefined;
  }

  /** The tag of a hidden text that `text` (of `head`+ characters) is the end of, indexed reversed (`add`'s, or the caller's own reversed forms; see standsFor). */
  endOf(text: string, breaks: Breaks): T | undefined {
    const b = this.heads.get(reversed(text.slice(-this.head)));
    const e = b === undefined ? undefined : cutAt(b, reversed(text), STAND_IN_OPEN);
    return e !== undefined && standsFor(text, e[0], breaks) ? e[1] : undefined;
  }

  /**
   * The hidden value quoted at `i`: its tag, where the quote ends (past its `…` or `...` when cut
   * short) and how much of it is kept. Of the texts quoted there, whole or cut short, the longest
   * (the first indexed of those as long), so one that holds another is replaced whole. Texts that
   * share their first characters are not compared one by one (16,000 ids `customer-1...` made
   * every `customer-` in a text 16,000 comparisons): a whole quote is looked up for each length
   * the bucket holds, a cut one in the sorted bucket, at the ellipses within reach (`dots`).
   */
  private match(text: string, low: string, i: number, dots: readonly number[]): { shown: T; end: number; kept: number; cut: boolean } | null {
    const b = this.heads.get(low.slice(i, i + this.head));
    if (b === undefined) return null;
    if (b.exact === undefined) return scanned(b.sorted, text, low, i, this.head);
    let best: Entry<T> | undefined;
    let kept = 0;
    let cut = 0;
    for (const n of b.lengths ?? []) {
      if (i + n > low.length) continue;
      const e = b.exact.get(low.slice(i, i + n));
      if (e !== undefined) {
        best = e;
        kept = n;
        break;
      }
    }
    const reach = i + (b.lengths?.[0] ?? 0);
    for (let k = firstAtLeast(dots, i + this.head); k < dots.length && dots[k] < reach; k++) {
      const p = dots[k];
      const e = cutAt(b, low.slice(i, p), low[p]);
      if (e !== undefined && (best === undefined || before(e, best))) {
        best = e;
        kept = p - i;
        cut = text[p] === "…" ? 1 : 3;
      }
    }
    return best === undefined ? null : { shown: best[1], end: i + kept + cut, kept, cut: cut > 0 };
  }
}

/** Buckets of up to this many texts are scanned; larger ones are indexed by text and length. */
const SCANNED = 8;

/** Whether `a` is preferred over `b` where both are quoted: the longer, else the first indexed. */
const before = <T>(a: Entry<T>, b: Entry<T>): boolean => a[0].length > b[0].length || (a[0].length === b[0].length && a[2] < b[2]);

/** A small bucket's quote at `i`: each text compared in turn. */
function scanned<T>(texts: ReadonlyArray<Entry<T>>, text: string, low: string, i: number, head: number): { shown: T; end: number; kept: number; cut: boolean } | null {
  let best: { shown: T; end: number; kept: number; cut: boolean } | null = null;
  let chosen: Entry<T> | undefined;
  for (const e of texts) {
    const s = e[0];
    let n = head;
    while (n < s.length && low[i + n] === s[n]) n++;
    const cut = n === s.length ? 0 : text[i + n] === "…" ? 1 : text.startsWith("...", i + n) ? 3 : -1;
    if (cut >= 0 && (chosen === undefined || before(e, chosen))) {
      chosen = e;
      best = { shown: e[1], end: i + n + cut, kept: n, cut: cut > 0 };
    }
  }
  return best;
}

/** Adds a text to a large bucket's indexes. */
function indexed<T>(b: Bucket<T>, e: Entry<T>): void {
  b.exact ??= new Map();
  b.lengths ??= [];
  b.cuts ??= new Map();
  // The first of equal texts wins, as it does where a bucket is scanned.
  const had = b.exact.get(e[0]);
  if (had === undefined || e[2] < had[2]) b.exact.set(e[0], e);
  if (!b.lengths.includes(e[0].length)) b.lengths.splice(firstBelow(b.lengths, e[0].length), 0, e[0].length);
}

/** An indexed text: as searched for (folded), its tag, and the order it was indexed in. */
type Entry<T> = [string, T, number];

/** The texts of one head in text order; once there are more than SCANNED, also by text, their lengths (longest first) and the cut quotes looked up so far. */
interface Bucket<T> {
  sorted: Array<Entry<T>>;
  exact?: Map<string, Entry<T>>;
  lengths?: number[];
  cuts?: Map<string, Entry<T> | null>;
}

/**
 * The longest text (the first indexed of those as long) that begins with `prefix` and goes on
 * with another character than `next` (the ellipsis's own, where the quote stops): a quote cut
 * short after `prefix`. Remembered per prefix: prefixes as long cover parts of the bucket apart,
 * so all such look-ups together read each text at most once per length.
 */
function cutAt<T>(b: Bucket<T>, prefix: string, next: string): Entry<T> | undefined {
  const key = prefix + next;
  const known = b.cuts?.get(key);
  if (known !== undefined) return known ?? undefined;
  let lo = 0;
  let hi = b.sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (b.sorted[mid][0] < prefix) lo = mid + 1;
    else hi = mid;
  }
  let best: Entry<T> | undefined;
  for (let k = lo; k < b.sorted.length && b.sorted[k][0].startsWith(prefix); k++) {
    const e = b.sorted[k];
    if (e[0].length > prefix.length && e[0][prefix.length] !== next && (best === undefined || before(e, best))) best = e;
  }
  b.cuts?.set(key, best ?? null);
  return best;
}

/** Where each compact form (compactForms') had characters dropped: the lengths of its starts that end where the hidden text broke. */
export type Breaks = ReadonlyMap<string, ReadonlySet<number>>;

/**
 * Whether a start or an end of the hidden text `whole` (a compact form), cut with no ellipsis,
 * stands for it: when it holds a digit (a token's, a key's, an account number's), two thirds of
 * it, or it is cut inside a run of letters (a token's prefix that happens to hold no digit,
 * `ghp_RkWmZtQa`). Any start or end of 8+ letters did, and a tool given a hidden
 * `production-eu-west-1`, `alice.smith@example.com` or `customer-12345678` showed `production`,
 * `example.com` and `customer` as stand-ins (9 of 10 ordinary answers a helper tried).
 */
const standsFor = (piece: string, whole: string, breaks: Breaks): boolean =>
  /\d/.test(piece) || piece.length * 3 >= whole.length * 2 || breaks.get(whole)?.has(piece.length) !== true;

/** Where `…` or `...` begins in `text`, in order. */
function ellipses(text: string): number[] {
  const at: number[] = [];
  if (!text.includes("…") && !text.includes("...")) return at;
  for (let p = 0; p < text.length; p++) if (text[p] === "…" || text.startsWith("...", p)) at.push(p);
  return at;
}

/** The first index of ascending `xs` holding `x` or more. */
function firstAtLeast(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index of descending `xs` holding less than `x`. */
function firstBelow(xs: readonly number[], x: number): number {
  let k = 0;
  while (k < xs.length && xs[k] >= x) k++;
  return k;
}

/**
 * Whether a builtin that builds a collection holds its argument `i` as one of its values, as it is
 * (`(assoc req :creds creds)`, `(vector region creds)`), rather than copying its entries in (the
 * collection `conj` or `assoc` adds to, what `merge` or `into` pour in): a hidden collection held so
 * keeps its own mark, as in a literal `{:creds creds}`, and its public neighbours stay shown (they
 * were derived, and every equal string and small number of the evaluation hidden with them). Work
 * in proportion to the arguments: a vector's added elements are its last ones.
 */
function heldAsIs(role: number, args: readonly Value[], i: number, r: Value): boolean {
  if ((role & (VALUES | ADDS)) === 0 || (i === 0 && (role & VALUES) === 0)) return false;
  const a = args[i];
  const k = args[i - 1];
  if (r instanceof Vec) {
    if ((role & ADDS) !== 0 && (role & CONJ) === 0) return typeof k === "number" && r.get(k) === a;
    for (let j = 1; j <= args.length && j <= r.size; j++) if (r.get(r.size - j) === a) return true;
    return false;
  }
  if (isSet(r)) return (role & CONJ) !== 0 && r.has(a);
  if (!isMap(r) || i === 0 || (role & CONJ) !== 0) return false;
  return r.get(k) === a || (k instanceof Vec && r.getIn((k as Vec<Value>).toArray()) === a);
}

/** The mark of a value too deep, or made past too much marking, to tell whether it holds a marked one. */
const TOO_DEEP: Origin = { path: "hidden context", root: "hidden context", derived: true };

/** `Marks.holds` of a collection of public context or of the program's constants whose own collections are not yet noted as such (`open`). */
const PUBLIC: Origin = { path: "public", root: "public", derived: false };

/** The fewest characters of a hidden string a tool's result is searched for inside longer text. */
export const ECHO_MIN = 8;

/** Each builtin as programs that may meet hidden context run it (`Marks.builtin`), made once. */
const WRAPPED = new Map<Builtin, Builtin>();

/** The marks of the evaluation running now, when it has marked anything. */
function current(): Marks | null {
  const m = runMarks() as Marks | null;
  return m === null || m.isEmpty ? null : m;
}

/** The marks of one evaluation. */
export class Marks {
  private readonly objs = new WeakMap<object, Origin>();
  private readonly prims = new Map<string | number, Origin>();
  /** How many numbers `prims` holds: arithmetic on plain numbers skips the search while none is. */
  private numbers = 0;
  /** Collections found to hold a marked value (its origin) or none (null, or PUBLIC: of public context, its collections not yet noted). */
  private readonly holds = new WeakMap<object, Origin | null>();
  /** The numbers of marked floats (marked by identity), for messages that quote them. */
  private readonly floats = new Map<number, Origin>();
  /**
   * `prims`' and `floats`' keys in the order first marked: `messageIndex` indexes the ones marked
   * since it last looked without walking the others again (per caught error, that was quadratic).
   */
  private readonly primOrder: Array<string | number> = [];
  private readonly floatOrder: number[] = [];
  /** Marked strings of ECHO_MIN+ characters, in the order they were marked, and how many of them `echoes` indexes. */
  private readonly echoTexts: string[] = [];
  private echoes: { seen: number; index: QuoteIndex<string> } | undefined;
  /** What error messages are searched for, as written and in any case (`messageIndex`). */
  private readonly indexes: Array<MessageIndex | undefined> = [];
  /** Hidden collections whose small values are marked: the program has taken something out of them. */
  private readonly opened = new WeakSet<object>();
  private empty = true;
  /** Nodes left to visit marking derived values; once spent, every value counts as marked (`originOf`). */
  private budget = WALK_BUDGET;
  /** What the run's tools were handed (`handed`): earlier evaluations' first, in order, each text once. */
  private readonly handedTexts: HandedText[] = [];
  private readonly handedSeen = new Set<string>();
  /** Strings of ECHO_MIN+ characters read from hidden context as it held them and kept from earlier evaluations (`restore`), up to HIDDEN_TEXT_PARTS. */
  private readonly keptTexts: HandedText[] = [];

  /** Whether nothing has been marked yet. */
  get isEmpty(): boolean {
    return this.empty;
  }

  /**
   * Marks a value read from hidden context key `key`, every part with its own place. The walk is
   * work in proportion to the value's size: each part spends a unit of `budget` (fuel and clock),
   * or of the run in progress without one.
   */
  hidden(key: string, v: Value, budget?: Budget): void {
    this.place(v, `data/${key}`, `data/${key}`, budget);
  }

  /**
   * Notes a value read from public context as holding no mark: what it holds is public, whatever
   * hidden value a string or number of it equals (a plan name "pro" beside a hidden plan "pro", a
   * qty of 3 beside a hidden 3), so it prints as it is and what is computed from it is not derived
   * (before, every plan name and order total was hidden); an equal value taken out of it is still
   * a stand-in, marked by value. Values are immutable: no hidden one is ever put into it. Its
   * collections are noted as the program reaches them (`open`), not all at the read.
   */
  public(v: Value): void {
    if (v !== null && typeof v === "object") this.publicPart(v);
  }

  /**
   * Marks what public context `v` holds of hidden context whole (`found`: the texts the search of
   * it found, whose hidden keys the search read and marked). Its strings are marked by value so,
   * but a keyword is not: the public copy printed `{:K7Z2Q9-B3M8X4-W5R2 {...}}` (sessions keyed
   * by the token). One a found text names is marked, unless it reads as a field name, as a hidden
   * map's key is (placeKey).
   */
  shared(v: Value, found: readonly SentBack[]): void {
    const names = new Map<string, Origin>();
    for (const [text, o] of found) if (typeof text === "string" && !isFieldName(text)) names.set(text, o);
    if (names.size === 0) return;
    const seen = new Set<object>();
    const walk = (x: Value, depth: number): void => {
      if (x === null || typeof x !== "object" || depth > 64 || seen.has(x)) return;
      seen.add(x);
      if (x instanceof Keyword) {
        const o = names.get(x.name);
        if (o !== undefined && !this.objs.has(x)) this.named(x, o);
        return;
      }
      const kids = children(x);
      if (kids !== null) for (const k of kids) walk(k, depth + 1);
    };
    walk(v, 0);
  }

  private publicPart(v: object): void {
    if ((v instanceof Vec || isMap(v) || isSet(v)) && !this.holds.has(v)) this.holds.set(v, PUBLIC);
  }

  private place(v: Value, path: string, root: string, budget: Budget | undefined): void {
    if (v === null || typeof v === "boolean") return;
    if (budget === undefined) chargeIfRunning(1);
    else budget.step();
    const o: Origin = { path, root, derived: false };
    if (typeof v !== "object") {
      // A small value read whole (data/_pin) is taken out as it is read; a small one inside a
      // collection is marked once something is taken out of the collection (open).
      if (!markable(v) && !(path === root && small(v))) return;
      const had = this.prims.get(v);
      if (had === undefined || had.derived) this.setPrim(v, o);
      this.empty = false;
      return;
    }
    if (this.objs.has(v)) return;
    this.objs.set(v, o);
    if (v instanceof LFloat) this.markFloat(v.v, o);
    this.empty = false;
    if (v instanceof Vec) {
      let i = 0;
      for (const x of v as Vec<Value>) this.place(x, `${path} ${i++}`, root, budget);
    } else if (isMap(v)) {
      for (const [k, x] of v) {
        const at = keyText(k);
        if (at === "…") this.placeKey(k, o, budget);
        this.place(x, `${path} ${at}`, root, budget);
      }
    } else if (isSet(v)) {
      for (const x of v) this.place(x, path, root, budget);
    }
  }

  private markFloat(f: number, o: Origin): void {
    if (!this.floats.has(f)) this.floatOrder.push(f);
    this.floats.set(f, o);
  }

  /** Marks a hidden map's key that is not a field name (`:alice@example.com`) with the map's place, its name by value too, for messages that quote it. */
  private placeKey(k: Value, o: Origin, budget: Budget | undefined): void {
    if (!(k instanceof Keyword)) return this.place(k, o.path, o.root, budget);
    if (!this.objs.has(k)) this.objs.set(k, o);
    const had = this.prims.get(k.name);
    if ((markable(k.name) || small(k.name)) && (had === undefined || had.derived)) this.setPrim(k.name, o);
  }

  /** The mark of a value itself (not of what it holds), if any. */
  originOf(v: Value): Origin | undefined {
    if (v === null || typeof v === "boolean") return undefined;
    const o = typeof v === "object" ? this.objs.get(v) : this.prims.get(v);
    // Past the marking budget what is derived is no longer followed: everything counts as marked.
    return o ?? (this.budget < 0 ? TOO_DEEP : undefined);
  }

  /**
   * Small strings and numbers are not marked by value when a collection holding one is marked:
   * "a", 3 and 42 are in too much ordinary output. They are marked (`pin`) when the program takes
   * them out: a piece of a marked string (its characters, two at a time), a number computed from
   * a marked one, and every small value of a hidden collection the program takes anything out
   * of. Past that point equal text in the same evaluation is shown as a stand-in too, which errs
   * towards hiding.
   */
  private setPrim(v: string | number, o: Origin): void {
    if (!this.prims.has(v)) {
      this.primOrder.push(v);
      if (typeof v === "number") this.numbers++;
      else if (v.length >= ECHO_MIN) this.echoTexts.push(v);
    }
    this.prims.set(v, o);
  }

  private pin(v: string | number, o: Origin): void {
    if (!this.prims.has(v)) this.setPrim(v, o);
    this.empty = false;
  }

  /**
   * Told of a value the program took out of another without a builtin (runtime.ts `took`), by
   * `key` when it was looked up by one: what a table holds under a hidden key (a character of a
   * token, a keyword made of one, a digit read from one) tells the key, as `(get t c)` does.
   */
  took(from: Value, part: Value, key?: Value): void {
    if (this.empty || from === null || typeof from === "boolean") return;
    if (key !== undefined && key !== null && typeof key !== "boolean" && part !== null && typeof part !== "boolean" && this.originOf(part) === undefined) {
      const o = this.find(key);
      if (o !== undefined) {
        if (small(part)) this.pin(part, derivedOf(o));
        else this.derive(part, o);
      }
    }
    if (typeof from === "object") {
      this.open(from);
    } else if (typeof from === "string" && typeof part === "string") {
      const o = this.prims.get(from);
      // A longer part is marked too: an error message may quote it (a regex's unreadable part).
      if (o !== undefined) {
        if (small(part)) this.pin(part, derivedOf(o));
        else this.derive(part, o);
      }
    }
  }

  /** Marks what a function made by a builtin returned as computed from it, when it is marked (it holds hidden values). */
  returned(f: Value, r: Value): void {
    if (this.empty || f === null || typeof f !== "object") return;
    const o = this.originOf(f);
    if (o === undefined || r === null || typeof r === "boolean") return;
    if (small(r)) this.pin(r, derivedOf(o));
    else if (this.originOf(r) === undefined) {
      this.derive(r, o);
      // What it was made with is out of sight (partial's arguments, constantly's value), kept from
      // an earlier turn too: the small values it hands back may be hidden ones, taken to be.
      this.pieces(r, derivedOf(o), 0, true);
    }
  }

  /** Marks what a builtin computed from what a function it was given returned (`(sum-by f xs)`), when that holds a mark. */
  builtFrom(parts: Value, whole: Value): void {
    const o = this.find(parts);
    if (o === undefined || whole === null || typeof whole === "boolean") return;
    if (small(whole)) this.pin(whole, derivedOf(o));
    else this.derive(whole, o);
  }

  /** Marks what a builtin ordered by `keys` (sort-by's result) as computed from the first key that was (`orderKey`): an order spells its keys. */
  orderedBy(keys: readonly Value[], whole: Value): void {
    if (this.empty || whole === null || typeof whole === "boolean") return;
    for (const k of keys) {
      const o = this.orderKey(k);
      if (o !== undefined) return this.derive(whole, o);
    }
  }

  /**
   * The mark of a key that orders a collection, when it was computed from hidden context or is a
   * hidden string or number marked by value: not one merely equal to a small value of hidden
   * context, or holding one ((juxt :region :qty) of a public row), marked by value once the
   * program opened the collection holding it: a public qty of 3 beside a hidden 3 would hide
   * every public list sorted by qty.
   */
  private orderKey(k: Value): Origin | undefined {
    const o = this.find(k);
    return o !== undefined && (o.derived || markable(k)) ? o : undefined;
  }

  /** Marks a function as holding hidden values once it keeps one (memoize's cache); the mark the cache keeps with it. */
  stored(holder: Value, part: Value): Origin | undefined {
    if (this.empty || holder === null || typeof holder !== "object") return undefined;
    // Not `keep`: its walk for keywords, at every call, would cost a cache of large values their size each time.
    const found = this.find(part);
    if (found === undefined) return undefined;
    if (!this.objs.has(holder)) this.objs.set(holder, derivedOf(found));
    return this.originOf(part) ?? derivedOf(found);
  }

  /**
   * Marks a value read back from a cache where it was kept with mark `o`, and the cache's
   * function: a later evaluation's marks never saw it kept, and a function defined before it
   * met hidden context is not kept as holding any.
   */
  recalled(holder: Value, part: Value, o: Origin): void {
    if (holder === null || typeof holder !== "object") return;
    if (this.originOf(part) === undefined) this.restore(part, o);
    if (!this.objs.has(holder)) this.objs.set(holder, derivedOf(o));
    this.empty = false;
  }

  /** The origin to keep with a definition leaving this evaluation, when it holds a mark. */
  keep(v: Value): Origin | undefined {
    const found = this.find(v);
    return found === undefined ? undefined : this.kept(v, this.originOf(v) ?? { ...found, path: found.root, derived: true });
  }

  /**
   * Marks the small values of a hidden collection (read from context), each with its place, and
   * of a derived vector or set: which of its values come first was computed from hidden context
   * ((first (drop d xs)) tells d), or of a derived sorted map (hidden keys ordered it). Not another
   * derived map's: a record's fields are what it holds, not what chose it, and pinning them would
   * hide every equal number in the evaluation.
   */
  private open(v: object, depth = 0): void {
    if (this.opened.has(v) || depth > 64) return;
    const o = this.objs.get(v);
    if (o === undefined) {
      const h = this.holds.get(v);
      if (h === PUBLIC || (h === undefined && isLiteral(v))) {
        // A builtin or a form may hand its collections on (filter keeps the rows): public too.
        this.holds.set(v, null);
        const each = (x: Value): void => this.public(x);
        if (isMap(v)) v.forEach(each);
        else if (v instanceof Vec || isSet(v)) for (const x of v as Iterable<Value>) each(x);
      }
      return;
    }
    if (o.derived && !(v instanceof Vec || isSet(v) || sortOrder(v as Value) !== undefined)) return;
    this.opened.add(v);
    const each = (x: Value, path: string): void => {
      if (x !== null && typeof x === "object") this.open(x, depth + 1);
      else if (small(x)) this.pin(x, o.derived ? o : { path, root: o.root, derived: false });
    };
    if (v instanceof Vec) {
      let i = 0;
      for (const x of v as Vec<Value>) each(x, `${o.path} ${i++}`);
    } else if (isMap(v)) {
      for (const [k, x] of v) each(x, `${o.path} ${keyText(k)}`);
    } else if (isSet(v)) {
      for (const x of v) each(x, o.path);
    }
  }

  /**
   * Marks the small strings in a value built from a marked string's characters (`(vec tok)`),
   * as pieces of it; with `all`, its small numbers and keywords too (a marked value kept from an
   * earlier evaluation, where which of them were marked is not kept).
   */
  private pieces(v: Value, o: Origin, depth: number, all = false, seen?: Map<object, number>, only?: ReadonlySet<string | number>): void {
    if (typeof v === "string" || (all && typeof v === "number")) {
      if (small(v) && (only === undefined || only.has(v))) this.pin(v, o);
      return;
    }
    if (v === null || typeof v !== "object" || depth > 64 || --this.budget < 0) return;
    if (v instanceof Keyword) {
      // A field name is the data's shape, shared by name with every map that has it (`:id` in the
      // context's rows): only one the origin names as made from hidden text is marked.
      if (all && (!isFieldName(v.name) || (o.keywords?.includes(v.name) ?? false))) {
        if (!this.objs.has(v)) this.named(v, o);
        if (small(v.name)) this.pin(v.name, o);
      }
      return;
    }
    // A kept function hands back the small values it closes over (a PIN, two characters of a token).
    if (v instanceof Closure && !all) return;
    // A part met again in one walk is walked once (a value sharing its parts unfolds past any
    // budget; functions made by letfn close over each other), unless met nearer the top this time,
    // where more of it is within reach.
    const at = seen?.get(v);
    if (at !== undefined && at <= depth) return;
    (seen ??= new Map()).set(v, depth);
    const kids = children(v);
    if (kids !== null) for (const x of kids) this.pieces(x, o, depth + 1, all, seen, only);
  }

  /** The mark of a value or of anything it holds (functions: what they close over). */
  find(v: Value, depth = 0): Origin | undefined {
    if (this.empty) return undefined;
    const own = this.originOf(v);
    if (own !== undefined || v === null || typeof v !== "object") return own;
    const known = this.holds.get(v);
    if (known !== undefined) return known === PUBLIC ? undefined : (known ?? undefined);
    if (isLiteral(v)) {
      this.publicPart(v);
      return undefined;
    }
    // Nested past what is searched: taken to hold a mark rather than remembered as clean.
    if (depth > 64) return TOO_DEEP;
    const kids = children(v);
    let found: Origin | undefined;
    if (kids !== null) {
      for (const x of kids) {
        found = this.find(x, depth + 1);
        if (found !== undefined) break;
      }
    }
    this.holds.set(v, found ?? null);
    return found;
  }

  /** Marks a value, and all it holds, as derived from `from`. */
  derive(v: Value, from: Origin): void {
    this.mark(v, derivedOf(from), 0);
  }

  private mark(v: Value, o: Origin, depth: number): void {
    if (v === null || typeof v === "boolean") return;
    if (typeof v !== "object") {
      if (markable(v) && !this.prims.has(v)) {
        this.setPrim(v, o);
        this.empty = false;
      }
      return;
    }
    // Keywords are shared by name: a field name inside a derived collection (`:plan`) is its
    // shape, and marking it would hide that name everywhere in the evaluation; not one made
    // from a hidden string (`(keywordize-keys {tenant 1})`, or one a kept value's origin names).
    if (this.objs.has(v) || (depth > 0 && v instanceof Keyword && isFieldName(v.name) && !this.prims.has(v.name) && !(o.keywords?.includes(v.name) ?? false))) return;
    if (v instanceof Keyword || v instanceof Regex) return this.named(v, o);
    this.objs.set(v, o);
    if (v instanceof LFloat) this.markFloat(v.v, o);
    this.empty = false;
    if (depth > 64 || --this.budget < 0) return;
    const kids = children(v);
    if (kids !== null) for (const x of kids) if (--this.budget >= 0) this.mark(x, o, depth + 1);
  }

  /** Marks a keyword or a regex computed from hidden context, its text by value too: an error message quotes one by its text (`:name`, `#"source"`). */
  private named(v: Keyword | Regex, o: Origin): void {
    this.objs.set(v, o);
    const text = v instanceof Keyword ? v.name : v.source;
    if (markable(text) && !this.prims.has(text)) this.setPrim(text, o);
    // A short one too: a message quotes it where the printed value would show a stand-in.
    else if (small(text)) this.pin(text, o);
    this.empty = false;
  }

  /** Opens the hidden collections among a builtin's arguments before it runs (it may hand their values to a function). */
  private before(args: Value[]): void {
    if (this.empty) return;
    for (const a of args) this.opening(a);
    this.handing(args);
  }

  /**
   * Pins the characters of a marked string a builtin is given with a function ((map f tok)): it
   * hands them to the function, which may read a digit out of one or quote it in an error.
   */
  private handing(args: readonly Value[]): void {
    let fn = false;
    for (let i = 0; i < args.length && !fn; i++) fn = args[i] instanceof Fn;
    if (!fn) return;
    for (const a of args) {
      const o = typeof a === "string" ? this.prims.get(a) : undefined;
      if (o !== undefined) for (const c of a as string) this.pin(c, derivedOf(o));
    }
  }

  /** A builtin's result, marked when it was computed from a marked argument. */
  private after(role: number, args: Value[], r: Value): Value {
    if (this.empty || r === null || typeof r === "boolean") return r;
    if ((role & SHAPE) !== 0) return typeof r === "number" ? this.measured(args[0], r) : r;
    if ((role & SEARCH) !== 0 && typeof r === "number") return this.found(args[1], r);
    if (typeof r !== "object" && !markable(r)) return small(r) ? this.afterSmall(role, args, r) : r;
    // An element keeps its own mark, unless a marked string was cut or a marked index chose it.
    if ((role & SELECTOR) !== 0 && !args.some((a, i) => (typeof a === "string" || (i === 1 && typeof a === "number")) && this.originOf(a) !== undefined)) return r;
    if (this.originOf(r) !== undefined) return r;
    // A sorted collection's order is computed from its keys: given a hidden one, where its public
    // parts sit spells it ((into (sorted-map) [[c 100] ...]) lists 100 ... in the hidden order).
    const sorted = (role & BUILDS) !== 0 && sortOrder(r) !== undefined ? this.sortedBy(args, r as LMap | LSet) : undefined;
    if (sorted !== undefined) {
      this.derive(r, sorted);
      return r;
    }
    if ((role & BUILDS) !== 0 && !args.some((a, i) => (a instanceof Vec || isMap(a) || isSet(a) || ((role & APART) !== 0 && typeof a === "string")) && this.originOf(a) !== undefined && !heldAsIs(role, args, i, r)) && !((role & APART) !== 0 && args.some((a) => a instanceof Fn && this.find(a) !== undefined))) return r;
    let closure = false;
    for (const a of args) {
      if (a instanceof Fn && !(a instanceof Builtin)) closure = true;
      const o = this.find(a);
      if (o !== undefined) {
        const from = this.cutOrigin(role, args, o);
        this.derive(r, from);
        if (typeof a === "string" && typeof r === "object") this.pieces(r, derivedOf(from), 0);
        return r;
      }
    }
    // Made from unmarked arguments alone, the result holds no mark either: remembered, so the
    // next call over it does not walk it again ((reduce conj [] xs) walked every prefix). Not
    // when a function other than a builtin took part: a closure, or one a builtin made of one
    // ((comp f str), (partial f 1), a transducer), may read a marked definition it does not close over.
    if (!closure && typeof r === "object") this.holds.set(r, null);
    return r;
  }

  /**
   * The mark of a key a builtin was given that the sorted collection it built holds: one added
   * (`assoc`'s key, `conj`'s element or entry, the keys of what `into` or `merge` pour in), not
   * those of the collection added to, whose own marks `after` follows. Work in proportion to
   * what was given.
   */
  private sortedBy(args: readonly Value[], r: LMap | LSet): Origin | undefined {
    const map = isMap(r);
    const held = (k: Value): Origin | undefined => (r.has(k) ? this.orderKey(k) : undefined);
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (i === 0 && (isMap(a) || isSet(a))) continue;
      // The argument itself (conj's element), or what it holds (into's, merge's).
      let o = held(a);
      if (o !== undefined) return o;
      if (isMap(a)) {
        for (const k of a.keys()) if ((o = held(k)) !== undefined) return o;
      } else if (a instanceof Vec || isSet(a)) {
        for (const x of a as Iterable<Value>) if ((o = held(map && x instanceof Vec ? (x.get(0) as Value) : x)) !== undefined) return o;
      }
    }
    return undefined;
  }

  /** A size: shown, unless what was measured is public text a hidden needle cut (`Origin.cut`), whose length is where the needle is. */
  private measured(v: Value, r: number): number {
    const o = v === null || typeof v === "boolean" ? undefined : typeof v === "object" ? this.objs.get(v) : this.prims.get(v);
    if (o?.cut === true) {
      if (small(r)) this.pin(r, o);
      else this.derive(r, o);
    }
    return r;
  }

  /** Where text was found, marked by what was looked for, not by where it was looked (a position, as a count is). */
  private found(needle: Value, r: number): Value {
    const o = this.find(needle);
    if (o !== undefined) {
      if (small(r)) this.pin(r, derivedOf(o));
      else this.derive(r, o);
    }
    return r;
  }

  /**
   * A small result computed from a marked value is marked: a piece of a marked string (a
   * character, a cut of two, a number read from it), the text of a marked number, a number
   * computed from one, a string or number computed from a collection holding one (joined
   * characters, a sum). Not marked: a position or length of a marked string (counts and
   * searches are decided in `after`); and an element a selector takes out keeps its own mark.
   */
  private afterSmall(role: number, args: Value[], r: string | number): Value {
    if (typeof r === "number" && this.numbers === 0 && plainNumbers(args)) return r;
    if (this.prims.has(r)) return r;
    const parse = (role & PARSER) !== 0;
    for (const a of args) {
      if (a === null || typeof a === "boolean") continue;
      let o: Origin | undefined;
      if (typeof a === "object") {
        if ((role & SELECTOR) === 0) o = this.find(a);
      } else if (typeof r === "string" || typeof a === "number" || parse) {
        o = this.prims.get(a);
      }
      if (o !== undefined) {
        this.pin(r, derivedOf(this.cutOrigin(role, args, o)));
        return r;
      }
    }
    return r;
  }

  /** The mark of what a builtin computed from `o`: `Origin.cut` when it is a cutter that cut public text there, or text cut that way before (a match may be the whole text). */
  private cutOrigin(role: number, args: readonly Value[], o: Origin): Origin {
    // Whether the collection is public is not asked: one holding an element equal to the hidden
    // bound (the character of a token, in a set of the alphabet) holds its mark, and is all
    // marked when built after it was.
    if ((role & BOUNDS) !== 0) return args.some((a, i) => i > 0 && this.find(a) !== undefined) ? { path: o.root, root: o.root, derived: true, cut: true } : o;
    if ((role & CUTS) === 0) return o;
    const text = args[(role & CUTS_SECOND) !== 0 ? 1 : 0];
    if (typeof text !== "string") return o;
    const t = this.find(text);
    return t === undefined || t.cut === true ? { path: o.root, root: o.root, derived: true, cut: true } : o;
  }

  /**
   * The builtin as a program that may meet hidden context runs it: its results carry the marks
   * of its arguments, and an output builtin shows marked arguments as stand-ins. The marks are
   * those of the evaluation running at the call (`run.marks`), not of the one that compiled it:
   * a function kept from an earlier turn marks what it computes in the turn that calls it.
   */
  static builtin(b: Builtin): Builtin {
    let w = WRAPPED.get(b);
    if (w !== undefined) return w;
    const d = b.def;
    const name = d.name;
    const fn = d.fn;
    const { f1, f2 } = d;
    const fast = !INLINED.has(name);
    const role = roleOf(name);
    const def: BuiltinDef = SINKS.has(name)
      ? {
          ...d,
          f1: undefined,
          f2: undefined,
          fn: (args) => {
            const m = current();
            if (m === null) return fn(args);
            // Printed into (with-out-str ...), the text is the program's own (a tool may be sent it):
            // the real values, and the string it makes is marked as computed from them.
            const c = run.captured;
            if (c === null) return fn(args.map((a) => m.hide(a)));
            if (c.hidden === null) for (let i = 0; i < args.length && c.hidden === null; i++) if (m.find(args[i]) !== undefined) c.hidden = args[i];
            return fn(args);
          },
        }
      : {
          ...d,
          f1:
            fast && f1 !== undefined
              ? (a) => {
                  const m = current();
                  return m === null ? f1(a) : m.after(role, [a], f1(m.opening(a)));
                }
              : undefined,
          f2:
            fast && f2 !== undefined
              ? (a, b) => {
                  const m = current();
                  if (m === null) return f2(a, b);
                  const args = [a, b];
                  m.handing(args);
                  return m.after(role, args, f2(m.opening(a), m.opening(b)));
                }
              : undefined,
          fn: (args) => {
            const m = current();
            if (m === null) return fn(args);
            m.before(args);
            return m.after(role, args, fn(args));
          },
          suspendable:
            d.suspendable === undefined
              ? undefined
              : (args) => {
                  const m = current();
                  if (m === null) return (d.suspendable as NonNullable<BuiltinDef["suspendable"]>)(args);
                  m.before(args);
                  const r = (d.suspendable as NonNullable<BuiltinDef["suspendable"]>)(args);
                  return r instanceof Promise ? r.then((x) => m.after(role, args, x)) : m.after(role, args, r);
                },
        };
    w = new Builtin(def);
    WRAPPED.set(b, w);
    return w;
  }

  /** An argument, its hidden collection opened first. */
  private opening(a: Value): Value {
    if (a !== null && typeof a === "object") this.open(a);
    return a;
  }

  /**
   * A value with every marked part replaced by its stand-in (a string); the same value when nothing
   * in it is marked. `done` holds the collections already hidden in this walk, by the mark they were
   * reached under: a part shared many times (a vector holding one vector twice, 40 levels deep, is
   * 2^40 leaves from 40 vectors) is hidden once and its copy reused, so the result shares as the value does.
   */
  hide(v: Value, inside?: Origin, depth = 0, done?: Map<Origin | undefined, Map<object, Value>>): Value {
    if (this.empty) return v;
    const own = this.originOf(v) ?? inside;
    // A boolean or nil has no mark of its own (too common to mark by value: every predicate gives
    // one), but inside a marked collection it is one of its parts, shown hidden like the others.
    if (v === null || typeof v !== "object" || v instanceof LFloat || v instanceof Keyword) {
      if (own === undefined) return v;
      if (v instanceof Keyword && inside !== undefined && this.originOf(v) === undefined) return v;
      return standIn(typeName(v), own);
    }
    if (own === undefined && this.find(v) === undefined) return v;
    if (depth > 64) return standIn(typeName(v), own ?? (this.find(v) as Origin));
    if (!(v instanceof Vec || isMap(v) || isSet(v))) {
      if (v instanceof Fn) return own === undefined ? v : standIn("function", own);
      return standIn(typeName(v), own ?? (this.find(v) as Origin));
    }
    done ??= new Map();
    let under = done.get(own);
    if (under === undefined) done.set(own, (under = new Map()));
    const known = under.get(v);
    if (known !== undefined) return known;
    const d = done;
    let out: Value;
    if (v instanceof Vec) out = Vec.fromArray((v as Vec<Value>).toArray().map((x) => this.hide(x, own, depth + 1, d)));
    else if (isMap(v)) out = this.hideMap(v, own, depth, d);
    else {
      // Stand-ins alike are numbered, as a map's keys are: a set would keep one of them.
      const shown = new Map<Value, number>();
      out = (v as LSet).map((x) => numbered(this.hide(x, own, depth + 1, d), x, shown));
    }
    under.set(v, out);
    return out;
  }

  /** A map with its marked parts replaced; hidden keys that would show alike are numbered, so no entry is lost. */
  private hideMap(m: LMap, own: Origin | undefined, depth: number, done: Map<Origin | undefined, Map<object, Value>>): LMap {
    const shown = new Map<Value, number>();
    return m.mapEntries(([k, x]) => [numbered(this.hide(k, own, depth + 1, done), k, shown), this.hide(x, own, depth + 1, done)]);
  }

  /** Marks a value, all it holds and its small values, as derived from what `from` holds (a tool's result computed from its hidden arguments). */
  taint(v: Value, from: Value): void {
    const o = derivedOf(this.find(from) ?? TOO_DEEP);
    if (small(v)) this.pin(v, o);
    this.derive(v, o);
    this.pieces(v, o, 0, true);
  }

  /** Marks the strings, numbers and keywords of a tool's result whose text is one of `parts` as derived from what `from` holds (a replayed answer's parts its saved record hid). */
  taintParts(v: Value, from: Value, parts: ReadonlySet<string>): void {
    const o = derivedOf(this.find(from) ?? TOO_DEEP);
    eachPart(v, (x) => {
      if (x instanceof Keyword) {
        if (parts.has(x.name)) this.named(x, o);
      } else if (parts.has(String(x))) this.pin(x, o);
    });
  }

  /**
   * Marks the strings, numbers and keys of a tool's result that echo a hidden value its arguments
   * held: equal to a hidden argument string in any case; quoting a hidden string of ECHO_MIN+
   * characters (`"token K7Z2Q9-B3M8X4 accepted"`); or holding a hidden argument's letters and
   * digits (ECHO_MIN+ of them) once case, separators and URL or `\u` escapes are set aside, forwards
   * or reversed (`"4111111111111111"` for `"4111 1111 1111 1111"`, the number 98765432 for
   * `"98765432"`, `alice.smith%40example.com`). A key is checked as its name (a batch answer keyed
   * by the emails it was given). Text equal to a hidden value that the tool was not given stays as
   * it is, unless the result sends hidden context back (`back`, found by `HiddenSearch` and read
   * then): a tool that kept a hidden value from an earlier evaluation, or holds it itself, sends
   * it back; those texts are searched for as the arguments' are, and the strings quoting a marked
   * one are marked as above.
   */
  echoed(args: Value, result: Value, back: readonly SentBack[] = NOTHING_SENT_BACK): void {
    if (this.empty || (back.length === 0 && this.find(args) === undefined)) return;
    const given = new Map<string, Origin>();
    const compact: Array<[string, Origin]> = [];
    const breaks = new Map<string, ReadonlySet<number>>();
    // Small values of hidden collections the tool was given: marked only if it sends them back.
    const smalls = new Map<string | number, Origin>();
    // The text of each marked value it was given (taken out of hidden context or computed from it),
    // however short: sent back as a key (a batch answer keyed by the CVVs or pins it was given,
    // `{:737 ...}`) or as another type (`"4242"`). Not the small values of a hidden collection
    // given whole, which the program never looked at: a filter's `"id"` would hide every `:id`.
    const texts = new Map<string, Origin>();
    const collect = (x: Value, inside: Origin | undefined, depth: number): void => {
      if (typeof x === "string" || typeof x === "number") {
        const o = this.prims.get(x);
        if (o !== undefined) {
          if (typeof x === "string" && x.length >= QUOTED_MIN) given.set(composed(x).toLowerCase(), o);
          texts.set(String(x), o);
          compactForms(String(x), o, compact, breaks);
        } else if (inside !== undefined && small(x)) smalls.set(x, inside);
      } else if (x !== null && typeof x === "object" && depth <= 64 && !(x instanceof Closure)) {
        const own = this.objs.get(x);
        const kids = children(x);
        if (kids !== null) for (const k of kids) collect(k, own !== undefined && !own.derived ? own : inside, depth + 1);
      }
    };
    collect(args, undefined, 0);
    // Hidden context it sent back without being given it: searched for as if it had been.
    for (const [value, o] of back) {
      const text = String(value);
      given.set(composed(text).toLowerCase(), o);
      compactForms(text, o, compact, breaks);
    }
    // Quotes of a marked string, whole or cut short (`token K7Z2Q9-B3M8… rejected`, as a tool's
    // error message is searched for them), and compact forms: each looked up by its first
    // ECHO_MIN characters at every place in the text, so a result is searched in one pass however
    // many strings are marked (compared one by one, 16,000 of them against 16,000 rows took 10 s).
    // The index is the evaluation's, brought up to date with what was marked since the last
    // call: a fan-out of calls does not index every marked string again for each.
    let quotes: QuoteIndex<string> | null = null;
    const quoted = (): QuoteIndex<string> => (quotes ??= this.echoIndex());
    const compacts = compact.length === 0 ? null : new QuoteIndex(compact, false, ECHO_MIN);
    const echo = (text: string): Origin | undefined => {
      if (text.length < QUOTED_MIN) return undefined;
      const low = composed(text).toLowerCase();
      const q = text.length >= ECHO_MIN ? quoted().quote(low) : undefined;
      const o = given.get(low) ?? (q === undefined ? undefined : this.prims.get(q));
      if (o !== undefined || compacts === null) return o;
      const c = compactText(text);
      // Or the start or end of one, cut with no ellipsis (a key's prefix as an API lists keys, a
      // column that truncates it, its last characters): the whole text is ECHO_MIN+ of its letters
      // and digits. The forms are indexed reversed too, so an end is a reversed form's start.
      const found = c.length >= ECHO_MIN ? (compacts.quote(c) ?? compacts.startOf(c, breaks) ?? compacts.endOf(c, breaks)) : undefined;
      return found ?? encodedIn(text, compacts);
    };
    eachPart(result, (x) => {
      if (x instanceof Keyword) {
        const o = this.objs.has(x) ? undefined : (texts.get(x.name) ?? echo(x.name));
        if (o !== undefined) this.named(x, derivedOf(o));
        return;
      }
      if (this.prims.has(x)) return;
      const pinned = smalls.get(x);
      if (pinned !== undefined) return this.pin(x, pinned);
      const sent = texts.get(String(x));
      if (sent !== undefined && (small(x) || markable(x))) return this.pin(x, derivedOf(sent));
      const o = echo(String(x));
      if (o !== undefined && (typeof x === "string" || markable(x))) this.setPrim(x, derivedOf(o));
    });
  }

  /** Marked strings of ECHO_MIN+ characters in lower case, each tagged with itself (its origin is looked up when found). */
  private echoIndex(): QuoteIndex<string> {
    const ix = (this.echoes ??= { seen: 0, index: new QuoteIndex<string>([], true, ECHO_MIN) });
    // Marked values are only ever added: only the new ones are indexed.
    if (ix.seen < this.echoTexts.length) {
      ix.index.addAll(this.echoTexts.slice(ix.seen).map((v) => [composed(v).toLowerCase(), v] as const));
      ix.seen = this.echoTexts.length;
    }
    return ix.index;
  }

  /** A tool's message with the hidden arguments it sends back, and the hidden context it sent back without them (`back`), rewritten as stand-ins (`hideRewritten`). */
  hideEchoes(args: Value, text: string, back: readonly SentBack[] = NOTHING_SENT_BACK): string {
    if (this.empty) return text;
    const given: Array<[string | number, string]> = [];
    eachPart(args, (x) => {
      if (x instanceof Keyword) return;
      const o = this.prims.get(x);
      if (o !== undefined) given.push([x, standIn(typeName(x), o)]);
    });
    // Named as the arguments name them when they hold it too (a hidden number is an integer there).
    for (const [v, o] of back) if (!given.some(([x]) => x === v)) given.push([v, standIn(typeName(v), o)]);
    return given.length === 0 ? text : hideRewritten(text, given);
  }

  /**
   * Text the interpreter wrote (an error message) with every marked string or number it quotes,
   * whole or cut short (`…`, `...`), as written or escaped (`\"`, `\n`), in any case with
   * `anyCase` (a tool's message), replaced by its stand-in. A string too short to search for
   * bare is replaced where it is quoted (`"K7Z"`) or names a keyword (`:K7Z`), a small number
   * where it stands alone (`index 123`).
   */
  hideText(text: string, anyCase = false): string {
    if (this.empty) return text;
    // A message that is a hidden string itself ((throw (ex-info piece {}))), however short.
    const whole = this.prims.get(text);
    if (whole !== undefined) return standIn("string", whole);
    const ix = this.messageIndex(anyCase);
    // Long quotes first: a short one replaced first may be the end of a long one (`"]\"2R5W…\"["`
    // ends with the quote `"["`), which would then go unrecognized. The short quotes and numbers
    // after it are looked for outside stand-ins only, which name places (`data/_users 12 :pin`).
    const long = ix.long.hide(text);
    const short = (t: string): string =>
      t
        .replace(SHORT_QUOTE, (q) => ix.quoted.get(q) ?? q)
        .replace(NUMBER, (n) => ix.numbers.get(n) ?? ix.floatNumbers.get(String(Number(n))) ?? n)
        .replace(SHORT_KEYWORD, (k, name: string) => {
          const bare = name.endsWith(":") ? name.slice(0, -1) : name;
          const shown = bare.length < QUOTED_MIN ? ix.keywords.get(bare) : undefined;
          return shown === undefined ? k : ":" + shown + name.slice(bare.length);
        });
    if (!long.includes(STAND_IN_OPEN)) return short(long);
    return long
      .split(STAND_INS)
      .map((part, i) => (i % 2 === 1 ? part : short(part)))
      .join("");
  }

  /**
   * A message about `at` (plain data: the value an output check's issue is about) with each marked
   * string of fewer than QUOTED_MIN characters it holds replaced, in any case, where the message
   * has it bare between characters other than letters and digits (a host's own message,
   * `not allowed: K7`). Too short to be looked for in any text, it is looked for in text about it.
   */
  hideBareIn(text: string, at: unknown): string {
    if (this.empty) return text;
    const found = new Map<string, string>();
    let budget = WALK_BUDGET;
    const walk = (x: unknown, depth: number): void => {
      if (--budget < 0 || depth > 64) return;
      if (typeof x === "string") {
        const o = x.length < QUOTED_MIN ? this.prims.get(x) : undefined;
        if (o !== undefined) found.set(x.toLowerCase(), standIn("string", o));
      } else if (Array.isArray(x)) {
        for (const v of x) walk(v, depth + 1);
      } else if (x !== null && typeof x === "object") {
        for (const v of Object.values(x)) walk(v, depth + 1);
      }
    };
    walk(at, 0);
    let out = text;
    for (const [low, shown] of found) {
      const bare = new RegExp(`(?<![\\p{L}\\p{N}])${low.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?![\\p{L}\\p{N}])`, "giu");
      out = out.replace(bare, () => shown);
    }
    return out;
  }

  /** What `hideText` looks for, brought up to date with what has been marked since it last looked. */
  private messageIndex(anyCase: boolean): MessageIndex {
    let ix = this.indexes[anyCase ? 1 : 0];
    if (ix === undefined) {
      ix = { prims: 0, floats: 0, quoted: new Map(), keywords: new Map(), numbers: new Map(), floatNumbers: new Map(), long: new QuoteIndex([], anyCase) };
      this.indexes[anyCase ? 1 : 0] = ix;
    }
    // Marked values are only ever added: only the new ones are indexed.
    for (; ix.prims < this.primOrder.length; ix.prims++) {
      const v = this.primOrder[ix.prims];
      const o = this.prims.get(v) as Origin;
      const shown = standIn(typeof v === "number" ? "number" : "string", o);
      const s = String(v);
      if (s.length >= QUOTED_MIN) {
        for (const q of quotedForms(s)) ix.long.add(q, shown);
      } else if (typeof v === "string") {
        // In quotes as JSON, the printer or a regex literal (#"\d") writes it, in backticks, or as a keyword's name.
        for (const q of quotedForms(v)) ix.quoted.set(`"${q}"`, shown);
        ix.quoted.set("`" + v + "`", shown);
        ix.keywords.set(v, shown);
      } else {
        ix.numbers.set(s, shown);
      }
      // A float is quoted as the printer writes it, which is not always JS's text (5e-7 prints as 5.0E-7).
      if (typeof v === "number" && Number.isFinite(v) && !Number.isInteger(v)) {
        const printed = formatFloat(v);
        if (printed !== s) ix.long.add(printed, shown);
      }
    }
    for (; ix.floats < this.floatOrder.length; ix.floats++) {
      const f = this.floatOrder[ix.floats];
      ix.floatNumbers.set(String(f), standIn("number", this.floats.get(f) as Origin));
    }
    return ix;
  }

  /** The marks of strings and numbers (by value), to send across a thread boundary; an object's mark travels with it (wire.ts). */
  primitives(): Array<[string | number, Origin]> {
    return [...this.prims];
  }

  /** How many strings and numbers have been marked so far: `primitivesFrom` takes up from there. */
  get primitiveCount(): number {
    return this.primOrder.length;
  }

  /** The marks of the strings and numbers marked after the first `from`, in the order they were marked: what another thread has not been told yet. */
  primitivesFrom(from: number): Array<[string | number, Origin]> {
    const out: Array<[string | number, Origin]> = [];
    for (let i = from; i < this.primOrder.length; i++) out.push([this.primOrder[i], this.prims.get(this.primOrder[i]) as Origin]);
    return out;
  }

  /**
   * Notes the strings and keys of QUOTED_MIN+ characters, and numbers of ECHO_MIN+ digits,
   * computed from hidden context that a tool is given as host data (a piece of a token,
   * `(subs tok 0 12)`), up to HANDED_KEPT: a tool may keep one and send it back in a later
   * evaluation, where it holds no hidden context's text to be found by (`HiddenSearch`: quoted
   * from ECHO_MIN characters, shorter ones sent back whole). What hidden context holds as it is is
   * searched for there already.
   */
  gave(args: unknown): void {
    if (this.empty) return;
    // The arguments as the tool gets them: plain data, bounded as the crossing was.
    eachHostPart(args, WALK_BUDGET, (x) => {
      if (typeof x === "bigint") return;
      const o = this.prims.get(x);
      // A number only as long as a hidden text searched for is: a count computed from hidden data is in too much later output.
      if (o !== undefined && o.derived && (typeof x === "string" || String(x).length >= ECHO_MIN)) this.hand(String(x), o);
    });
  }

  /** Takes over what earlier evaluations of the run handed its tools (`EvaluateOptions.handed`). */
  handedBefore(texts: readonly HandedText[]): void {
    for (const [text, o] of texts) this.hand(text, o);
  }

  private hand(text: string, o: Origin): void {
    if (text.length < QUOTED_MIN || this.handedTexts.length >= HANDED_KEPT || this.handedSeen.has(text)) return;
    this.handedSeen.add(text);
    this.handedTexts.push([text, o]);
  }

  /** What the run's tools have been handed, earlier evaluations' first: append-only, so a reader indexes only what is new. */
  get handed(): readonly HandedText[] {
    return this.handedTexts;
  }

  /** Gives a value the mark it had on the other side of a thread boundary. */
  carry(v: Value, o: Origin): void {
    if (v === null || typeof v === "boolean") return;
    if (typeof v === "object") this.objs.set(v, o);
    else this.setPrim(v, o);
    this.empty = false;
  }

  /** The origin to keep with a value defined from `o`: with the field-name keywords it holds that are marked (`Origin.keywords`). */
  kept(v: Value, o: Origin): Origin {
    const names = new Set<string>();
    const smalls = new Set<string | number>();
    let cut = o.cut === true;
    let budget = WALK_BUDGET;
    // Closures included: a kept function may hand back a keyword or a small value it closes over,
    // and which of those were hidden is not followed inside it: all are taken to be.
    const walk = (x: Value, hidden: boolean, depth: number): void => {
      if (--budget < 0 || x === null || typeof x === "boolean") return;
      if (x instanceof Keyword) {
        if (isFieldName(x.name) && this.objs.has(x)) names.add(x.name);
      } else if (typeof x !== "object") {
        if (small(x) && (hidden || this.prims.has(x))) smalls.add(x);
        if (this.prims.get(x)?.cut === true) cut = true;
      } else if (depth <= 64) {
        const own = this.objs.get(x);
        if (own?.cut === true) cut = true;
        const inside = hidden || x instanceof Closure || (own !== undefined && !own.derived);
        const kids = children(x);
        if (kids !== null) for (const k of kids) walk(k, inside, depth + 1);
      }
    };
    walk(v, false, 0);
    // One cut piece makes the whole kept value's lengths hidden: which parts were cut is not kept.
    const base = { path: o.path, root: o.root, derived: o.derived, ...(cut ? { cut } : {}) };
    // Only a derived value's small values are told apart when restored; past the walk's budget
    // which were hidden is not known: all are taken to be.
    return { ...base, ...(names.size > 0 ? { keywords: [...names] } : {}), ...(o.derived && budget >= 0 ? { smalls: [...smalls] } : {}) };
  }

  /** Marks a value kept in memory as it was marked when defined (`Origin` saved with it), spending `budget` as `hidden` does. */
  restore(v: Value, o: Origin, budget?: Budget): void {
    const from = this.echoTexts.length;
    if (small(v)) this.pin(v, o);
    else if (o.derived) {
      this.derive(v, o);
      this.pieces(v, o, 0, true, undefined, o.smalls === undefined ? undefined : new Set(o.smalls));
    }
    else if (o.path === o.root) this.hidden(o.root.slice("data/".length), v, budget);
    else this.place(v, o.path, o.root, budget);
    for (let i = from; i < this.echoTexts.length && this.keptTexts.length < HIDDEN_TEXT_PARTS; i++) {
      const text = this.echoTexts[i];
      const at = this.prims.get(text) as Origin;
      if (!at.derived) this.keptTexts.push([text, at]);
    }
  }

  /** What the run read from hidden context as it held it and kept from earlier evaluations: append-only, so a reader indexes only what is new. */
  get keptRead(): readonly HandedText[] {
    return this.keptTexts;
  }
}

/** `hidden`, the stand-in for `v`, numbered when one alike was shown before in the same map's keys or set (`shown` counts them). */
function numbered(hidden: Value, v: Value, shown: Map<Value, number>): Value {
  if (hidden === v || typeof hidden !== "string") return hidden;
  const n = (shown.get(hidden) ?? 0) + 1;
  shown.set(hidden, n);
  return n > 1 ? `${hidden.slice(0, -1)} (${n})${STAND_IN_CLOSE}` : hidden;
}

/** The mark of a value computed from one marked `o`. */
function derivedOf(o: Origin): Origin {
  return o.derived ? o : { path: o.root, root: o.root, derived: true };
}

/** Calls `visit` on each string, number and keyword in a value (inside functions' closed-over values only with `closures`), visiting at most WALK_BUDGET nodes. */
function eachPart(v: Value, visit: (x: string | number | Keyword) => void, closures = false): void {
  let budget = WALK_BUDGET;
  const walk = (x: Value, depth: number): void => {
    if (--budget < 0) return;
    if (typeof x === "string" || typeof x === "number" || x instanceof Keyword) visit(x);
    else if (x !== null && typeof x === "object" && depth <= 64 && (closures || !(x instanceof Closure))) {
      const kids = children(x);
      if (kids !== null) for (const k of kids) walk(k, depth + 1);
    }
  };
  walk(v, 0);
}

/** A text computed from hidden context that a tool was handed, with its origin (`Marks.gave`). */
export type HandedText = readonly [text: string, from: Origin];

/** A hidden text a tool's answer sent back though the tool was not given it (`sentBack` in evaluate.ts), with its origin. */
export type SentBack = readonly [value: string | number, from: Origin];
const NOTHING_SENT_BACK: readonly SentBack[] = [];

/** Texts a run's tools were handed that its later evaluations search tools' answers for: a bound on the work, as HIDDEN_TEXT_PARTS is. */
const HANDED_KEPT = 20_000;

/** Parts of one hidden context value searched for in a tool's answer: a bound on the work, whatever the value's size. */
const HIDDEN_TEXT_PARTS = 20_000;

/**
 * The texts of ECHO_MIN+ characters a hidden context value holds (strings, keys, numbers) as the
 * host gave it, within its first HIDDEN_TEXT_PARTS parts, which a tool's result or message is
 * searched for in any case (`QuoteIndex`), read by the program or not: a tool may send back what
 * an earlier evaluation gave it. A part that cannot be read (a getter that throws) ends the walk;
 * the program's own read reports it. Walked for each evaluation (1-2 ms at most): a host may renew
 * a token in place between an agent's turns.
 */
export function hiddenTexts(v: unknown): string[] {
  const out: string[] = [];
  try {
    eachHostPart(
      v,
      HIDDEN_TEXT_PARTS,
      (x, key) => {
        const text = String(x);
        // A key that reads as a field name is shown wherever the data is (`:password`), so the word is no secret of its own.
        if (text.length >= ECHO_MIN && !(key && typeof x === "string" && isFieldName(x))) out.push(text);
      },
      undefined,
      true,
    );
  } catch {
    // What was read before the part that could not be stays searched for.
  }
  return out;
}

/** Whether two lists of texts are the same, in order. */
export const sameTexts = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * Every text, number and key of host data, of any length, within `parts` parts: what a hidden
 * value is compared by when the host may have replaced it, or changed it in place.
 */
export function hostLeaves(v: unknown, parts = HIDDEN_TEXT_PARTS): string[] {
  const out: string[] = [];
  try {
    // Each collection's end too: a tool moving `last4` into the card beside it keeps the leaves in order, and makes a new record.
    eachHostPart(v, parts, (x, key) => out.push(`${key ? "key" : typeof x}:${String(x)}`), () => out.push(")"));
  } catch {
    // What was read before the part that could not be is compared.
  }
  return out;
}

/**
 * Calls `visit` on each string, number, bigint and key (`key` true) of host data: plain objects,
 * arrays, and the Maps and Sets a held result keeps, and of the program's values (a keyword by its
 * name), to 64 levels, visiting at most `parts` parts; `leave` after each collection whose parts were all visited.
 * With `everyKey`, the text keys of a map it is in when the parts end are visited still (not
 * their values): a hidden map keyed by 12,000 session tokens has its keys searched for.
 * One walk for the texts of hidden context, of what a tool is handed, and of a saved record.
 */
export function eachHostPart(v: unknown, parts: number, visit: (x: string | number | bigint, key: boolean) => void, leave?: () => void, everyKey = false): void {
  let left = parts;
  const walk = (x: unknown, depth: number): void => {
    if (--left < 0) return;
    if (typeof x === "string" || typeof x === "number" || typeof x === "bigint") visit(x, false);
    else if (x instanceof Keyword) visit(x.name, false);
    else if (x instanceof LFloat) visit(x.v, false);
    else if (typeof x === "object" && x !== null && depth <= 64) {
      // The worker's copy of the context holds the program's values: their entries, not their fields.
      if (isMap(x)) {
        for (const [k, y] of x) {
          if (left < 0 && !everyKey) return;
          if (k instanceof Keyword) visit(k.name, true);
          else walk(k, depth + 1);
          walk(y, depth + 1);
        }
      } else if (x instanceof Vec || isSet(x)) {
        for (const y of x as Iterable<unknown>) {
          if (left < 0) return;
          walk(y, depth + 1);
        }
      } else if (x instanceof Map) {
        for (const [k, y] of x as Map<unknown, unknown>) {
          if (left < 0 && !everyKey) return;
          if (typeof k === "string") visit(k, true);
          else walk(k, depth + 1);
          walk(y, depth + 1);
        }
      } else if (Array.isArray(x) || x instanceof Set) {
        for (const y of x as Iterable<unknown>) {
          if (left < 0) return;
          walk(y, depth + 1);
        }
      } else {
        for (const k of Object.keys(x)) {
          if (left < 0 && !everyKey) return;
          visit(k, true);
          walk((x as Record<string, unknown>)[k], depth + 1);
        }
      }
      leave?.();
    }
  };
  walk(v, 0);
}

/**
 * Hidden texts, each with a tag (what holds it), that a tool's answer is searched for, read by the
 * program or not (sent-back.ts): quoted in any case or reversed, from ECHO_MIN characters, a
 * shorter one only as a whole part. A failed call's message, one text, is also searched with
 * separators, case, accents and escapes set aside, and in its base64 and hex runs (a client's
 * `Authorization: Basic` header); a result's parts only in the base64 after `Basic ` (an echo
 * service answering with the request): decoding every digest and blob of a 50,000-row answer
 * cost every tool call of a run with hidden context a third more.
 */
export class HiddenSearch<T> {
  private readonly entries: Array<readonly [string, T]> = [];
  private readonly quotes = new QuoteIndex<number>([], true, ECHO_MIN);
  private readonly exact = new Map<string, number>();
  /** Every text, for a search of whole parts only (`findWhole`). */
  private readonly whole = new Map<string, number>();
  private compacts: { index: QuoteIndex<number>; seen: number } | undefined;

  constructor(found: ReadonlyArray<readonly [string, T]> = []) {
    this.add(found);
  }

  /** Whether there is nothing to search for. */
  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** How many texts it searches for. */
  get size(): number {
    return this.entries.length;
  }

  /** Texts to search for from now on. */
  add(found: ReadonlyArray<readonly [string, T]>): void {
    const quoted: Array<[string, number]> = [];
    for (const e of found) {
      const i = this.entries.push(e) - 1;
      if (!this.whole.has(e[0])) this.whole.set(e[0], i);
      if (e[0].length >= ECHO_MIN) quoted.push([e[0], i]);
      else this.exact.set(e[0], i);
    }
    this.quotes.addAll(quoted);
  }

  /** The texts a tool's result (its strings, keys' names and numbers) or message sends back, as searched for above. */
  find(result: Value | undefined, message?: string): Set<readonly [string, T]> {
    const found = new Set<readonly [string, T]>();
    const look = (text: string): void => {
      const i = text.length < ECHO_MIN ? this.exact.get(text) : (this.quotes.quote(text) ?? this.basicHeader(text));
      if (i !== undefined) found.add(this.entries[i]);
    };
    if (message !== undefined) {
      const i = message.length < ECHO_MIN ? undefined : (this.quotes.quote(message) ?? this.rewritten(message));
      if (i !== undefined) found.add(this.entries[i]);
    }
    if (result !== undefined) eachPart(result, (x) => look(x instanceof Keyword ? x.name : String(x)));
    return found;
  }

  /** The texts a value holds as whole parts: no quote inside longer text, nothing decoded (public context is searched so). */
  findWhole(v: Value): Set<readonly [string, T]> {
    const found = new Set<readonly [string, T]>();
    if (this.whole.size === 0) return found;
    eachPart(v, (x) => {
      const i = this.whole.get(x instanceof Keyword ? x.name : String(x));
      if (i !== undefined) found.add(this.entries[i]);
    });
    return found;
  }

  /**
   * A text found in the base64 after a part's `Basic ` (a request's credentials header, which an
   * echo or debugging service answers with): the one encoding of a result's parts read, only where
   * it is named.
   */
  private basicHeader(text: string): number | undefined {
    // Most parts name no `Basic`: told apart without the pattern.
    if (text.length < BASE64_MIN + 6 || (!text.includes("asic") && !text.includes("ASIC"))) return undefined;
    for (const [, run] of text.matchAll(BASIC_CREDENTIALS)) {
      const found = decodedEcho(run, base64Text, this.compactIndex());
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** A text found in a message once rewritten: compacted, or decoded from a base64 or hex run. */
  private rewritten(message: string): number | undefined {
    const forms = this.compactIndex();
    const c = compactText(message);
    return (c.length >= ECHO_MIN ? forms.quote(c) : undefined) ?? encodedIn(message, forms);
  }

  /** The texts' compact forms (`compactForms`), made when first needed and brought up to date with what was added since. */
  private compactIndex(): QuoteIndex<number> {
    const ix = (this.compacts ??= { index: new QuoteIndex<number>([], false, ECHO_MIN), seen: 0 });
    if (ix.seen < this.entries.length) {
      const forms: Array<[string, number]> = [];
      for (; ix.seen < this.entries.length; ix.seen++) compactForms(this.entries[ix.seen][0], ix.seen, forms);
      ix.index.addAll(forms);
    }
    return ix.index;
  }
}

/**
 * Text's letters and digits in lower case, its escapes (URL `%40` and `%C3%A9`, `\u0040`, HTML
 * `&amp;` and `&#233;`) read first: what an echo keeps of a value whatever it did to separators,
 * to case or to accents, read one character at a time as `compacted` reads a message.
 */
function compactText(text: string, breaks?: number[]): string {
  const t = text.replace(ESCAPE, escapeText);
  let out = "";
  for (let i = 0; i < t.length; ) {
    const code = t.charCodeAt(i);
    if (code < 0x80) {
      const low = code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
      if ((low >= 0x61 && low <= 0x7a) || (low >= 0x30 && low <= 0x39)) out += String.fromCharCode(low);
      // Where a separator was dropped: a start of the compact form ending there is a word of the text.
      else if (breaks !== undefined) noteBreak(breaks, out.length);
      i++;
    } else {
      const ch = String.fromCodePoint(t.codePointAt(i) as number);
      const f = foldedChar(ch);
      // A script written without spaces between words (東京都渋谷区神南…) may end a word at any of its characters.
      const unspaced = breaks !== undefined && UNSPACED.test(f);
      if (breaks !== undefined && (f === "" || unspaced)) noteBreak(breaks, out.length);
      out += f;
      if (unspaced) breaks?.push(out.length);
      i += ch.length;
    }
  }
  return out;
}

/** Text composed (NFC): written decomposed (`e` and U+0301 for `é`), it is the same text, and sent back so it is an echo. */
function composed(text: string): string {
  return NON_ASCII.test(text) ? text.normalize("NFC") : text;
}

/** Characters beyond ASCII as `foldedChar` reads them, kept as read (a text holds few distinct ones), up to FOLDS_KEPT. */
const folds = new Map<string, string>();
const FOLDS_KEPT = 4096;

/**
 * The letters and digits of one character beyond ASCII, case and accents set aside. Case is folded
 * by upper-casing, then lower-casing (`ß` as `ss`, a final `ς` as `σ`). Accents are combining marks
 * once it is decomposed, and dropped as separators are: `é` and `e` with U+0301 (decomposed, as
 * macOS and some databases write text) read alike, and as `e`, as a search that folds accents sends
 * it back; a Hangul syllable, which decomposes into letters, is composed again. Compatibility forms
 * read as the letters they stand for (full-width `ｓ` as `s`, `ﬁ` as `fi`, `™` as `tm`), as a tool
 * that normalizes its input (NFKC) sends them back.
 */
function foldedChar(ch: string): string {
  let f = folds.get(ch);
  if (f === undefined) {
    f = ch.toUpperCase().toLowerCase().normalize("NFKD").replace(NOT_ALNUM, "").toLowerCase().normalize("NFC");
    if (folds.size >= FOLDS_KEPT) folds.clear();
    folds.set(ch, f);
  }
  return f;
}

/**
 * One escaped character: a URL's UTF-8 bytes of one character (`%C3%A9`), an ASCII-only JSON
 * writer's surrogate pair (`\ud835\udc00`), one escape (`%40`, `\u00e9`), or an HTML character
 * reference (`&amp;`, `&#233;`, `&#xe9;`).
 */
const ESCAPE = /%[cCdD][0-9A-Fa-f]%[89abAB][0-9A-Fa-f]|%[eE][0-9A-Fa-f](?:%[89abAB][0-9A-Fa-f]){2}|%[fF][0-7](?:%[89abAB][0-9A-Fa-f]){3}|\\u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&(?:amp|lt|gt|quot|apos|nbsp|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});/g;

/** The characters HTML's named references write, of those an HTML or XML writer escapes. */
const NAMED_REFERENCES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** The character an ESCAPE match writes; bytes that make none (overlong, a surrogate, past U+10FFFF) each read as the character of its value, a reference to none as U+FFFD. */
function escapeText(m: string): string {
  if (m.charCodeAt(0) === 0x26) {
    if (m.charCodeAt(1) !== 0x23) return NAMED_REFERENCES[m.slice(1, -1)];
    const hex = m.charCodeAt(2) === 0x78 || m.charCodeAt(2) === 0x58;
    const cp = parseInt(m.slice(hex ? 3 : 2, -1), hex ? 16 : 10);
    return cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : "\ufffd";
  }
  if (m.charCodeAt(0) === 0x5c) return m.length === 6 ? String.fromCharCode(parseInt(m.slice(2), 16)) : String.fromCharCode(parseInt(m.slice(2, 6), 16), parseInt(m.slice(8), 16));
  const bytes: number[] = [];
  for (let k = 1; k < m.length; k += 3) bytes.push(parseInt(m.slice(k, k + 2), 16));
  if (bytes.length === 1) return String.fromCharCode(bytes[0]);
  let cp = bytes[0] & (0xff >> (bytes.length + 1));
  for (let k = 1; k < bytes.length; k++) cp = (cp << 6) | (bytes[k] & 0x3f);
  const valid = cp >= UTF8_MIN[bytes.length] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
  return valid ? String.fromCodePoint(cp) : String.fromCharCode(...bytes);
}

/** The least code point each length of UTF-8 writes (a shorter form is overlong). */
const UTF8_MIN = [0, 0, 0x80, 0x800, 0x10000];
/** ESCAPE where a scan stands. */
const ESCAPE_AT = new RegExp(ESCAPE.source, "y");
const NOT_ALNUM = /[^\p{L}\p{N}]/gu;

/** Notes a word break at `at` characters of a compact text: none before its first character, none twice. */
function noteBreak(breaks: number[], at: number): void {
  if (at > 0 && breaks[breaks.length - 1] !== at) breaks.push(at);
}

/** A character of a script written without spaces between words. */
const UNSPACED = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A tool's message with each stretch that holds a hidden argument's letters and digits once case,
 * separators and escapes are set aside (`4111-1111-1111-1111` for `"4111 1111 1111 1111"`),
 * forwards or reversed, replaced by its stand-in: the echoes `Marks.echoed` hides in a result,
 * and pieces of a hidden string: the message is the host's text about the arguments, so a
 * prefix, a segment or the last characters it quotes (`bad token K7Z2Q9-B3M8X`, `ends W5R2`) are
 * derived too. A stretch is where runs of QUOTED_MIN+ characters the message shares with the
 * arguments overlap or meet; one that holds a digit is hidden whole. One of letters alone is hidden piece by piece, each piece
 * what one argument holds in one place, so that the message's own words keep showing where runs
 * from different places or arguments meet (`crowdfund waiting` beside `... waits for a refund`):
 * a piece of ECHO_MIN+ letters is hidden, a shorter one only when it is whole words of the
 * message and of the argument, or the argument is one word (`tion` of `option` shows). Each piece is named after the argument
 * that holds it. A hidden number is looked for whole (ECHO_MIN+ digits): its pieces are digits,
 * which a message holds for its own reasons (`<=1000` beside a hidden 10000). `given` pairs each
 * hidden argument with its stand-in; `budget` bounds the work pieces take (characters compared),
 * past which the rest of each stretch is hidden whole where it holds a digit, ECHO_MIN+ units or
 * whole words of the message (as before pieces were told apart).
 */
export function hideRewritten(text: string, given: Array<[string | number, string]>, budget?: number): string {
  text = hideEncoded(text, given);
  // Stand-ins already in the message name places (`data/_creds :token`): only the text between them is searched.
  const parts = text.includes(STAND_IN_OPEN) ? text.split(STAND_INS) : [text];
  const texts = parts.map((part, i) => (i % 2 === 1 ? null : compacted(part)));
  const units = texts.reduce((n, t) => n + (t?.c.length ?? 0), 0);
  const ix = pieceIndex(texts, units, given);
  // No argument holds a run (one the message holds, when they are the larger): most messages hold no echo.
  if (ix === null) return text;
  const work: Work = { left: budget ?? PIECE_BUDGET + PIECE_WORK * units };
  return parts.map((part, i) => (i % 2 === 1 ? part : hidePieces(part, texts[i] as Compacted, ix, work))).join("");
}

/**
 * `text` with each base64 or hex run whose letters and digits, decoded, hold a hidden argument's
 * (ECHO_MIN+ of them, forwards or reversed) replaced by its stand-in: a message quoting the
 * request it failed on shows an `Authorization: Basic` header, `user:password` in base64, or the
 * bytes it sent as hex.
 */
function hideEncoded(text: string, given: Array<[string | number, string]>): string {
  let forms: QuoteIndex<string> | undefined;
  const hidden = (run: string, decoded: (run: string) => readonly string[]): string => {
    if (forms === undefined) {
      const found: Array<[string, string]> = [];
      for (const [value, shown] of given) compactForms(String(value), shown, found);
      forms = new QuoteIndex(found, false, ECHO_MIN);
    }
    return decodedEcho(run, decoded, forms) ?? run;
  };
  return text.replace(BASE64_RUN, (run) => hidden(run, base64Text)).replace(HEX_RUN, (run) => hidden(run, hexText));
}

/** What a base64 or hex run of `text` holds of `forms` (compact texts, tagged) once decoded, if 8+ letters and digits of one. */
function encodedIn<T>(text: string, forms: QuoteIndex<T>): T | undefined {
  if (text.length >= BASE64_MIN && UPPER.test(text) && LOWER.test(text)) {
    // Sent back in base64 (a request's `Authorization: Basic` header).
    for (const [run] of text.matchAll(BASE64_RUN)) {
      const e = decodedEcho(run, base64Text, forms);
      if (e !== undefined) return e;
    }
  }
  if (text.length >= HEX_MIN) {
    // Sent back as the bytes' hex (a payload, a dump).
    for (const [run] of text.matchAll(HEX_RUN)) {
      const e = decodedEcho(run, hexText, forms);
      if (e !== undefined) return e;
    }
  }
  return undefined;
}

/** What a run's decoded letters and digits hold of `forms`, if 8+ of them, in any of its readings. */
function decodedEcho<T>(run: string, decoded: (run: string) => readonly string[], forms: QuoteIndex<T>): T | undefined {
  for (const text of decoded(run)) {
    const c = compactText(text);
    const found = c.length >= ECHO_MIN ? forms.quote(c) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The fewest hex digits of a run that is decoded: 8 bytes. */
const HEX_MIN = 16;
/** Bytes as hex, one case, together, or apart as a dump writes them (`4b 37`, `4b:37`, `\x4b\x37`). */
const HEX_RUN = /[0-9a-f]{16,}|[0-9A-F]{16,}|[0-9a-f]{2}(?:[ :][0-9a-f]{2}){7,}|[0-9A-F]{2}(?:[ :][0-9A-F]{2}){7,}|(?:\\x[0-9a-fA-F]{2}){8,}/g;
const NOT_HEX = /\\x|[ :]/g;

/**
 * A hex run's bytes read as UTF-8 (bytes that make no character as U+FFFD, which compactText
 * drops: a token inside binary bytes is still read); a run of an odd number of digits, which may
 * follow a stray hex digit (`a4b37...`), is read from its second digit too.
 */
function hexText(run: string): string[] {
  const digits = run.replace(NOT_HEX, "");
  const read = (from: number): string => Buffer.from(digits.slice(from, digits.length - ((digits.length - from) % 2)), "hex").toString("utf8");
  return digits.length % 2 === 1 ? [read(0), read(1)] : [read(0)];
}

/** The fewest characters of a base64 run that is decoded: 9 bytes. */
const BASE64_MIN = 12;
/** A run a base64 writer may have written, in either alphabet (`+/` or `-_`), with its padding. */
const BASE64_RUN = new RegExp(`[A-Za-z0-9+/_-]{${BASE64_MIN},}={0,2}`, "g");
/** The credentials of a `Basic` authorization, in any case: a base64 run after it. */
const BASIC_CREDENTIALS = new RegExp(`\\bbasic\\s+(${BASE64_RUN.source})`, "gi");
const UPPER = /[A-Z]/;
const LOWER = /[a-z]/;

/**
 * A base64 run's bytes read as UTF-8 (bytes that make no character as U+FFFD); Node's decoder
 * reads both alphabets. Base64 of text mixes cases; ids (a UUID, a hex digest), long words and
 * words joined by `-` or `_` do not, and are not decoded.
 */
const base64Text = (run: string): string[] => (UPPER.test(run) && LOWER.test(run) ? [Buffer.from(run, "base64").toString("utf8")] : []);

/** The work hideRewritten's pieces may take, in characters compared: a million, and PIECE_WORK more per character of the message, so that it grows with the message, not faster. */
const PIECE_BUDGET = 1_000_000;
const PIECE_WORK = 16;

/** A text's letters and digits as compactText keeps them (by UTF-16 unit), each with the stretch of the text it was read from (a character, an escape). */
interface Compacted {
  readonly c: string;
  readonly from: Int32Array;
  readonly to: Int32Array;
}

function compacted(text: string): Compacted {
  let units = new Uint16Array(text.length);
  let from = new Int32Array(text.length);
  let to = new Int32Array(text.length);
  let n = 0;
  const keep = (unit: number, i: number, end: number): void => {
    if (n === units.length) [units, from, to] = [grown(units, new Uint16Array(2 * n + 1)), grown(from, new Int32Array(2 * n + 1)), grown(to, new Int32Array(2 * n + 1))];
    units[n] = unit;
    from[n] = i;
    to[n++] = end;
  };
  for (let i = 0; i < text.length; ) {
    let code = text.charCodeAt(i);
    let end = i + 1;
    if (code === 0x25 || code === 0x5c || code === 0x26) {
      ESCAPE_AT.lastIndex = i;
      const m = ESCAPE_AT.exec(text);
      if (m !== null) {
        const ch = escapeText(m[0]);
        code = ch.codePointAt(0) as number;
        // Bytes that make no character are read one escape at a time, as compactText reads them.
        end = i + (String.fromCodePoint(code).length === ch.length ? m[0].length : 3);
      }
    }
    if (code < 0x80) {
      const low = code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
      if ((low >= 0x61 && low <= 0x7a) || (low >= 0x30 && low <= 0x39)) keep(low, i, end);
    } else {
      const ch = end > i + 1 ? String.fromCodePoint(code) : String.fromCodePoint(text.codePointAt(i) as number);
      if (end === i + 1) end = i + ch.length;
      // Each UTF-16 unit of a letter beyond the BMP (`𝐀`) is a place, as the runs looked up are cut.
      const kept = foldedChar(ch);
      for (let k = 0; k < kept.length; k++) keep(kept.charCodeAt(k), i, end);
    }
    i = end;
  }
  let c = "";
  for (let k = 0; k < n; k += 4096) c += String.fromCharCode(...units.subarray(k, Math.min(n, k + 4096)));
  return { c, from: from.subarray(0, n), to: to.subarray(0, n) };
}

function grown<T extends Uint16Array | Int32Array>(a: T, into: T): T {
  into.set(a);
  return into;
}

/** Whether the unit at `k` goes on the word of the one before it (no separator between them). */
function glued(t: Compacted, k: number): boolean {
  return k > 0 && k < t.c.length && (t.from[k] === t.to[k - 1] || t.from[k] === t.from[k - 1]);
}

/** The run of QUOTED_MIN units at `k` as a key: a small integer when they are ASCII, so that a scan of a long message makes no strings. */
function runKey(s: string, k: number): number | string {
  let key = 0;
  for (let j = 0; j < QUOTED_MIN; j++) {
    const u = s.charCodeAt(k + j);
    if (u >= 0x80) return s.slice(k, k + QUOTED_MIN);
    key = key * 0x80 + u;
  }
  return key;
}

/** A hidden argument's compact text, forwards or reversed, and its stand-in; a number's is looked for whole. */
interface Form {
  readonly text: string;
  readonly shown: string;
  readonly whole: boolean;
  /** A string's, read forwards: the string, and where its compact text was read from (for its words), once asked for. */
  readonly value: string | null;
  words?: Compacted;
  /** Whether the string is one word (no separator inside it), once asked for. */
  oneWord?: boolean;
}

/** Where the arguments' forms hold each run the message does: places are form * PLACE + position. */
interface PieceIndex {
  readonly forms: Form[];
  readonly runs: Map<number | string, number[]>;
  /** Numbers' forms by their first run. */
  readonly numbers: Map<number | string, number[]>;
}

const PLACE = 2 ** 30;

/** The index of `given` for a message compacted as `texts` (`units` long). */
function pieceIndex(texts: ReadonlyArray<Compacted | null>, units: number, given: Array<[string | number, string]>): PieceIndex | null {
  const forms: Form[] = [];
  let formChars = 0;
  for (const [value, shown] of given) {
    const c = compactText(String(value));
    const whole = typeof value === "number";
    if (c.length < (whole ? ECHO_MIN : QUOTED_MIN)) continue;
    forms.push({ text: c, shown, whole, value: whole ? null : (value as string) }, { text: reversed(c), shown, whole, value: null });
    formChars += 2 * c.length;
  }
  // Kept to the runs the message holds when the arguments are the larger: a tool given
  // thousands of hidden values indexes no more than its message.
  let inText: Set<number | string> | null = null;
  if (formChars > units) {
    inText = new Set();
    for (const t of texts) for (let k = 0; t !== null && k + QUOTED_MIN <= t.c.length; k++) inText.add(runKey(t.c, k));
  }
  const runs = new Map<number | string, number[]>();
  const numbers = new Map<number | string, number[]>();
  const add = (to: Map<number | string, number[]>, key: number | string, place: number): void => {
    if (inText !== null && !inText.has(key)) return;
    const places = to.get(key);
    if (places === undefined) to.set(key, [place]);
    else places.push(place);
  };
  forms.forEach((form, f) => {
    if (form.whole) add(numbers, runKey(form.text, 0), f);
    else for (let p = 0; p + QUOTED_MIN <= form.text.length; p++) add(runs, runKey(form.text, p), f * PLACE + p);
  });
  return runs.size === 0 && numbers.size === 0 ? null : { forms, runs, numbers };
}

/** Where a string argument's compact text was read from, for its words (none if it reads otherwise one character at a time). */
function wordsOf(form: Form): Compacted | null {
  if (form.value === null) return null;
  form.words ??= compacted(form.value);
  return form.words.c === form.text ? form.words : null;
}

interface Work {
  left: number;
}

/** `text` (compacted as `t`) with the stretches `hideRewritten` hides replaced by the stand-in of the argument they are from. */
function hidePieces(text: string, t: Compacted, ix: PieceIndex, work: Work): string {
  const c = t.c;
  // Numbers sent back whole, by where they start.
  const numbersAt = new Map<number, number>();
  let out = "";
  let at = 0;
  const hide = (a: number, e: number): void => {
    for (const [s, end, shown] of hiddenParts(t, a, e, ix, work, numbersAt)) {
      out += text.slice(at, t.from[s]) + shown;
      at = t.to[end - 1];
    }
  };
  // Stretches [a, e) where runs of the arguments' (or whole numbers) overlap or meet.
  let a = 0;
  let e = -1;
  for (let k = 0; k + QUOTED_MIN <= c.length; k++) {
    const key = runKey(c, k);
    let end = ix.runs.has(key) ? k + QUOTED_MIN : -1;
    for (const f of ix.numbers.get(key) ?? []) {
      const q = ix.forms[f].text;
      // Once the work is spent, a run a hidden number starts with is hidden without a look.
      if (--work.left < 0) end = Math.max(end, k + QUOTED_MIN);
      else if (k + q.length > end && c.startsWith(q, k)) {
        end = k + q.length;
        numbersAt.set(k, f);
      }
    }
    if (end < 0) continue;
    if (k > e) {
      if (e >= 0) hide(a, e);
      a = k;
    }
    e = Math.max(e, end);
  }
  if (e >= 0) hide(a, e);
  return at === 0 ? text : out + text.slice(at);
}

/**
 * The parts of the stretch [a, e) of `t` to hide, as [start, end, stand-in]: pieces found by a
 * walk forwards, each the longest hidden one an argument holds from where the walk stands (or
 * none: the walk moves on by one unit). In a stretch holding a digit, the units between pieces
 * are hidden with the piece after them (the last ones with the last piece). Once the work is
 * spent, the rest of the stretch is hidden whole if it holds a digit, ECHO_MIN+ units or whole
 * words of the message.
 */
function hiddenParts(t: Compacted, a: number, e: number, ix: PieceIndex, work: Work, numbersAt: ReadonlyMap<number, number>): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  const put = (s: number, end: number, shown: string): void => {
    const last = out[out.length - 1];
    if (last !== undefined && last[1] === s && last[2] === shown) last[1] = end;
    else out.push([s, end, shown]);
  };
  const digits = DIGIT.test(t.c.slice(a, e));
  let open = a;
  for (let s = a; s < e; ) {
    const p = ownPiece(t, s, e, ix, work, numbersAt);
    if (p === SPENT) {
      if (digits || e - s >= ECHO_MIN || (!glued(t, s) && !glued(t, e))) put(digits ? open : s, e, out[out.length - 1]?.[2] ?? firstShown(t, a, ix, numbersAt));
      return out;
    }
    if (p === null) {
      s++;
      continue;
    }
    put(digits ? open : s, s + p.len, ix.forms[p.form].shown);
    s += p.len;
    open = s;
  }
  if (digits && open < e) {
    const last = out[out.length - 1];
    if (last === undefined) out.push([a, e, firstShown(t, a, ix, numbersAt)]);
    else last[1] = e;
  }
  return out;
}

/**
 * namedPiece, given way where a word of the message starts inside it and a piece from there
 * reaches further: `for william.smith@…` is not hidden as `rwilliams` of a hidden
 * `jennifer.williams@…` and the rest, but as `william.smith@…`.
 */
function ownPiece(t: Compacted, s: number, e: number, ix: PieceIndex, work: Work, numbersAt: ReadonlyMap<number, number>): Piece | null | typeof SPENT {
  const p = namedPiece(t, s, e, ix, work, numbersAt);
  for (let w = s + 1; p !== null && p !== SPENT && w < s + p.len; w++) {
    if (glued(t, w)) continue;
    const later = namedPiece(t, w, e, ix, work, numbersAt);
    if (later === SPENT) return SPENT;
    if (later !== null && w + later.len > s + p.len) return namedPiece(t, s, w, ix, work, numbersAt);
  }
  return p;
}

/** The stand-in of the first argument holding what a stretch starts with. */
function firstShown(t: Compacted, a: number, ix: PieceIndex, numbersAt: ReadonlyMap<number, number>): string {
  const places = ix.runs.get(runKey(t.c, a));
  return ix.forms[places === undefined ? (numbersAt.get(a) as number) : Math.floor(places[0] / PLACE)].shown;
}

interface Piece {
  len: number;
  form: number;
}

const SPENT = "spent";

/**
 * The longest piece of `t` from `s` (to `e` at most) that one argument holds in one place and
 * that is hidden: ECHO_MIN+ units, or whole words of the message and of the argument (read
 * forwards; any piece of a one-word argument); null if there is none. Places are looked up by the rarest run such a piece would
 * hold, so that 16,000 arguments sharing the run at `s` (`user`) are not each compared.
 */
function namedPiece(t: Compacted, s: number, e: number, ix: PieceIndex, work: Work, numbersAt: ReadonlyMap<number, number>): Piece | null | typeof SPENT {
  if (--work.left < 0) return SPENT;
  const n = numbersAt.get(s);
  let best: Piece | null = n === undefined || ix.forms[n].text.length > e - s ? null : { len: ix.forms[n].text.length, form: n };
  let need = least(t, s, best === null ? QUOTED_MIN : best.len + 1);
  let [places, shift] = need > e - s ? [[], 0] : rarest(t.c, s, need, ix.runs);
  for (let i = 0; i < places.length; i++) {
    const f = Math.floor(places[i] / PLACE);
    const q = (places[i] % PLACE) - shift;
    const form = ix.forms[f];
    const max = Math.min(e - s, form.text.length - q);
    let len = 0;
    if (q >= 0 && max >= need) while (len < max && form.text.charCodeAt(q + len) === t.c.charCodeAt(s + len)) len++;
    if ((work.left -= len + 1) < 0) return SPENT;
    if (len < ECHO_MIN && len >= need) len = wordsEnd(t, s, form, q, len, need);
    if (len < need) continue;
    best = { len, form: f };
    need = least(t, s, len + 1);
    if (need > e - s) break;
    [places, shift] = rarest(t.c, s, need, ix.runs);
    i = -1;
  }
  return best;
}

/** The least length from `len` on of a piece from `s` that may be hidden: below ECHO_MIN units, only where words of the message start and end. */
function least(t: Compacted, s: number, len: number): number {
  if (glued(t, s)) return Math.max(len, ECHO_MIN);
  while (len < ECHO_MIN && glued(t, s + len)) len++;
  return len;
}

/**
 * The longest `l` from `need` to `len` at which both [s, s + l) of `t` and [q, q + l) of an
 * argument's words end a word, the latter starting one; 0 if none. An argument of one word (a
 * password, a key) has no words of its own to tell a piece by: any of its pieces counts.
 */
function wordsEnd(t: Compacted, s: number, form: Form, q: number, len: number, need: number): number {
  const words = wordsOf(form);
  if (words === null) return 0;
  const one = (form.oneWord ??= oneWord(words));
  if (!one && glued(words, q)) return 0;
  for (let l = len; l >= need; l--) if (!glued(t, s + l) && (one || !glued(words, q + l))) return l;
  return 0;
}

/** Whether a text's compact units were read from one word (no separator inside it). */
function oneWord(words: Compacted): boolean {
  for (let k = 1; k < words.c.length; k++) if (!glued(words, k)) return false;
  return true;
}

/** The places of the run from `s` to `s + need` held by the fewest, and how far into it that run starts (a few runs looked at). */
function rarest(c: string, s: number, need: number, runs: ReadonlyMap<number | string, number[]>): [number[], number] {
  const last = need - QUOTED_MIN;
  let out: [number[], number] = [[], 0];
  for (let j = 0; j <= RAREST_TRIES; j++) {
    const d = Math.round((last * j) / RAREST_TRIES);
    const places = runs.get(runKey(c, s + d));
    if (places === undefined) return [[], 0];
    if (j === 0 || places.length < out[0].length) out = [places, d];
  }
  return out;
}

const RAREST_TRIES = 4;

const DIGIT = /\p{N}/u;

/** A hidden value's compact text, forwards and reversed, when it is long enough to be an echo; with `breaks`, where each had separators (standsFor). */
function compactForms<T>(text: string, tag: T, out: Array<[string, T]>, breaks?: Map<string, ReadonlySet<number>>): void {
  const at: number[] | undefined = breaks === undefined ? undefined : [];
  const c = compactText(text, at);
  if (c.length < ECHO_MIN) return;
  const r = reversed(c);
  out.push([c, tag], [r, tag]);
  if (breaks === undefined || at === undefined || at.length === 0 || breaks.has(c)) return;
  breaks.set(c, new Set(at));
  breaks.set(r, new Set(at.map((k) => c.length - k)));
}

function reversed(text: string): string {
  return [...text].reverse().join("");
}

/** A string of up to 3 characters as a message quotes it (`"K7Z"`, or RE2's `` `[K7` ``). */
const SHORT_QUOTE = /"(?:[^"\\]|\\.){1,3}"|`[^`]{1,3}`/g;
/**
 * A keyword of up to 3 characters as a message prints it (`:K7Z`, a key made of a piece of a
 * hidden string): its name, where no other character of a keyword's name is next to it, or only
 * a colon (a path before its issue, `:K7Z: expected number`).
 */
const SHORT_KEYWORD = /(?<![\w*+!\-?<>=/.&%$|':#\u00A0-\uFFFF]):([\w*+!\-?<>=/.&%$|'#\u00A0-\uFFFF][\w*+!\-?<>=/.&%$|':#\u00A0-\uFFFF]{0,3})(?![\w*+!\-?<>=/.&%$|':#\u00A0-\uFFFF])/g;
/** A stand-in, kept whole when text is split around it. */
const STAND_INS = /(\uE000[^\uE000\uE001]*\uE001)/;
/** A number standing alone in a message (`index 123`, `1.0E21`, not `1234` or `v1.23`); a float is looked up by its value (`3750.0` as 3750). */
const NUMBER = /(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])/g;

/** The marked values an error message may quote, by how they are searched for. */
interface MessageIndex {
  /** How many of the marked strings and numbers, and of the marked floats, it holds. */
  prims: number;
  floats: number;
  /** Strings under QUOTED_MIN characters, quoted (`"K7"`, `` `K7` ``). */
  quoted: Map<string, string>;
  /** The same strings as keywords' names (`:K7`). */
  keywords: Map<string, string>;
  /** Small numbers as written. */
  numbers: Map<string, string>;
  /** Marked floats' numbers as written. */
  floatNumbers: Map<string, string>;
  /** Longer strings and numbers, as written and escaped. */
  readonly long: QuoteIndex<string>;
}

function plainNumbers(args: Value[]): boolean {
  for (let i = 0; i < args.length; i++) if (typeof args[i] !== "number") return false;
  return true;
}
