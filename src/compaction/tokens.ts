// Token counts with a real BPE tokenizer (o200k_base, the GPT-4o/GPT-5 family encoding),
// so compression statistics and the benchmark report tokens, not characters/4. Chat
// framing follows OpenAI's accounting: a few tokens per message, a few to prime the reply.
import { constants as zlibConstants, inflateSync } from "node:zlib";
import { setImmediate as nextTurn } from "node:timers/promises";
import { countTokens as bpeCount, encode } from "gpt-tokenizer";
import { isArrayArg, isObjectArg, isTokenCount, mustBe } from "../llm/args.js";
import { messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage, ContentPart } from "../llm/types.js";

/** Framing tokens of one chat message: start marker, role, separator, end marker. */
export const TOKENS_PER_MESSAGE = 4;
/** Tokens that prime the assistant's reply after the last message. */
export const TOKENS_PER_REPLY = 3;

// Special-token text in prompts (e.g. a tool result containing "<|endoftext|>") is counted
// as ordinary text instead of throwing: the prompt is data here, not a control channel.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

// Prompts repeat most messages from one turn to the next; counting each distinct text once
// makes per-turn statistics incremental. Bounded in texts and in the characters they hold (the
// proxy counts whole request bodies: 4,096 of 8 MB would be 32 GB): cleared wholesale when full.
const CACHE_LIMIT = 4096;
const CACHE_CHARS = 1 << 23;
const cache = new Map<string, number>();
let cachedChars = 0;

// The tokenizer merges each piece its pre-tokenizer splits off in time quadratic in the piece's
// length, and a run without a break is one piece: 100,000 dashes took 6 s, a megabyte minutes,
// enough for one request to stall the proxy. A run this long is cut into slices counted apart
// (a few tokens off at each cut, against a count that would never finish).
const LONG_RUN = 512;
const SLICE = 256;

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);

/**
 * The parts a text is counted in: as it is, unless it holds a run of LONG_RUN or more characters
 * that are all space or all not, which is cut into slices of SLICE (never between the halves of
 * a surrogate pair); null when it holds none. One pass over the text. Exported for tests.
 */
export function countedParts(text: string): string[] | null {
  if (text.length < LONG_RUN) return null;
  let out: string[] | null = null;
  let from = 0;
  let run = 0;
  while (run < text.length) {
    // The run of one kind (space or not) starting at `run`.
    const space = isSpace(text.charCodeAt(run));
    let end = run + 1;
    while (end < text.length && isSpace(text.charCodeAt(end)) === space) end++;
    if (end - run >= LONG_RUN) {
      out ??= [];
      if (run > from) out.push(text.slice(from, run));
      for (let i = run; i < end; ) {
        let j = Math.min(end, i + SLICE);
        if (j < end && (text.charCodeAt(j - 1) & 0xfc00) === 0xd800) j++;
        out.push(text.slice(i, j));
        i = j;
      }
      from = end;
    }
    run = end;
  }
  if (out !== null && from < text.length) out.push(text.slice(from));
  return out;
}

/** Tokens of a text, not cached. */
function uncachedCount(text: string): number {
  const split = countedParts(text);
  if (split === null) return bpeCount(text, AS_TEXT);
  let n = 0;
  for (const p of split) n += bpeCount(p, AS_TEXT);
  return n;
}

/** Tokens of a text. */
export function countTokens(text: string): number {
  if (typeof text !== "string") throw new TypeError(mustBe("countTokens: text", "a string", text));
  if (text.length === 0) return 0;
  const n = cache.get(text);
  return n === undefined ? remember(text, uncachedCount(text)) : n;
}

/** Keeps a text's count for the next request that sends it again (a conversation resends its history); returns it. */
function remember(text: string, n: number): number {
  if (text.length <= CACHE_CHARS) {
    if (cache.size >= CACHE_LIMIT || cachedChars + text.length > CACHE_CHARS) {
      cache.clear();
      cachedChars = 0;
    }
    cache.set(text, n);
    cachedChars += text.length;
  }
  return n;
}

/** A client's reported token figure when it is a count, else the tokens of `text` (what the call sent or got). */
export const counted = (reported: unknown, text: string): number => (isTokenCount(reported) ? reported : countTokens(text));

// What countTokensYielding counts between two turns of the event loop (a few ms), and how far past
// that it looks for a cut the pre-tokenizer makes too.
const YIELD_CHARS = 1 << 16;
const CUT_WINDOW = 4096;

/**
 * countTokens for a text of megabytes (a request body a server counts while it serves others):
 * counted in pieces of about YIELD_CHARS with a turn of the event loop between them, where the
 * whole count held every other request for its length (8 MB: over half a second). A piece ends
 * before a space that follows a non-space, where the tokenizer's pre-tokenizer ends a piece too,
 * so the total is countTokens'; only in a run of CUT_WINDOW characters without such a place (a
 * blob) is it cut where it stands, a token or two off. The count is kept as countTokens keeps one
 * (a blob's, a token or two off, as the message counts made from it are), so a long text a
 * conversation sends on every request is counted once. `keep` false: a text counted once and never again (a request body) is not cached even
 * when short, where it would push out texts counted again and again (a conversation's messages).
 */
export async function countTokensYielding(text: string, keep = true): Promise<number> {
  if (typeof text !== "string") throw new TypeError(mustBe("countTokensYielding: text", "a string", text));
  if (text.length <= YIELD_CHARS) return keep ? countTokens(text) : uncachedCount(text);
  // A long text a conversation sends again on every request (a pasted document) is counted once.
  const known = keep ? cache.get(text) : undefined;
  if (known !== undefined) return known;
  let n = 0;
  for (let from = 0; from < text.length; ) {
    let to = from + YIELD_CHARS;
    if (to >= text.length) to = text.length;
    else {
      const limit = Math.min(text.length, to + CUT_WINDOW);
      let at = to;
      while (at < limit && !(text.charCodeAt(at) === 32 && !isSpace(text.charCodeAt(at - 1)))) at++;
      if (at < limit) to = at;
      else if ((text.charCodeAt(to - 1) & 0xfc00) === 0xd800) to++;
    }
    n += uncachedCount(text.slice(from, to));
    from = to;
    if (from < text.length) await nextTurn();
  }
  return keep ? remember(text, n) : n;
}

/** Token ids of a text (for measuring shared prefixes token by token), cut as countTokens cuts it. */
export function tokenize(text: string): number[] {
  const split = countedParts(text);
  if (split === null) return encode(text, AS_TEXT);
  const out: number[] = [];
  for (const p of split) for (const t of encode(p, AS_TEXT)) out.push(t);
  return out;
}

// Messages are never mutated once built, so a count is kept per message object: a request that
// repeats 300 stored messages recounts none of them.
const perMessage = new WeakMap<ChatMessage, number>();

/** Tokens a message's name adds to its header: its own, and one more (OpenAI's accounting). */
export const nameTokens = (name: string): number => 1 + countTokens(name);

/** Tokens of one message including its framing, tool calls, name, media parts and audio reply. */
export function messageTokens(m: ChatMessage): number {
  let n = perMessage.get(m);
  if (n === undefined) {
    const calls = toolCallText(m);
    n = TOKENS_PER_MESSAGE + countTokens(messageText(m)) + (calls === "" ? 0 : countTokens(calls)) + nonTextTokens(m);
    perMessage.set(m, n);
  }
  return n;
}

/** A message's tokens besides its text and tool calls: media parts, name, audio reply. */
function nonTextTokens(m: ChatMessage): number {
  let n = Array.isArray(m.content) ? mediaTokens(m.content) : 0;
  if (m.name) n += nameTokens(m.name);
  return n + audioReplyTokens(m);
}

/**
 * promptTokens for a prompt of megabytes that a server counts while it serves others: a long
 * text is counted by countTokensYielding, and short messages a turn of the event loop apart every
 * YIELD_CHARS characters. Each count is kept per message, as messageTokens keeps it, so counting
 * the same messages again (a compaction, a charge) is free.
 */
export async function promptTokensYielding(messages: readonly ChatMessage[]): Promise<number> {
  if (!isArrayArg(messages)) throw new TypeError(mustBe("promptTokensYielding: messages", "an array of chat messages", messages));
  let n = TOKENS_PER_REPLY;
  let since = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObjectArg(m)) throw new TypeError(mustBe(`promptTokensYielding: messages[${i}]`, "a chat message", m));
    let k = perMessage.get(m);
    if (k === undefined) {
      const text = messageText(m);
      const calls = toolCallText(m);
      if (text.length > YIELD_CHARS || calls.length > YIELD_CHARS) {
        k = TOKENS_PER_MESSAGE + (await countTokensYielding(text)) + (await countTokensYielding(calls)) + nonTextTokens(m);
        perMessage.set(m, k);
      } else {
        k = messageTokens(m);
        since += text.length + calls.length;
        if (since > YIELD_CHARS) {
          since = 0;
          await nextTurn();
        }
      }
    }
    n += k;
  }
  return n;
}

// Media parts. A provider bills an image by its pixels, not its bytes, so a remote URL of 30
// characters can cost hundreds of tokens and a base64 data URL far fewer than its length. The
// size is read from the image's header (a few dozen bytes decoded from the data URL, never the
// whole image); an image whose size is unknown (a remote URL, a file id) is counted as a
// 1024x1024 one, the example of OpenAI's guide.

/** OpenAI (gpt-4o family): an image at detail "low" is this many tokens; at "high" or "auto" the base of its tiles. */
export const IMAGE_BASE_TOKENS = 85;
/** OpenAI: tokens per 512-pixel tile of an image at detail "high" or "auto". */
export const IMAGE_TILE_TOKENS = 170;
/** Anthropic: an image is about width x height / 750 tokens, scaled to at most this many. */
const ANTHROPIC_IMAGE_MAX = 1600;
/** Assumed width and height of an image whose size is unknown. */
const UNKNOWN_SIDE = 1024;

// Files and spoken replies. A PDF is billed by its pages (Anthropic: 1,500 to 3,000 tokens of
// text a page, plus the page as an image; OpenAI likewise sends each page's text and image): a
// page counts at the low end of that range. A PDF sent as data counts its page objects; one sent
// by id or URL, or whose pages cannot be found, counts as one page. An assistant's earlier audio
// reply sent back by its id is billed as input sound whose length the id does not tell: it counts
// as 10 seconds (10 tokens a second).

/** Tokens of one page of a file part (a PDF). */
export const FILE_PAGE_TOKENS = 1_500;
/** Tokens of an assistant's audio reply given by id: 10 seconds of sound. */
export const AUDIO_REPLY_TOKENS = 100;

/** Tokens of the audio reply an assistant message refers to (`audio: { id }`); 0 for none. */
function audioReplyTokens(m: ChatMessage, least = false): number {
  if (least || m.role !== "assistant") return 0;
  const audio = (m as { audio?: unknown }).audio;
  return typeof field(audio, "id") === "string" ? AUDIO_REPLY_TOKENS : 0;
}

/**
 * Tokens of the non-text parts of a message (images, sound; text parts are counted as text).
 * `least`: an image of unknown size as the fewest it can be billed (one tile; nothing for
 * Anthropic's), for a check that must not mistake the assumed size for tokens sent.
 */
export function mediaTokens(parts: readonly ContentPart[], least = false): number {
  let n = 0;
  for (const p of parts) if (p.type !== "text" && typeof p.text !== "string") n += partTokens(p, least ? 1 : UNKNOWN_SIDE);
  return n;
}

/** mediaTokens over the parts lists of `messages` (their bytes in a request body do not bound these). */
export function messagesMediaTokens(messages: readonly ChatMessage[], least = false): number {
  let n = 0;
  for (const m of messages) {
    if (Array.isArray(m.content)) n += mediaTokens(m.content, least);
    n += audioReplyTokens(m, least);
  }
  return n;
}

const field = (o: unknown, key: string): unknown => (typeof o === "object" && o !== null ? (o as Record<string, unknown>)[key] : undefined);

/** Tokens of one non-text part, by the shape of the API that sent it; 0 for a part of no known kind. */
function partTokens(p: ContentPart, unknown: number): number {
  switch (p.type) {
    case "image_url": {
      // Chat completions: { image_url: { url, detail } } (or the URL alone).
      const url = typeof p.image_url === "string" ? p.image_url : field(p.image_url, "url");
      return openaiImageTokens(url, field(p.image_url, "detail") ?? p.detail, unknown);
    }
    case "input_image":
      // Responses: { image_url, file_id, detail }.
      return openaiImageTokens(p.image_url, p.detail, unknown);
    case "image": {
      // Anthropic: { source: { type: "base64", media_type, data } | { type: "url", url } }.
      const data = field(p.source, "data");
      const size = typeof data === "string" ? imageSize(data, 0) : undefined;
      return size === undefined && unknown === 1 ? 0 : anthropicImageTokens(size?.[0] ?? unknown, size?.[1] ?? unknown);
    }
    case "input_audio": {
      // Chat completions: { input_audio: { data, format } }.
      const data = field(p.input_audio, "data");
      return typeof data === "string" ? audioTokens(data) : 0;
    }
    case "file":
      // Chat completions { file: { file_data | file_id } }.
      return unknown === 1 ? 0 : fileTokens(field(p.file, "file_data"));
    case "input_file":
      // Responses { file_data | file_id | file_url }.
      return unknown === 1 ? 0 : fileTokens(p.file_data);
    case "document": {
      // Anthropic: a plain-text document (source "text", or "content" blocks) is billed as its
      // text, whose size is known (so the least count holds it too); a PDF as a file.
      const kind = field(p.source, "type");
      if (kind === "text") return documentText(field(p.source, "data"));
      if (kind === "content") return documentBlocks(field(p.source, "content"), unknown);
      return unknown === 1 ? 0 : fileTokens(kind === "base64" ? field(p.source, "data") : undefined);
    }
    default:
      return 0;
  }
}

/** Tokens of a file given as base64 data (a data URL or bare): its PDF pages, at least one. */
function fileTokens(data: unknown): number {
  if (typeof data !== "string") return FILE_PAGE_TOKENS;
  const from = data.startsWith("data:") ? data.indexOf(",") + 1 : 0;
  return FILE_PAGE_TOKENS * Math.max(1, pdfPages(Buffer.from(from === 0 ? data : data.slice(from), "base64")));
}

const PAGE = Buffer.from("/Page");
const TYPE = Buffer.from("/Type");
const OBJECT_STREAM = Buffer.from("/ObjStm");
const STREAM = Buffer.from("stream");
// What the object streams of one file may inflate to, in all: a few pages' worth of objects per
// kilobyte, while a deflate bomb stops here.
const INFLATED_LIMIT = 1 << 24;

const isPdfSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 12 || c === 13 || c === 0;
const isNameChar = (c: number | undefined): boolean => c !== undefined && ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57));

/**
 * The page objects (`/Type /Page`, not `/Pages`) of a PDF's bytes, those packed in deflated object
 * streams (PDF 1.5) too; 0 for no PDF. An object is counted by its number, as its last definition
 * says: a file saved with incremental updates appends each rewritten page again, one page still.
 */
export function pdfPages(bytes: Buffer): number {
  if (bytes.subarray(0, 1024 + 5).indexOf("%PDF-") < 0) return 0;
  // Each object number's last definition: where it stands in the file and whether it is a page.
  const defined = new Map<number, Definition>();
  let loose = pageObjects(bytes, objectHeaders(bytes), undefined, defined);
  const endOf = streamEnds(bytes);
  const budget = { left: INFLATED_LIMIT };
  for (let at = bytes.indexOf(OBJECT_STREAM); at >= 0 && budget.left > 0; at = bytes.indexOf(OBJECT_STREAM, at + 1)) {
    // The stream's data follows its dictionary's "stream" keyword and one end of line.
    let s = bytes.indexOf(STREAM, at);
    if (s < 0) break;
    s += STREAM.length;
    if (bytes[s] === 13) s++;
    if (bytes[s] === 10) s++;
    const end = endOf(s);
    const objects = inflateWithin(bytes.subarray(s, end < 0 ? bytes.length : end), budget);
    // Its objects stand where the stream does: before the definitions of a later update.
    if (objects !== undefined) loose += pageObjects(objects, streamHeaders(objects), s, defined);
    at = Math.max(at, s);
  }
  freeObjects(bytes, defined);
  freeStreamObjects(bytes, defined, budget, endOf);
  let pages = loose;
  for (const d of defined.values()) if (d.page) pages++;
  return pages;
}

const XREF = Buffer.from("xref");
const TRAILER = Buffer.from("trailer");
const XREF_STREAM = Buffer.from("/XRefStm");

/** The unsigned integer after `cursor.k` and the spaces there (the cursor moved past it), or undefined (the cursor past the spaces). */
function uintAt(bytes: Buffer, cursor: { k: number }): number | undefined {
  let k = cursor.k;
  while (k < bytes.length && isPdfSpace(bytes[k])) k++;
  let n = 0;
  const s = k;
  for (; k < bytes.length && k - s <= MAX_DIGITS && isDigit(bytes[k]); k++) n = n * 10 + bytes[k] - 48;
  cursor.k = k;
  return k === s || k - s > MAX_DIGITS ? undefined : n;
}

const startsWith = (bytes: Buffer, k: number, word: Buffer): boolean => {
  for (let i = 0; i < word.length; i++) if (bytes[k + i] !== word[i]) return false;
  return true;
};

/**
 * Marks the objects a cross-reference table frees ("f" entries) as no page, where the table stands
 * after their last definition: an update that deletes a page leaves the page's object in the file
 * and frees its number. A table whose trailer names a cross-reference stream (a hybrid file) frees
 * nothing: its free entries may stand for objects packed in object streams.
 */
function freeObjects(bytes: Buffer, defined: Map<number, Definition>): void {
  const cursor = { k: 0 };
  for (let at = bytes.indexOf(XREF); at >= 0; at = bytes.indexOf(XREF, at + XREF.length)) {
    // "startxref" ends with it; a table's keyword stands alone.
    if (isNameChar(bytes[at - 1]) || !isPdfSpace(bytes[at + XREF.length])) continue;
    let freed: number[] | undefined;
    cursor.k = at + XREF.length;
    // Subsections: "first count", then count entries of "offset generation n|f".
    for (let first = uintAt(bytes, cursor); first !== undefined; first = uintAt(bytes, cursor)) {
      const count = uintAt(bytes, cursor);
      if (count === undefined) break;
      let n = 0;
      for (; n < count && uintAt(bytes, cursor) !== undefined && uintAt(bytes, cursor) !== undefined; n++) {
        while (cursor.k < bytes.length && isPdfSpace(bytes[cursor.k])) cursor.k++;
        const kind = bytes[cursor.k++];
        if (kind === 102) (freed ??= []).push(first + n);
        else if (kind !== 110) break;
      }
      if (n < count) break;
    }
    // A table is read only where its trailer follows it (up to the next keyword, "startxref"):
    // each search then stops where the next table's starts, so the scan stays linear.
    const k = cursor.k;
    if (freed === undefined || !startsWith(bytes, k, TRAILER)) continue;
    const next = bytes.indexOf(XREF, k);
    if (bytes.subarray(k, next < 0 ? bytes.length : next).includes(XREF_STREAM)) continue;
    for (const number of freed) {
      const before = defined.get(number);
      if (before !== undefined && before.at <= at) defined.set(number, { at, page: false });
    }
  }
}

const XREF_TYPE = Buffer.from("/XRef");
// How far around a cross-reference stream's /Type its dictionary is looked for.
const DICTIONARY_WINDOW = 4096;

/**
 * The objects a cross-reference stream (PDF 1.5; the form an update takes in a file with object
 * streams) frees, its entries of type 0, marked as no page where the stream stands after their
 * last definition, as freeObjects does for a table. Its data is inflated within `budget` bytes in
 * all, its PNG predictor undone; a stream this reader cannot decode frees nothing.
 */
function freeStreamObjects(bytes: Buffer, defined: Map<number, Definition>, budget: { left: number }, endOf: (from: number) => number): void {
  for (let at = bytes.indexOf(XREF_TYPE); at >= 0 && budget.left > 0; at = bytes.indexOf(XREF_TYPE, at + XREF_TYPE.length)) {
    if (isNameChar(bytes[at + XREF_TYPE.length])) continue;
    let k = at - 1;
    while (k >= 0 && isPdfSpace(bytes[k])) k--;
    if (!(k >= TYPE.length - 1 && startsWith(bytes, k - TYPE.length + 1, TYPE))) continue;
    // Reading the dictionary is charged as an inflation is: a file of many bare ones is read a few thousand times at most.
    budget.left -= INFLATE_COST;
    const stream = bytes.subarray(at, at + DICTIONARY_WINDOW).indexOf(STREAM);
    if (stream < 0) continue;
    const from = Math.max(0, at - DICTIONARY_WINDOW);
    const opened = bytes.subarray(from, at).lastIndexOf(OBJ);
    const dict = bytes.toString("latin1", opened < 0 ? from : from + opened, at + stream);
    const widths = /\/W\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(dict)?.slice(1).map(Number);
    const filter = /\/Filter\s*\[?\s*\/(\w+)/.exec(dict)?.[1];
    if (widths === undefined || widths.some((w) => w > 8) || widths[0] + widths[1] + widths[2] === 0 || (filter !== undefined && filter !== "FlateDecode")) continue;
    let s = at + stream + STREAM.length;
    if (bytes[s] === 13) s++;
    if (bytes[s] === 10) s++;
    const end = endOf(s);
    const stored = bytes.subarray(s, end < 0 ? bytes.length : end);
    let data = filter === undefined ? stored : inflateWithin(stored, budget);
    if (data === undefined) continue;
    const predictor = Number(/\/Predictor\s+(\d+)/.exec(dict)?.[1] ?? 1);
    const size = widths[0] + widths[1] + widths[2];
    if (predictor >= 10) {
      const rows = unpredict(data, Number(/\/Columns\s+(\d+)/.exec(dict)?.[1] ?? 1));
      if (rows === undefined) continue;
      data = rows;
    } else if (predictor !== 1) continue;
    const index = /\/Index\s*\[([\d\s]*)\]/.exec(dict)?.[1].trim().split(/\s+/).map(Number) ?? [0, Number(/\/Size\s+(\d+)/.exec(dict)?.[1] ?? 0)];
    const field = (offset: number, width: number): number => {
      let v = 0;
      for (let i = 0; i < width; i++) v = v * 256 + data[offset + i];
      return v;
    };
    let offset = 0;
    for (let i = 0; i + 1 < index.length; i += 2) {
      for (let n = 0; n < index[i + 1] && offset + size <= data.length; n++, offset += size) {
        // A type field of width 0 means type 1 (in use).
        if ((widths[0] === 0 ? 1 : field(offset, widths[0])) !== 0) continue;
        const before = defined.get(index[i] + n);
        if (before !== undefined && before.at <= at) defined.set(index[i] + n, { at, page: false });
      }
    }
    at = Math.max(at, s);
  }
}

/** Rows filtered by PNG predictors (one byte per sample), each `columns` bytes after its filter-type byte, decoded; undefined for an unknown filter type. */
function unpredict(data: Buffer, columns: number): Buffer | undefined {
  const rows = Math.floor(data.length / (columns + 1));
  const out = Buffer.alloc(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (columns + 1)];
    for (let c = 0; c < columns; c++) {
      const x = data[r * (columns + 1) + 1 + c];
      const left = c > 0 ? out[r * columns + c - 1] : 0;
      const up = r > 0 ? out[(r - 1) * columns + c] : 0;
      const upLeft = r > 0 && c > 0 ? out[(r - 1) * columns + c - 1] : 0;
      let predicted: number;
      if (type === 0) predicted = 0;
      else if (type === 1) predicted = left;
      else if (type === 2) predicted = up;
      else if (type === 3) predicted = (left + up) >> 1;
      else if (type === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      } else return undefined;
      out[r * columns + c] = (x + predicted) & 255;
    }
  }
  return out;
}

// Each inflation is charged this much of the budget besides what it gives: the call itself (a
// zlib state of a few hundred kilobytes) costs about 0.1 ms, so a file of many small or broken
// streams (1.2 MB of "/ObjStm stream") made 80,000 of them.
const INFLATE_COST = 4096;

/** The inflated data, within `budget.left` bytes, charged to it; undefined when it is not deflated or damaged, or past the budget (which is then spent). */
function inflateWithin(data: Buffer, budget: { left: number }): Buffer | undefined {
  budget.left -= INFLATE_COST;
  if (budget.left <= 0) return undefined;
  try {
    const out = inflateSync(data, { maxOutputLength: budget.left, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    budget.left -= out.length;
    return out;
  } catch (e) {
    if ((e as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") budget.left = 0;
    return undefined;
  }
}

const ENDSTREAM = Buffer.from("endstream");

/**
 * Where the first "endstream" at or after a position is. A search from a later position reuses the
 * last answer while it still lies ahead: searched afresh from each of many streams left
 * unterminated, the rest of the file was read once per stream (1.2 MB of "/ObjStm stream" took 27 s).
 */
function streamEnds(bytes: Buffer): (from: number) => number {
  let searched = -1;
  let found = -1;
  return (from) => {
    if (searched < 0 || from < searched || (found >= 0 && found < from)) {
      searched = from;
      found = bytes.indexOf(ENDSTREAM, from);
    }
    return found;
  };
}

interface Definition {
  at: number;
  page: boolean;
}

/** Object headers in order: where each starts, and its number. */
interface Headers {
  at: number[];
  number: number[];
}

const OBJ = Buffer.from("obj");
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 48 && c <= 57;
// An object number has at most 10 digits (the cross-reference table's width): longer runs are no header.
const MAX_DIGITS = 10;

/** Where each `N G obj` header starts in plain bytes, with N, in order. Each walk back stops at the previous "obj", so the scan is linear. */
function objectHeaders(bytes: Buffer): Headers {
  const headers: Headers = { at: [], number: [] };
  let floor = 0;
  for (let at = bytes.indexOf(OBJ); at >= 0; at = bytes.indexOf(OBJ, at + OBJ.length)) {
    const from = floor;
    floor = at + OBJ.length;
    if (isNameChar(bytes[at + OBJ.length])) continue;
    // Back over spaces, the generation, spaces, and the number.
    let k = at - 1;
    if (k < from || !isPdfSpace(bytes[k])) continue;
    while (k >= from && isPdfSpace(bytes[k])) k--;
    const gen = k;
    while (k >= from && gen - k <= MAX_DIGITS && isDigit(bytes[k])) k--;
    if (k === gen || gen - k > MAX_DIGITS || k < from || !isPdfSpace(bytes[k])) continue;
    while (k >= from && isPdfSpace(bytes[k])) k--;
    const last = k;
    let number = 0;
    for (let scale = 1; k >= from && last - k <= MAX_DIGITS && isDigit(bytes[k]); k--, scale *= 10) number += (bytes[k] - 48) * scale;
    if (k === last || last - k > MAX_DIGITS || isNameChar(bytes[k])) continue;
    headers.at.push(k + 1);
    headers.number.push(number);
  }
  return headers;
}

/** An object stream's objects: its leading pairs of numbers (object number, offset after the pairs), in order. */
function streamHeaders(objects: Buffer): Headers {
  const ints: number[] = [];
  let k = 0;
  for (;;) {
    while (k < objects.length && isPdfSpace(objects[k])) k++;
    const s = k;
    while (k < objects.length && k - s <= MAX_DIGITS && isDigit(objects[k])) k++;
    if (k === s || k - s > MAX_DIGITS) break;
    ints.push(Number(objects.toString("latin1", s, k)));
  }
  // The objects follow the pairs (at /First, where the pairs end when the first offset is 0).
  const first = k;
  const headers: Headers = { at: [], number: [] };
  for (let i = 0; i + 1 < ints.length; i += 2) {
    const at = first + ints[i + 1];
    // Offsets out of order or past the end are no table this reader understands: its pages count loose.
    if (at > objects.length || (i > 0 && at < headers.at[headers.at.length - 1])) return { at: [], number: [] };
    headers.at.push(at);
    headers.number.push(ints[i]);
  }
  return headers;
}

/**
 * The `/Type /Page` entries of PDF objects in `bytes`: every one of `headers` defines its number in
 * `defined` unless a definition later in the file is there already, a page when such an entry falls
 * within it; the count of entries before any header is returned. The objects of an object stream
 * stand where the stream does (`streamAt`), in their order.
 */
function pageObjects(bytes: Buffer, headers: Headers, streamAt: number | undefined, defined: Map<number, Definition>): number {
  let loose = 0;
  let h = -1;
  let hPage = false;
  const close = (): void => {
    if (h < 0) return;
    const at = streamAt ?? headers.at[h];
    const before = defined.get(headers.number[h]);
    if (before === undefined || before.at <= at) defined.set(headers.number[h], { at, page: hPage });
  };
  for (let at = bytes.indexOf(PAGE); at >= 0; at = bytes.indexOf(PAGE, at + PAGE.length)) {
    if (isNameChar(bytes[at + PAGE.length])) continue;
    let k = at - 1;
    while (k >= 0 && isPdfSpace(bytes[k])) k--;
    if (!(k >= TYPE.length - 1 && bytes.subarray(k - TYPE.length + 1, k + 1).equals(TYPE))) continue;
    while (h + 1 < headers.at.length && headers.at[h + 1] <= at) {
      close();
      h++;
      hPage = false;
    }
    if (h < 0) loose++;
    else hPage = true;
  }
  close();
  for (h++; h < headers.at.length; h++) {
    hPage = false;
    close();
  }
  return loose;
}

const documentText = (data: unknown): number => (typeof data === "string" ? countTokens(data) : 0);

/** A "content" document's blocks: text blocks as text, images as images. */
function documentBlocks(blocks: unknown, unknown: number): number {
  if (!Array.isArray(blocks)) return 0;
  let n = 0;
  for (const b of blocks as unknown[]) {
    if (typeof b !== "object" || b === null) continue;
    const part = b as ContentPart;
    n += part.type === "text" ? documentText(part.text) : partTokens(part, unknown);
  }
  return n;
}

/** OpenAI bills audio input at one token per 100 ms. */
const AUDIO_TOKENS_PER_SECOND = 10;
/** Bytes per second of audio without a WAV header to say: MP3 at 128 kbit/s. */
const COMPRESSED_AUDIO_RATE = 16_000;

/** Tokens of a base64 sound: its length over its byte rate (a WAV header's, else MP3's usual), at 10 a second. */
function audioTokens(data: string): number {
  const b = (i: number) => byteAt(data, 0, i);
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
  const wav = b(0) === 0x52 && b(8) === 0x57 && b(9) === 0x41 && b(10) === 0x56 && b(31) >= 0;
  const rate = wav ? b(28) + b(29) * 256 + b(30) * 65536 + b(31) * 16777216 : COMPRESSED_AUDIO_RATE;
  return rate > 0 ? Math.ceil((Math.max(0, bytes - (wav ? 44 : 0)) / rate) * AUDIO_TOKENS_PER_SECOND) : 0;
}

function openaiImageTokens(url: unknown, detail: unknown, unknown: number): number {
  if (detail === "low") return IMAGE_BASE_TOKENS;
  const size = typeof url === "string" && url.startsWith("data:") ? imageSize(url, url.indexOf(",") + 1) : undefined;
  let w = size?.[0] ?? unknown;
  let h = size?.[1] ?? unknown;
  // Scaled to fit 2048 x 2048, then so that its shorter side is at most 768 (never enlarged).
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w = Math.floor(w * fit);
  h = Math.floor(h * fit);
  const short = Math.min(1, 768 / Math.min(w, h));
  w = Math.floor(w * short);
  h = Math.floor(h * short);
  return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * Math.ceil(w / 512) * Math.ceil(h / 512);
}

function anthropicImageTokens(w: number, h: number): number {
  // Scaled so that its long side is at most 1568 pixels, and to at most about 1,600 tokens.
  const fit = Math.min(1, 1568 / Math.max(w, h));
  return Math.min(ANTHROPIC_IMAGE_MAX, Math.ceil((Math.floor(w * fit) * Math.floor(h * fit)) / 750));
}

const B64 = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] = i;
B64[45] = 62; // "-" and "_": the URL-safe alphabet
B64[95] = 63;

/** Byte `i` of the base64 text in `s` from `from` on, decoded alone; -1 past its end or on a character that is not base64. */
function byteAt(s: string, from: number, i: number): number {
  const q = from + Math.floor(i / 3) * 4;
  const r = i % 3;
  const a = sextet(s, q + r);
  const b = sextet(s, q + r + 1);
  if (a < 0 || b < 0) return -1;
  return r === 0 ? ((a << 2) | (b >> 4)) & 255 : r === 1 ? ((a << 4) | (b >> 2)) & 255 : ((a << 6) | b) & 255;
}

const sextet = (s: string, k: number): number => {
  const c = k < s.length ? s.charCodeAt(k) : 128;
  return c < 128 ? B64[c] : -1;
};

/**
 * Width and height of a PNG, GIF, WebP or JPEG image from its header, given as base64 from
 * `from` on; undefined when it is none of these or the header is cut. Decodes only the header
 * bytes (a JPEG's segments are skipped by their lengths, at most 64 of them).
 */
export function imageSize(s: string, from: number): [number, number] | undefined {
  const at = (i: number) => byteAt(s, from, i);
  const be16 = (i: number) => (at(i) << 8) | at(i + 1);
  const le16 = (i: number) => at(i) | (at(i + 1) << 8);
  const le24 = (i: number) => le16(i) | (at(i + 2) << 16);
  const ok = (w: number, h: number): [number, number] | undefined => (w > 0 && h > 0 && at(0) >= 0 ? [w, h] : undefined);
  const b0 = at(0);
  if (b0 === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47) {
    if (at(23) < 0) return undefined;
    return ok(be16(16) * 65536 + be16(18), be16(20) * 65536 + be16(22));
  }
  if (b0 === 0x47 && at(1) === 0x49 && at(2) === 0x46) return at(9) < 0 ? undefined : ok(le16(6), le16(8));
  if (b0 === 0x52 && at(8) === 0x57 && at(9) === 0x45 && at(10) === 0x42 && at(11) === 0x50) {
    const kind = String.fromCharCode(at(12), at(13), at(14), at(15));
    if (kind === "VP8 " && at(29) >= 0) return ok(le16(26) & 0x3fff, le16(28) & 0x3fff);
    if (kind === "VP8L" && at(24) >= 0) return ok(1 + (((at(22) & 0x3f) << 8) | at(21)), 1 + (((at(24) & 0xf) << 10) | (at(23) << 2) | ((at(22) & 0xc0) >> 6)));
    if (kind === "VP8X" && at(29) >= 0) return ok(1 + le24(24), 1 + le24(27));
    return undefined;
  }
  if (b0 === 0xff && at(1) === 0xd8) {
    let pos = 2;
    for (let segments = 0; segments < 64; segments++) {
      if (at(pos) !== 0xff) return undefined;
      const marker = at(pos + 1);
      if (marker === 0xff) {
        pos++; // fill byte
        continue;
      }
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return at(pos + 8) < 0 ? undefined : ok(be16(pos + 7), be16(pos + 5));
      }
      if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        pos += 2;
        continue;
      }
      const len = be16(pos + 2);
      if (at(pos + 3) < 0 || len < 2) return undefined;
      pos += 2 + len;
    }
  }
  return undefined;
}

/** Tokens of a whole prompt as the provider bills it. */
export function promptTokens(messages: readonly ChatMessage[]): number {
  if (!isArrayArg(messages)) throw new TypeError(mustBe("promptTokens: messages", "an array of chat messages", messages));
  let n = TOKENS_PER_REPLY;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObjectArg(m)) throw new TypeError(mustBe(`promptTokens: messages[${i}]`, "a chat message", m));
    n += messageTokens(m);
  }
  return n;
}
