// The facts summarizer: an offline summary that keeps what later turns need and drops the prose.
// From each message it extracts names, numbers, dates, times, identifiers, paths, function names,
// error lines, the commands run with their outcome, and the content words of requests; tool
// output is reduced to its facts (values of JSON results, error lines, paths and identifiers),
// never to its first lines. A value said again later is kept once, at its latest mention. The
// budget is kept by dropping the least specific items first (plain words before identifiers
// before errors and open requests), oldest first within a rank.
import { messageText } from "../../llm/messages.js";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { ChatMessage } from "../../llm/types.js";
import { headOf, isAnswered } from "../messages.js";
import { countTokens } from "../tokens.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../types.js";

/** How much an item is worth keeping: plain words < values < identifiers < error lines < commands, call arguments and open requests. */
const enum Rank {
  Word = 1,
  Value = 2,
  /** A booking reference, a train or order id, a path, a URL: said once and needed exactly. */
  Id = 3,
  Error = 4,
  Vital = 5,
}

// Letters and digits in one token (PP42, TR0757, call_3) but not an ordinal, a time or a size (9th, 5pm, 10k).
const IDENTIFIER = /^(?:(?=[^\s]*[A-Za-z])(?=[^\s]*\d)(?!\d+(?:st|nd|rd|th|am|pm|[smhkd])$)[^\s]+|[^\s]*[/@][^\s]*|[\w-]+\.[a-z]{1,5})$/i;

/** The rank of a specific value: identifiers above other values. */
const valueRank = (text: string): Rank => (IDENTIFIER.test(text) ? Rank.Id : Rank.Value);

interface Item {
  text: string;
  rank: Rank;
  /** Structure (a call's name, its "->"), said again per call rather than once per summary. */
  structural?: boolean;
}

interface Line {
  head: string;
  items: Item[];
  /** Kept even with no items (an open request must not vanish). */
  sticky: boolean;
}

const STOP = new Set(
  (
    "a about above after again all also am an and any are as at be been before being below between both but by can could did do does doing done down during each else few for from further get got had has have having he her here hers him his how i i'd i'll i'm i've if in into is it it's its itself just let's me more most much my myself no nor not now of off ok okay on once only or other our ours out over own please same she should so some such than that that's the their them then there these they this those through to too under until up us very was we we'll we're were what when where which while who whom why will with would you you'd you'll you're your yours yes yeah sure thanks thank great perfect good fine well hi hello hey bye goodbye sorry anything something nothing everything else really like want need needs looking look find help could would might may shall must also just okay alright right let know think see go going get make do tell give take there's here's one's"
  ).split(" "),
);

const NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty hundred".split(" ");
const MONTHS = "january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec";
const DAYS = "monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight";

const alt = (words: string): string => words.split(" ").join("|");
// Digit groups joined by "." or "," (1,250, 2.5, v2.3.1), or thousands joined by a space or a
// no-break space as French, Russian or German write them (42 300, 1 250,50).
const GROUPED = String.raw`\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)(?:[.,]\d+)*`;
const NUM = String.raw`(?:${GROUPED}|\d+(?:[.,]\d+)*)`;
// Chinese, Japanese and Korean put no space between words, nor before a Latin identifier: a run of
// their letters is a word of its own, so "予約番号はQX77Z" leaves "QX77Z" to be read as a value.
const CJK = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc`;
// A letter of any other script: a reference is written in Cyrillic or Greek too (РК-4471).
const LETTER = String.raw`(?:(?![${CJK}])\p{L})`;

// Specific values, tried in order at each position; the first that matches is taken whole.
// Words (months, days, units) match in any case; code names only as written.
const VALUE_ANY_CASE = new RegExp(
  [
    String.raw`https?://[^\s;,)]+`,
    String.raw`[\w.+-]+@[\w-]+\.\w+(?:\.\w+)*`,
    // paths: a/b/c.py, ./x, /etc/hosts, file.ext
    String.raw`(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]*\w`,
    String.raw`[\w-]+\.(?:py|pyi|ts|tsx|js|mjs|json|cfg|toml|ini|md|rst|txt|yaml|yml|rs|go|c|h|cpp|java|rb|sh|html|css|sql|csv|lock|xml|ipynb)\b`,
    // times and dates
    String.raw`\d{1,2}:\d{2}(?:\s?[ap]\.?m\b\.?)?`,
    String.raw`\d{1,2}\s?[ap]\.?m\b\.?`,
    String.raw`\d{4}-\d{2}-\d{2}(?:[T ][\d:]+)?`,
    String.raw`(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+of)?\s+(?:this|next)\s+month`,
    // "the 9th of March" whole, before "the 9th" alone
    String.raw`(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:${alt(MONTHS)})\b`,
    String.raw`the\s+\d{1,2}(?:st|nd|rd|th)\b`,
    String.raw`(?:the\s+)?day after tomorrow`,
    String.raw`(?:this|next|last)\s+(?:week(?:end)?|month|year)`,
    String.raw`(?:${alt(MONTHS)})\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?`,
    String.raw`(?:next\s+|this\s+)?(?:${alt(DAYS)})(?:\s+(?:this|next)\s+week)?\b`,
    // money, numbers with a unit word, identifiers mixing letters and digits (with dashes between:
    // PROJ-1234, UA-889, gpt-4o), and numbers with their separators (1,250, 2.5, v2.3.1, 10.0.0.1)
    String.raw`[$£€]\s?${NUM}`,
    String.raw`${NUM}\s?(?:%|(?!(?:and|or|the|for|in|on|at|to|of|is|are|was|by|from)\b)[a-z]{2,12}\b)`,
    GROUPED,
    String.raw`(?:${LETTER}+-)*${LETTER}*\d[\w-]*(?:[.,]\d[\w-]*)*`,
    String.raw`(?:${alt(NUMBER_WORDS.join(" "))})(?:\s+(?!(?:and|or|the|for|in|on|at|to|of|is|are|was|by|from)\b)[a-z]{3,12})?\b`,
  ]
    .map((p) => `(?:${p})`)
    .join("|"),
  "iuy",
);
// snake_case, camelCase, dotted names (module.function)
const VALUE_AS_WRITTEN = /(?:\p{Lu}\p{Ll}+(?: \p{Lu}\p{Ll}+)*, \p{Lu}{2}\b|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]+_\w+|_\w+|[a-z]+[A-Z]\w*)/uy;

// A value is matched within a window of this many characters from where it starts, and matched
// again in the whole text only when it fills the window (a long path, a binary string). Matched
// in the whole text from every start, the path and email patterns scanned a run of dots or
// dashes to its end from each of its characters (each one a word start): quadratic in the run,
// a 96,000-dot progress line took 65 s, blocking the proxy.
const MAX_VALUE = 256;

function matchAt(re: RegExp, text: string, i: number): string | undefined {
  re.lastIndex = i;
  return re.exec(text)?.[0];
}

const ALL_PATTERNS: readonly RegExp[] = [VALUE_ANY_CASE, VALUE_AS_WRITTEN];
const CODE_NAMES: readonly RegExp[] = [VALUE_AS_WRITTEN];
const NO_PATTERNS: readonly RegExp[] = [];

function valueAt(text: string, i: number, patterns: readonly RegExp[]): string | undefined {
  if (patterns.length === 0) return undefined;
  const window = text.length - i > MAX_VALUE ? text.slice(i, i + MAX_VALUE) : undefined;
  for (const re of patterns) {
    let v = window === undefined ? matchAt(re, text, i) : matchAt(re, window, 0);
    if (window !== undefined && v !== undefined && v.length === window.length) v = matchAt(re, text, i);
    if (v !== undefined && v.length > 0 && !/\w/.test(text[i + v.length] ?? "")) return v;
  }
  return undefined;
}

// A value is not looked for inside a run of ".", "+", "-" (a progress bar, a rule of dashes): the
// patterns that start on such a character (an email, a path, a file name) take the characters
// before it in the run too, so they matched from the run's first character, which was tried. Tried from every character, the run was read
// up to MAX_VALUE characters each time: six 200,000-dash messages took 2.9 s. A code name opening
// with "_" right after such a run (`--_session_token`, `-.__init__`) is the exception: no pattern
// that starts on the run takes it, so the code-name patterns are tried there (only when a letter
// or digit follows the underscores: a run of "-_" stays read about once).
const RUN = new Set([".", "+", "-"]);
function patternsAt(text: string, i: number): readonly RegExp[] {
  if (i === 0 || !RUN.has(text[i - 1])) return ALL_PATTERNS;
  if (RUN.has(text[i])) return NO_PATTERNS;
  if (text[i] !== "_") return ALL_PATTERNS;
  let j = i;
  while (text[j] === "_") j++;
  return /[A-Za-z0-9]/.test(text[j] ?? "") ? CODE_NAMES : NO_PATTERNS;
}

const JOINERS = new Set(["the", "of", "and", "de", "la", "del", "von", "van", "&"]);
// Title-case names also take these when they are capitalized ("Ac Hotel By Marriott").
const TITLE_JOINERS = new Set(["by", "at", "on", "in", "for", "with", "to", "a", "an"]);

// Anchored at a word start: unanchored, `\w*` was tried from every position of a long word and
// backtracked over the rest of it, quadratic in the line (a 100,000-character hex line took 13 s).
const ERROR_LINE = /(?:\b\w*(?:Error|Exception)\b|\b(?:error|exception|traceback|failed|failure|fail:|assert(?:ion)?|not found|no such|denied|refused|invalid|cannot|can't|unable|warning)\b)/i;
const WORD = new RegExp(`[${CJK}]+|(?![${CJK}])\\p{L}(?:(?![${CJK}])[\\p{L}'&-])*`, "uy");

// The summary is built by generators that pause (yield) after about this many characters read or
// values visited: the proxy's summary (factsSummarizer.summarize) gives the event loop a turn at
// each pause, as countTokensYielding does, where a request body of 32 MB held every other
// request for seconds; factsSummary runs them through without pausing.
const YIELD_WORK = 1 << 16;

type Steps<T = void> = Generator<void, T>;

/** A generator's result, run through without pausing. */
function finish<T>(steps: Steps<T>): T {
  let r = steps.next();
  while (r.done !== true) r = steps.next();
  return r.value;
}

/** A generator's result, with a turn of the event loop at each pause. */
async function finishYielding<T>(steps: Steps<T>): Promise<T> {
  let r = steps.next();
  while (r.done !== true) {
    await nextTurn();
    r = steps.next();
  }
  return r.value;
}

/** The facts of a text: specific values, runs of capitalized names, and runs of content words. */
export function textFacts(text: string): Item[] {
  const out: Item[] = [];
  finish(scanText(text, out));
  return out;
}

/** textFacts, appended to `out`, pausing every YIELD_WORK characters. */
function* scanText(text: string, out: Item[]): Steps {
  let i = 0;
  let pause = YIELD_WORK;
  let run: string[] = [];
  let runChars = 0;
  let runCapital = false;
  let runAtSentenceStart = false;
  const endRun = (): void => {
    // A capital that only opens a sentence ("Sounds great", "Fix it") makes no name; an acronym ("LAX") does.
    const capitals = run.filter((w, k) => /^\p{Lu}/u.test(w) && !(k === 0 && runAtSentenceStart && !/^\p{Lu}{2,}$/u.test(w))).length;
    if (run.length > 0) out.push({ text: run.join(" "), rank: runCapital && capitals > 0 ? Rank.Value : Rank.Word });
    run = [];
    runChars = 0;
    runCapital = false;
  };
  while (i < text.length) {
    if (i >= pause) {
      yield;
      pause = i + YIELD_WORK;
    }
    const c = text[i];
    const boundary = i === 0 || !/[\w]/.test(text[i - 1]);
    if (boundary) {
      const v = valueAt(text, i, patternsAt(text, i));
      if (v !== undefined) {
        endRun();
        out.push({ text: v.replace(/\s+/g, " "), rank: valueRank(v) });
        i += v.length;
        continue;
      }
      WORD.lastIndex = i;
      const w = WORD.exec(text);
      if (w !== null) {
        const word = w[0];
        const lower = word.toLowerCase();
        // "The", "of", "and" inside a name ("The Threepenny Opera", "Museum of Art") belong to it.
        const capitalized = /^\p{Lu}/u.test(word);
        const joiner = JOINERS.has(lower) || (capitalized && run.length > 0 && TITLE_JOINERS.has(lower));
        const joins = joiner && (run.length > 0 || capitalized) && /^\s+\p{Lu}/u.test(text.slice(i + word.length, i + word.length + 3));
        if (STOP.has(lower) && !joins) endRun();
        // A "word" longer than any value (a blob of letters) is no content word: kept, it was one
        // item of megabytes that no budget could take, rendered and counted again at every step.
        else if (word.length > MAX_VALUE) endRun();
        else {
          // A run with no stop word ends before it passes MAX_VALUE characters: "alpha beta " 300,000
          // times was one item of 3.3 MB, past any budget, so the message summarized to nothing.
          if (runChars + word.length > MAX_VALUE) endRun();
          // A run with a capitalized word is a name (a place, a venue, a person): a value.
          if (/^\p{Lu}/u.test(word)) runCapital = true;
          if (run.length === 0) runAtSentenceStart = /(?:^|[.!?:\n]\s*)$/.test(text.slice(Math.max(0, i - 3), i));
          run.push(word);
          runChars += word.length + 1;
        }
        i += word.length;
        continue;
      }
    }
    // "&" inside a name joins it ("Express & Suites"); other punctuation ends a phrase.
    if (c === "&" && runCapital && /^&\s+\p{Lu}/u.test(text.slice(i, i + 3))) {
      run.push("&");
      runChars += 2;
    } else if (c !== " " && !/[\w]/.test(c)) endRun();
    i++;
  }
  endRun();
}

/** Error lines of a tool output, at most `limit` (the first ones and the last, where the exception usually is). */
function errorLines(text: string, limit = 3): Item[] {
  // Markup around tool output (<warning>, <output_head>) is no error of the program's.
  const lines = text
    .split("\n")
    .map((l) => l.replace(/<\/?[a-z_]+>/gi, "").trim())
    .filter((l) => l !== "" && ERROR_LINE.test(l));
  const picked = lines.length <= limit ? lines : [...lines.slice(0, limit - 1), lines[lines.length - 1]];
  return picked.map((l) => ({ text: headOf(l, 160), rank: Rank.Error }));
}

/**
 * Scalar values of parsed JSON (keys dropped: the values are what later turns repeat). In a list
 * of results the first is what an agent usually offers; the others rank as plain words, so a
 * tight budget drops them first, except identifiers: a list of ids (a user's reservations, a
 * trip's flights) is what the next calls open one by one, and each is needed exactly.
 */
function* jsonFacts(root: unknown, out: Item[]): Steps {
  // Depth first with a stack of its own, in the order a recursion would visit: a pause can come anywhere.
  const stack: Array<{ value: unknown; rank: Rank; depth: number }> = [{ value: root, rank: Rank.Value, depth: 0 }];
  let visited = 0;
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (++visited % YIELD_WORK === 0) yield;
    const { value, rank, depth } = next;
    if (depth > 8) continue;
    // The rank of a value found at this rank: Value ranks it by its kind; a later list entry (Word) keeps an identifier's rank.
    const at = (found: Rank): Rank => (rank === Rank.Value ? found : rank === Rank.Word && found === Rank.Id ? Rank.Id : (Math.min(found, rank) as Rank));
    if (typeof value === "string") {
      if (value.trim() === "") continue;
      // Short values are names, dates, counts; long ones (addresses, descriptions) are rarely repeated.
      if (value.length <= 30) out.push({ text: value.trim(), rank: rank === Rank.Value || rank === Rank.Word ? at(valueRank(value.trim())) : rank });
      else if (value.length <= 60) out.push({ text: value.trim(), rank: Rank.Word });
      else {
        const found: Item[] = [];
        yield* scanText(value, found);
        // Ranked in place (the items are this scan's own): a copy of each was a long stretch without a pause.
        for (const f of found) {
          f.rank = at(f.rank);
          out.push(f);
        }
      }
    } else if (typeof value === "number") out.push({ text: String(value), rank });
    else if (Array.isArray(value)) {
      // A list whose first entry is an identifier is a list of ids ("AQLBTL" after "OI5L9G" is one too, though it has no digit).
      const ids = rank === Rank.Value && typeof value[0] === "string" && valueRank(value[0].trim()) === Rank.Id;
      for (let n = value.length - 1; n >= 0; n--) {
        const v: unknown = value[n];
        stack.push({ value: v, rank: n === 0 ? rank : ids && typeof v === "string" && !/\s/.test(v.trim()) ? Rank.Id : Rank.Word, depth: depth + 1 });
      }
    } else if (typeof value === "object" && value !== null) {
      const values = Object.values(value);
      for (let n = values.length - 1; n >= 0; n--) stack.push({ value: values[n], rank, depth: depth + 1 });
    }
  }
}

function parseJson(text: string): unknown {
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

/** A tool output's facts: JSON values, or error lines plus the values in the text, plus its size. */
function* outputFacts(text: string): Steps<Item[]> {
  const json = parseJson(text);
  if (json !== undefined) {
    const out: Item[] = [];
    yield* jsonFacts(json, out);
    return out;
  }
  const lines = text.split("\n").length;
  const found: Item[] = [];
  yield* scanText(text, found);
  // Paths in output (a listing, a traceback) are what later commands use; other names there
  // (variables of a printed file) rank as plain words.
  const values = found
    .filter((f) => f.rank >= Rank.Value)
    .map((f) => {
      if (!/[/\\]|\.[a-z]{1,5}$/i.test(f.text)) f.rank = Rank.Word;
      return f;
    });
  const out = [...errorLines(text), ...values];
  if (lines > 3) out.push({ text: `(${lines} lines)`, rank: Rank.Word });
  return out.length === 0 ? [{ text: text.trim() === "" ? "(empty)" : "ok", rank: Rank.Word }] : out;
}

/** A tool call as `name(arg values)`: the arguments' values are the facts. */
function* callFacts(name: string, args: string): Steps<Item[]> {
  const json = parseJson(args);
  const out: Item[] = [{ text: name, rank: Rank.Vital, structural: true }];
  const args_: Item[] = [];
  if (json === undefined) yield* scanText(args, args_);
  else if (typeof json === "object" && json !== null && !Array.isArray(json)) {
    for (const [k, v] of Object.entries(json)) {
      // A command is kept whole up to a line: it is what was run.
      if (typeof v === "string" && (k === "command" || k === "cmd")) args_.push({ text: headOf(v.split("\n")[0], 160), rank: Rank.Vital });
      else yield* jsonFacts(v, args_);
    }
  }
  // What a call was made with is what the next calls repeat (ids, dates, paths): it outranks what came back.
  for (const a of args_) {
    a.rank = Rank.Vital;
    out.push(a);
  }
  return out;
}

const ARROW: Item = { text: "->", rank: Rank.Vital, structural: true };

function* linesOf(messages: readonly ChatMessage[]): Steps<Line[]> {
  const lines: Line[] = [];
  // Tool messages read with the call they answer; the others get a line of their own.
  const paired = new Set<ChatMessage>();
  for (const [i, m] of messages.entries()) {
    const text = messageText(m);
    if (m.role === "user") {
      const open = !isAnswered(messages, i);
      const items: Item[] = [];
      yield* scanText(text, items);
      // An open request is what the next turns must act on: its words are vital.
      // What the user states (a name, a time, a date) is what they will expect back: it ranks with identifiers.
      for (const f of items) f.rank = open ? Rank.Vital : f.rank === Rank.Value ? Rank.Id : f.rank;
      lines.push({ head: open ? "user [open]:" : "user:", items, sticky: open });
    } else if (m.role === "assistant") {
      if (text.trim() !== "") {
        const items: Item[] = [];
        yield* scanText(text, items);
        lines.push({ head: "assistant:", items, sticky: false });
      }
      // A call's result is among the tool messages right after it: some servers number calls per
      // reply ("call_0" every turn), so an id names a call only within its own batch.
      const results = new Map<string, ChatMessage>();
      if ((m.tool_calls?.length ?? 0) > 0) {
        for (let j = i + 1; j < messages.length && (messages[j].role === "tool" || messages[j].role === "system"); j++) {
          const r = messages[j];
          if (r.role === "tool" && r.tool_call_id !== undefined && !results.has(r.tool_call_id)) results.set(r.tool_call_id, r);
        }
      }
      for (const c of m.tool_calls ?? []) {
        const answer = results.get(c.id);
        if (answer !== undefined) paired.add(answer);
        const result = answer === undefined ? undefined : messageText(answer);
        const items = yield* callFacts(c.function.name, c.function.arguments);
        // Appended one by one: a huge output has more facts than a call may take as arguments.
        if (result !== undefined) {
          items.push(ARROW);
          for (const f of yield* outputFacts(result)) items.push(f);
        }
        lines.push({ head: "called", items, sticky: false });
      }
    } else if (m.role === "tool" && !paired.has(m)) {
      lines.push({ head: "tool:", items: yield* outputFacts(text), sticky: false });
    }
  }
  return lines;
}

/** A previous facts summary read back as lines (each line's items are separated by "; "). */
function previousLines(previous: string): Line[] {
  return previous
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const m = /^(user \[open\]:|user:|assistant:|called|tool:)\s?(.*)$/.exec(l);
      if (m === null) return { head: "", items: [{ text: l, rank: Rank.Value }], sticky: false };
      // A request that was open then was answered since (it is no longer the newest): it is kept as an answered one.
      const head = m[1] === "user [open]:" ? "user:" : m[1];
      // Plain words come after " | " (see render), so a fold keeps their low rank.
      const [specific, plain = ""] = m[2].split(" | ", 2);
      const items = specific
        .split("; ")
        .filter((t) => t !== "")
        .map((t, n, all): Item => {
          if (t === "->") return ARROW;
          if (head === "called" && n === 0) return { text: t, rank: Rank.Vital, structural: true };
          // A call's arguments (before its "->") keep their rank.
          if (head === "called" && !all.slice(0, n).includes("->")) return { text: t, rank: Rank.Vital };
          return { text: t, rank: classify(t) };
        });
      for (const t of plain.split("; ")) if (t !== "") items.push({ text: t, rank: Rank.Word });
      return { head, items, sticky: false };
    });
}

/** The rank an item would have been extracted with (for items read back from a previous summary). */
function classify(text: string): Rank {
  return ERROR_LINE.test(text) ? Rank.Error : valueRank(text);
}

/** A line: its head, the specific items, then " | " and the plain words (so a later fold can tell them apart). */
function render(l: Line): string {
  const specific = l.items.filter((f) => f.rank > Rank.Word).map((f) => f.text);
  const plain = l.items.filter((f) => f.rank === Rank.Word).map((f) => f.text);
  // A result whose facts were all dropped or are said later leaves its arrow pointing at nothing.
  if (plain.length === 0 && specific[specific.length - 1] === ARROW.text) specific.pop();
  return `${l.head}${l.head === "" ? "" : " "}${specific.join("; ")}${plain.length === 0 ? "" : ` | ${plain.join("; ")}`}`;
}

/** The facts summary of a request, within `maxTokens`. */
export function factsSummary(request: SummaryRequest): string {
  return finish(summaryOf(request));
}

/** factsSummary with a turn of the event loop every YIELD_WORK characters or items (the proxy's path). */
export function factsSummaryYielding(request: SummaryRequest): Promise<string> {
  return finishYielding(summaryOf(request));
}

function* summaryOf(request: SummaryRequest): Steps<string> {
  const lines = [...(request.previous ? previousLines(request.previous) : []), ...(yield* linesOf(request.messages))];
  // Latest mention wins: walk newest first and drop what a later line already says.
  const seen = new Set<string>();
  let walked = 0;
  for (let k = lines.length - 1; k >= 0; k--) {
    const kept: Item[] = [];
    for (const f of lines[k].items) {
      if (++walked % YIELD_WORK === 0) yield;
      if (f.structural === true) {
        kept.push(f);
        continue;
      }
      const key = f.text.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      kept.push(f);
    }
    lines[k].items = kept;
  }
  // Past the budget's count of one rank's items in one line, an item can never be kept (the
  // items before it in its line, dropped after it, would already fill the budget): a huge tool
  // output is cut to that here, so the work below does not grow with it.
  const cut = lines.map((l) => {
    const count = new Map<Rank, number>();
    const before = l.items.length;
    l.items = l.items.filter((f) => {
      if (f.structural === true) return true;
      const n = count.get(f.rank) ?? 0;
      count.set(f.rank, n + 1);
      return n < request.maxTokens;
    });
    return l.items.length < before;
  });
  const tail = request.knownNames && request.knownNames.length > 0 ? `Variables: ${request.knownNames.join(", ")}` : undefined;
  const tailCost = tail === undefined ? 0 : countTokens(tail) + 1;
  const cost = (l: Line): number => (l.items.length === 0 && !l.sticky ? 0 : countTokens(render(l)) + 1);
  const total = lines.reduce((n, l) => n + cost(l), tailCost);
  // Drop the least specific, oldest items until the summary fits. Line costs are estimates
  // (tokens merge across the joins), so the text is counted again and trimmed further if needed.
  // Within a rank, each line's later items go before any line's first ones: a tight budget then
  // keeps one value of every old message rather than every value of the newest (far facts are
  // what a summary is for).
  const order: Array<{ line: number; pos: number; item: Item }> = [];
  lines.forEach((l, k) => {
    const seen = new Map<Rank, number>();
    for (const item of l.items) {
      const pos = seen.get(item.rank) ?? 0;
      seen.set(item.rank, pos + 1);
      order.push({ line: k, pos, item });
    }
  });
  order.sort((a, b) => a.item.rank - b.item.rank || b.pos - a.pos || a.line - b.line);
  const text = (): string => {
    const out = lines.filter((l) => l.items.length > 0 || l.sticky).map(render);
    if (tail !== undefined) out.push(tail);
    return out.join("\n");
  };
  // The lines once the first k items of the order are dropped (a line that lost an item and is
  // left with only its structure is emptied, as dropNext empties it), and their estimated total.
  // Positions are per line (one ARROW object is in every call's line); an object twice in a line
  // goes at its first turn, as dropNext's filter takes both.
  const all = lines.map((l) => l.items);
  const positions = lines.map(() => new Map<Item, number>());
  order.forEach((o, n) => {
    if (!positions[o.line].has(o.item)) positions[o.line].set(o.item, n);
  });
  const itemsAt = (k: number): Item[][] =>
    all.map((items, i) => {
      const kept = items.filter((f) => (positions[i].get(f) as number) >= k);
      return (kept.length < items.length || cut[i]) && kept.every((f) => f.structural === true) ? [] : kept;
    });
  const totalAt = (k: number): number => itemsAt(k).reduce((n, items, i) => n + cost({ ...lines[i], items }), tailCost);
  // The fewest drops that bring the estimate within budget, found by bisection: the total only
  // falls as items go, and dropping one at a time recounted a huge line once per item.
  let next = 0;
  if (total > request.maxTokens) {
    let lo = 0;
    let hi = order.length;
    while (lo + 1 < hi) {
      const mid = (lo + hi) >>> 1;
      if (totalAt(mid) > request.maxTokens) lo = mid;
      else hi = mid;
    }
    next = hi;
    itemsAt(next).forEach((items, i) => (lines[i].items = items));
  }
  const dropNext = (): void => {
    const { line, item } = order[next++];
    const l = lines[line];
    l.items = l.items.filter((f) => f !== item);
    if (l.items.every((f) => f.structural === true)) l.items = [];
  };
  let out = text();
  while (next < order.length && countTokens(out) > request.maxTokens) {
    for (let k = 0; k < 8 && next < order.length; k++) dropNext();
    out = text();
  }
  return out;
}

export const factsSummarizer: Summarizer = {
  name: "facts",
  usesLlm: false,
  summarize: async (request: SummaryRequest): Promise<SummaryResult> => ({ text: await factsSummaryYielding(request), llmCalls: 0, inputTokens: 0, outputTokens: 0 }),
};
