// The one token measure on text a real conversation can hold: a run of one character with no
// break (a divider, a blob, padding) is one piece to the tokenizer, whose merge is quadratic in a
// piece's length (100,000 dashes: 6 s; a megabyte: minutes). Such runs are counted in slices, so
// no piece the tokenizer gets is long. How long a count takes is bench:proxy's row "one 100 KB
// line without a break"; here, what is counted.
import v8 from "node:v8";
import vm from "node:vm";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.js";
import { AUDIO_REPLY_TOKENS, countedParts, countTokens, countTokensYielding, FILE_PAGE_TOKENS, imageSize, messagesMediaTokens, messageTokens, promptTokens, promptTokensYielding, tokenize } from "../../src/compaction/tokens.js";
import { outputTokens } from "../../src/compaction/measure.js";
import { messageText } from "../../src/llm/messages.js";
import type { ChatMessage, ContentPart } from "../../src/llm/types.js";
import { loopTurns } from "../support/loop-turns.js";

/** The longest run of characters that are all space or all not. */
function longestRun(text: string): number {
  let best = 0;
  for (const m of text.matchAll(/\S+|\s+/g)) best = Math.max(best, m[0].length);
  return best;
}

const LONG = ["-".repeat(100_000), "a".repeat(100_000), " ".repeat(50_000), "😀".repeat(20_000), `${"word ".repeat(2_000)}${"=".repeat(10_000)} end ${"\n".repeat(3_000)}x`, ("x".repeat(511) + " ").repeat(100)];

describe("countTokens on long runs", () => {
  it("gives the tokenizer no run of 512 characters or more, and loses no character", () => {
    for (const text of LONG) {
      const parts = countedParts(text) ?? [text];
      expect(parts.join("")).toBe(text);
      for (const p of parts) expect(longestRun(p)).toBeLessThan(512);
    }
    expect(countedParts("x".repeat(511) + " ")).toBeNull();
  });

  it("counts what tokenize gives, within the tokenizer's range for such text", () => {
    for (const text of LONG) {
      const n = countTokens(text);
      expect(tokenize(text)).toHaveLength(n);
      expect(n).toBeGreaterThan(text.length / 128);
      expect(n).toBeLessThanOrEqual(text.length);
    }
  });

  it("leaves text without long runs as the tokenizer counts it, and never cuts a surrogate pair", () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(200);
    expect(countedParts(prose)).toBeNull();
    expect(countTokens(prose)).toBe(tokenize(prose).length);
    expect(countTokens("hello world")).toBe(2);
    for (const p of countedParts("😀".repeat(1_000)) ?? []) expect(p.length % 2).toBe(0);
    expect(countTokens("😀".repeat(1_000))).toBe(1_000);
  });
});

// Images are billed by their pixels (OpenAI, gpt-4o family: 85 tokens at detail "low", else 85 +
// 170 per 512-pixel tile after scaling to fit 2048 x 2048 and a shorter side of at most 768).
// The measure reads an image's size from its header only; a remote URL counts as 1024 x 1024.
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const le16 = (n: number) => [n & 255, (n >> 8) & 255];
const png = (w: number, h: number) => Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, ...be32(w), ...be32(h), 8, 6, 0, 0, 0]);
// A JPEG whose size comes after a 40 KB metadata segment, as a camera's EXIF block puts it.
const jpeg = (w: number, h: number) =>
  Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]), Buffer.from([0xff, 0xe1, 0xa0, 0x00]), Buffer.alloc(0xa000 - 2, 7), Buffer.from([0xff, 0xc0, 0, 17, 8, (h >> 8) & 255, h & 255, (w >> 8) & 255, w & 255, 3])]);
const gif = (w: number, h: number) => Buffer.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, ...le16(w), ...le16(h), 0, 0, 0]);
const webp = (w: number, h: number) => Buffer.from([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x58, 10, 0, 0, 0, 0, 0, 0, 0, ...le16(w - 1), 0, ...le16(h - 1), 0]);
const dataUrl = (type: string, bytes: Buffer) => `data:image/${type};base64,${bytes.toString("base64")}`;
const imageMessage = (url: string, detail?: string): ChatMessage => ({ role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url, ...(detail === undefined ? {} : { detail }) } }] });
const TEXT_ONLY = messageTokens({ role: "user", content: [{ type: "text", text: "look" }] });

describe("media parts", () => {
  it("reads an image's size from the header of its data URL: PNG, JPEG past its metadata, GIF, WebP", () => {
    expect(imageSize(png(1920, 1080).toString("base64"), 0)).toEqual([1920, 1080]);
    expect(imageSize(jpeg(4032, 3024).toString("base64"), 0)).toEqual([4032, 3024]);
    expect(imageSize(gif(300, 200).toString("base64"), 0)).toEqual([300, 200]);
    expect(imageSize(webp(1500, 4000).toString("base64"), 0)).toEqual([1500, 4000]);
    // Only the header is decoded: what follows it may be anything.
    expect(imageSize(png(640, 480).toString("base64") + "!!not base64!!".repeat(1000), 0)).toEqual([640, 480]);
    expect(imageSize("not an image", 0)).toBeUndefined();
    expect(imageSize(png(640, 480).toString("base64").slice(0, 20), 0)).toBeUndefined();
  });

  it("counts an image as the provider bills it, by detail and size", () => {
    const image = (url: string, detail?: string) => messageTokens(imageMessage(url, detail)) - TEXT_ONLY;
    expect(image(dataUrl("png", png(4000, 4000)), "low")).toBe(85);
    // OpenAI's examples: 1024 x 1024 is 4 tiles, 2048 x 4096 scales to 768 x 1536, 6 tiles.
    expect(image(dataUrl("png", png(1024, 1024)), "high")).toBe(765);
    expect(image(dataUrl("jpeg", jpeg(2048, 4096)))).toBe(1105);
    expect(image(dataUrl("gif", gif(300, 200)), "auto")).toBe(255);
    expect(image(dataUrl("webp", webp(1920, 1080)))).toBe(1105);
    expect(image("https://example.com/screenshot.png")).toBe(765);
  });

  it("fires usage-ratio on a conversation of screenshots before the model's window overflows", async () => {
    // 150 steps, each a 1920 x 1080 screenshot (1,105 tokens): 165,750 tokens of images for gpt-4o's 128,000.
    const messages: ChatMessage[] = [{ role: "system", content: "You operate a browser." }, { role: "user", content: "Book the cheapest flight to Oslo." }];
    for (let i = 0; i < 150; i++) {
      messages.push({ role: "assistant", content: `clicking step ${i}` });
      messages.push({ role: "user", content: [{ type: "text", text: `screen ${i}` }, { type: "image_url", image_url: { url: dataUrl("png", png(1920, 1080)) } }] });
    }
    expect(promptTokens(messages)).toBeGreaterThan(150 * 1105);
    const r = await compact(messages, { name: "usage-ratio" }, { model: "gpt-4o" });
    expect(r.events.map((e) => e.kind)).toContain("compacted");
    expect(r.stats.tokensOut).toBeLessThan(128_000);
  });
});

describe("audio parts", () => {
  // OpenAI bills audio input at one token per 100 ms: a minute is 600 tokens, whatever its encoding.
  const wav = (seconds: number, rate = 32_000) => {
    const head = Buffer.alloc(44);
    head.write("RIFF", 0);
    head.write("WAVEfmt ", 8);
    head.writeUInt32LE(rate, 28);
    head.write("data", 36);
    return Buffer.concat([head, Buffer.alloc(seconds * rate)]).toString("base64");
  };
  const voice = (data: string, format: string): ChatMessage => ({ role: "user", content: [{ type: "input_audio", input_audio: { data, format } }] });
  const EMPTY = messageTokens({ role: "user", content: [] });

  it("count a sound by its length: a WAV by its header's byte rate, an MP3 at 128 kbit/s", () => {
    expect(messageTokens(voice(wav(60), "wav")) - EMPTY).toBe(600);
    expect(messageTokens(voice(wav(30, 88_200), "wav")) - EMPTY).toBe(300);
    expect(messageTokens(voice(Buffer.alloc(60 * 16_000).toString("base64"), "mp3")) - EMPTY).toBe(600);
  });

  it("fire usage-ratio on a voice conversation before the window overflows", async () => {
    // Ten one-minute voice notes: 6,000 tokens for a 5,000-token window (counted as nothing before).
    const messages: ChatMessage[] = [{ role: "system", content: "You transcribe and answer." }, { role: "user", content: "Listen to my notes." }];
    for (let i = 0; i < 10; i++) messages.push({ role: "assistant", content: `noted ${i}` }, voice(wav(60, 8_000), "wav"));
    expect(promptTokens(messages)).toBeGreaterThan(6_000);
    const r = await compact(messages, { name: "usage-ratio", options: { contextLimit: 5_000 } });
    expect(r.events.map((e) => e.kind)).toContain("compacted");
  });
});

describe("message names", () => {
  // OpenAI's accounting: a name costs its own tokens plus one; a group chat names every message.
  const NAME = "research_assistant_number_seven_of_the_planning_group";

  it("count a message's name by its tokens, plus one", () => {
    const plain = messageTokens({ role: "user", content: "ok" });
    expect(messageTokens({ role: "user", content: "ok", name: NAME })).toBe(plain + 1 + countTokens(NAME));
    expect(messageTokens({ role: "user", content: "ok", name: "a" })).toBe(plain + 2);
  });

  it("fire usage-ratio on a group chat whose names carry the prompt past the window", async () => {
    const messages: ChatMessage[] = [{ role: "system", content: "You moderate the planning group." }, { role: "user", content: "Plan the offsite.", name: NAME }];
    for (let i = 0; i < 60; i++) messages.push({ role: "assistant", content: `noted ${i}` }, { role: "user", content: `idea ${i}`, name: NAME });
    // 61 names of 11 tokens: 671 more tokens, a 1,654-token prompt, which overflows a
    // 1,500-token window (counted at one token a name, it was 983: 66% full, nothing to do).
    expect(promptTokens(messages)).toBeGreaterThan(1_500);
    const r = await compact(messages, { name: "usage-ratio", options: { contextLimit: 1_500 } });
    expect(r.events.map((e) => e.kind)).toContain("compacted");
  });
});

describe("legacy function calls", () => {
  // OpenAI's older function calling: an assistant message carries `function_call` ({ name, arguments }) instead of tool_calls.
  const args = JSON.stringify({ path: "report.md", text: "The quarterly figures rose by 12 percent in the north region. ".repeat(200) });
  const legacy = { role: "assistant", content: null, function_call: { name: "write_file", arguments: args } } as never as ChatMessage;

  it("count the call's name and arguments, as a tool call's are", () => {
    const asTool: ChatMessage = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "write_file", arguments: args } }] };
    expect(messageTokens(legacy)).toBe(messageTokens(asTool));
    expect(outputTokens(legacy)).toBe(outputTokens(asTool));
    expect(messageTokens(legacy)).toBeGreaterThan(countTokens(args));
  });

  it("fire usage-ratio on a conversation whose function call arguments carry it past the window", async () => {
    const messages = [{ role: "system", content: "You write files." }, { role: "user", content: "Write the report." }, legacy, { role: "function", name: "write_file", content: "ok" }, { role: "assistant", content: "Written." }, { role: "user", content: "Thanks." }] as never as ChatMessage[];
    const r = await compact(messages, { name: "usage-ratio", options: { contextLimit: 2_000 } });
    expect(r.stats.tokensIn).toBeGreaterThan(2_000);
    expect(r.events.map((e) => e.kind)).not.toEqual([]);
  });
});

describe("refusals", () => {
  // OpenAI's reply when the model declines: the text is in `refusal` (content null), or a content part of type "refusal". It is sent back, and billed, like content.
  const R = "I'm sorry, but I can't help with writing that letter for the account holder.";

  it("count a refusal's text as the message's words, in a prompt and as a reply", () => {
    const said: ChatMessage = { role: "assistant", content: R };
    const refused = { role: "assistant", content: null, refusal: R } as never as ChatMessage;
    const part = { role: "assistant", content: [{ type: "refusal", refusal: R }] } as never as ChatMessage;
    for (const m of [refused, part]) {
      expect(messageText(m)).toBe(R);
      expect(messageTokens(m)).toBe(messageTokens(said));
      expect(outputTokens(m)).toBe(outputTokens(said));
    }
    // What the SDKs write beside a reply that did not refuse counts nothing.
    expect(messageTokens({ role: "assistant", content: "ok", refusal: null } as never as ChatMessage)).toBe(messageTokens({ role: "assistant", content: "ok" }));
  });
});

// A PDF sent as a file part, or an earlier spoken reply sent back by its id, is billed, but it
// counted as nothing: compression decisions and ptc compare took it for free. A file counts as
// one page (FILE_PAGE_TOKENS), a spoken reply by id as AUDIO_REPLY_TOKENS, the sizes not being read.
describe("files and audio replies are not free", () => {
  const pdf = `data:application/pdf;base64,${Buffer.from("%PDF-1.7\n".repeat(50)).toString("base64")}`;
  const bare = promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }] }]);
  it.each([
    ["a chat-completions file part", { type: "file", file: { filename: "a.pdf", file_data: pdf } }],
    ["a chat-completions file by id", { type: "file", file: { file_id: "file-abc" } }],
    ["a Responses input_file", { type: "input_file", file_data: pdf, filename: "a.pdf" }],
    ["an Anthropic PDF document", { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf.slice(pdf.indexOf(",") + 1) } }],
  ])("%s counts as a page", (_label, part) => {
    const withFile = promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, part as ContentPart] }]);
    expect(withFile - bare).toBe(FILE_PAGE_TOKENS);
  });

  // Every file counted as one page whatever it held: a 40-page PDF sent as file_data cost
  // 1,500 tokens in a budget or a cost comparison, where the provider bills 40 pages.
  it.each([
    ["with its pages in plain objects", false],
    ["with its pages in a compressed object stream (PDF 1.5)", true],
  ])("a PDF sent as data counts one page per page it holds, %s", (_label, packed) => {
    const data = pdfOf(40, packed);
    const shapes: ContentPart[] = [
      { type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${data}` } },
      { type: "input_file", file_data: `data:application/pdf;base64,${data}`, filename: "a.pdf" },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data } },
    ];
    for (const part of shapes) {
      const withFile = promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, part] }]);
      expect(withFile - bare).toBe(40 * FILE_PAGE_TOKENS);
    }
  });

  // A PDF saved with incremental updates appends each rewritten object again under its number:
  // a 3-page file whose pages were annotated and saved twice counted 9 pages, the provider bills 3.
  it.each([
    ["plain objects", false],
    ["objects in compressed object streams", true],
  ])("a PDF saved with incremental updates counts each page object once, by its number (%s)", (_label, packed) => {
    const base = Buffer.from(pdfOf(3, packed), "base64");
    const update = (note: string): string =>
      packed
        ? objectStream(10 + note.length, [3, 4, 5].map((n) => [n, `<</Type/Page/Parent 2 0 R/Annots [] /Contents (${note})>>`]))
        : [3, 4, 5].map((n) => `${n} 0 obj\n<< /Type /Page /Parent 2 0 R /Contents (${note}) >>\nendobj\n`).join("") + "trailer\n<< /Root 1 0 R >>\n%%EOF\n";
    // A page replaced by a non-page object in an update is no page any more; a new page counts.
    const last = "5 0 obj\n<< /Type /XObject >>\nendobj\n9 0 obj\n<< /Type /Page /Parent 2 0 R >>\nendobj\n%%EOF\n";
    const saved = Buffer.concat([base, Buffer.from(update("first"), "latin1"), Buffer.from(update("second"), "latin1"), Buffer.from(last)]).toString("base64");
    const withFile = promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, { type: "input_file", file_data: saved, filename: "a.pdf" }] }]);
    expect(withFile - bare).toBe(3 * FILE_PAGE_TOKENS);
  });

  // A page deleted by an incremental update stays in the file; the update's cross-reference table
  // marks its number free ("f"), and the page tree no longer lists it: a 4-page file with one
  // page deleted counted 4 pages, the provider bills 3.
  it("a PDF whose update frees a page in its cross-reference table does not count that page; a number used again after it does", () => {
    const base = Buffer.from(pdfOf(4, false), "base64").toString("latin1");
    const deletion = (xref: string): string => `2 0 obj\n<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>\nendobj\n${xref}trailer\n<< /Root 1 0 R /Size 7 /Prev 9 >>\nstartxref\n${base.length}\n%%EOF\n`;
    // One subsection per entry, then one for a run of entries (object 6 freed among 5 and 6), with "\r\n" ends as some writers put them.
    const tables = ["xref\n0 1\n0000000000 65535 f \n2 1\n0000000123 00000 n \n6 1\n0000000000 00001 f \n", "xref\r\n0 1\r\n0000000000 65535 f\r\n2 1\r\n0000000123 00000 n\r\n5 2\r\n0000000234 00000 n\r\n0000000000 00001 f\r\n"];
    const pages = (pdf: string): number => (promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, { type: "input_file", file_data: Buffer.from(pdf, "latin1").toString("base64") }] }]) - bare) / FILE_PAGE_TOKENS;
    for (const xref of tables) expect(pages(base + deletion(xref))).toBe(3);
    // A later update that writes object 6 as a page again brings it back.
    expect(pages(base + deletion(tables[0]) + "6 1 obj\n<< /Type /Page /Parent 2 0 R >>\nendobj\n%%EOF\n")).toBe(4);
    // "startxref" is no table, and a table whose trailer points to a cross-reference stream
    // (a hybrid file, whose free entries stand for objects in object streams) frees nothing.
    expect(pages(base + deletion(tables[0]).replace("/Prev 9", "/Prev 9 /XRefStm 77"))).toBe(4);
  });

  // A file with object streams records an update in a cross-reference stream, whose type-0
  // entries free a number as a table's "f" entries do: the deleted page counted still.
  it.each([
    ["plain", false, false],
    ["deflated", true, false],
    ["deflated, rows PNG-predicted (Up), without /Index", true, true],
  ])("a PDF whose update frees a page in a cross-reference stream (%s) does not count that page", (_label, deflated, predicted) => {
    const base = Buffer.from(pdfOf(4, false), "base64");
    // Entries of 1 + 2 + 1 bytes: type, offset (or next free number), generation.
    const entries = predicted
      ? [[0, 0, 0, 255], [1, 0, 9, 0], [1, 0, 40, 0], [1, 0, 90, 0], [1, 0, 140, 0], [1, 0, 190, 0], [0, 0, 0, 1], [1, 1, 20, 0]]
      : [[1, 1, 4, 0], [0, 0, 0, 1]];
    const rows = predicted ? entries.flatMap((e, r) => [2, ...e.map((b, c) => (b - (r === 0 ? 0 : entries[r - 1][c]) + 256) & 255)]) : entries.flat();
    const raw = Buffer.from(rows);
    const data = deflated ? deflateSync(raw) : raw;
    const dict = `/Type /XRef /W [1 2 1] /Size 8 ${predicted ? "/DecodeParms << /Columns 4 /Predictor 12 >>" : "/Index [2 1 6 1]"} ${deflated ? "/Filter /FlateDecode " : ""}/Root 1 0 R /Prev 9 /Length ${data.length}`;
    const update = Buffer.concat([Buffer.from(`2 0 obj\n<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>\nendobj\n7 0 obj\n<< ${dict} >>\nstream\n`), data, Buffer.from(`\nendstream\nendobj\nstartxref\n${base.length}\n%%EOF\n`)]);
    const pages = (pdf: Buffer): number => (promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, { type: "input_file", file_data: pdf.toString("base64") }] }]) - bare) / FILE_PAGE_TOKENS;
    expect(pages(Buffer.concat([base, update]))).toBe(3);
    expect(pages(Buffer.concat([base, update, Buffer.from("6 1 obj\n<< /Type /Page /Parent 2 0 R >>\nendobj\n%%EOF\n")]))).toBe(4);
    // Entries of no width frees nothing (and is not read a billion times over).
    expect(pages(Buffer.concat([base, Buffer.from("8 0 obj\n<< /Type /XRef /W [0 0 0] /Size 999999999 >>\nstream\nabc\nendstream\nendobj\n")]))).toBe(4);
  });

  it("a file that is no PDF, or an object stream that inflates past its bound, counts as one page", () => {
    const text = Buffer.from("just some notes, /Type /Page\n".repeat(20)).toString("base64");
    const bomb = Buffer.concat([Buffer.from("%PDF-1.5\n1 0 obj\n<< /Type /ObjStm /Filter /FlateDecode >>\nstream\n"), deflateSync(Buffer.alloc(1 << 25, 32)), Buffer.from("\nendstream\nendobj\n")]).toString("base64");
    for (const data of [text, bomb]) {
      const withFile = promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, { type: "input_file", file_data: data }] }]);
      expect(withFile - bare).toBe(FILE_PAGE_TOKENS);
    }
  });

  // A plain-text document was said to count as its text, but nothing counted it (its text is in
  // source.data, not a part's text): a 2,601-token report counted 0, a one-page PDF 1,500.
  it("an Anthropic plain-text document counts as its text, in either source shape, at the least too", () => {
    const report = "The quarterly report shows revenue of 4.2 million euros. ".repeat(200);
    const parts: ContentPart[] = [
      { type: "document", source: { type: "text", media_type: "text/plain", data: report } },
      { type: "document", source: { type: "content", content: [{ type: "text", text: report }] } },
    ];
    for (const part of parts) {
      const withDoc = promptTokens([{ role: "user", content: [{ type: "text", text: "Summarize this." }, part] }]);
      expect(withDoc - bare).toBe(countTokens(report));
      expect(messagesMediaTokens([{ role: "user", content: [part] }], true)).toBe(countTokens(report));
    }
  });

  it("an assistant's audio reply sent back by id counts as an assumed length of sound", () => {
    const reply: ChatMessage = { role: "assistant", content: null };
    const spoken = { role: "assistant", content: null, audio: { id: "audio_abc" } } as ChatMessage;
    expect(promptTokens([spoken]) - promptTokens([reply])).toBe(AUDIO_REPLY_TOKENS);
  });
});

describe("countTokens' cache", () => {
  it("holds a bounded number of characters, not every long text it counted (the proxy counts whole request bodies)", () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // Twelve distinct 4 MB texts, as twelve embeddings bodies a budgeted key sends.
    for (let i = 0; i < 12; i++) expect(countTokens(`doc${i} ${"lorem ipsum dolor sit amet ".repeat(150_000)}`)).toBeGreaterThan(0);
    gc();
    // Before: 48 MB held (91 MB for ten 8 MB bodies through the proxy), until 4,096 texts were cached.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(24 << 20);
  });
});

describe("countTokensYielding", () => {
  it("counts a text of megabytes as countTokens does, giving the event loop turns while it counts", async () => {
    const prose = Array.from({ length: 40_000 }, (_, i) => `word${i % 977}, it's ${i}\n  more  text`).join(" ");
    const texts = [prose, `${"-".repeat(3_000)} ${prose}`, "😀 ".repeat(200_000), `${"=".repeat(600)} x`.repeat(400)];
    for (const text of texts) {
      const loop = loopTurns();
      // Not kept (false): countTokens below counts the text itself rather than read this count back.
      const n = await countTokensYielding(text, false);
      loop.stop();
      expect(n).toBe(countTokens(text));
      // One turn at least per 64 K characters: before, one count held the loop for the whole text.
      expect(loop.count()).toBeGreaterThanOrEqual(Math.floor(text.length / 65_536) - 1);
    }
    // A prompt: a long message, a long tool call and many short messages; each count is kept per message.
    // Texts not counted above (a count is kept by text, and a kept one takes no turn).
    const long = { role: "user" as const, content: `W${prose.slice(1)}` };
    const call = { role: "assistant" as const, content: null, tool_calls: [{ id: "c", type: "function" as const, function: { name: "f", arguments: `X${prose.slice(1)}` } }] };
    const short = Array.from({ length: 20_000 }, (_, i) => ({ role: "user" as const, content: `short ${i} message` }));
    const copy = (ms: ChatMessage[]) => ms.map((m) => ({ ...m }));
    const loop = loopTurns();
    const messages: ChatMessage[] = [long, call, ...short];
    const yielded = await promptTokensYielding(messages);
    loop.stop();
    expect(yielded).toBe(promptTokens(copy(messages)));
    expect(loop.count()).toBeGreaterThanOrEqual(Math.floor((prose.length * 2) / 65_536));
    expect(messageTokens(long)).toBe(messageTokens({ ...long }));
    // A blob without a place to cut is cut where it stands, a few tokens off per 64 K characters.
    const blob = Buffer.alloc(3_000_000, 7).toString("base64");
    expect(Math.abs((await countTokensYielding(blob, false)) - countTokens(blob))).toBeLessThan(100);
  });

  it("counts a long text a conversation sends again only once, as countTokens does", async () => {
    // The proxy counts a request's messages with it: a document pasted early in a conversation came
    // back on every request and was counted whole each time (100 KB: about 2 ms a request).
    const words = Array.from({ length: 30_000 }, (_, i) => `line ${i} of the pasted report`).join(" ");
    // A blob too (a base64 image in a message), whose pieces are cut where they stand.
    for (const doc of [words, Buffer.alloc(300_000, 7).toString("base64")]) {
      const first = loopTurns();
      const n = await countTokensYielding(doc);
      first.stop();
      expect(first.count()).toBeGreaterThanOrEqual(Math.floor(doc.length / 65_536) - 1);
      const again = loopTurns();
      // The same text as a new string, as the next request's parsed body holds it.
      expect(await countTokensYielding(JSON.parse(JSON.stringify(doc)) as string)).toBe(n);
      again.stop();
      expect(again.count()).toBe(0);
    }
  });
});

/** An incremental update's object stream (object `number`) holding the given objects. */
function objectStream(number: number, objects: Array<[number, string]>): string {
  let offset = 0;
  const table = `${objects.map(([n, body]) => {
    const entry = `${n} ${offset}`;
    offset += body.length + 1;
    return entry;
  }).join(" ")} `;
  const stream = deflateSync(Buffer.from(table + objects.map(([, b]) => b).join("\n")));
  return Buffer.concat([Buffer.from(`${number} 0 obj\n<< /Type /ObjStm /N ${objects.length} /First ${table.length} /Filter /FlateDecode /Length ${stream.length} >>\nstream\n`), stream, Buffer.from("\nendstream\nendobj\n%%EOF\n")]).toString("latin1");
}

/** A PDF of `pages` empty pages as base64, its page objects written plainly or packed into a deflated object stream. */
function pdfOf(pages: number, packed: boolean): string {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ");
  const pageObjects = Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n`).join("");
  const head = `%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n`;
  if (!packed) return Buffer.from(`${head}2 0 obj\n<< /Type /Pages /Kids [${kids}] /Count ${pages} >>\nendobj\n${pageObjects}trailer\n<< /Root 1 0 R >>\n%%EOF\n`).toString("base64");
  const bodies = [`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`, ...Array.from({ length: pages }, () => "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>")];
  let offset = 0;
  const index = bodies.map((b, i) => {
    const entry = `${i + 2} ${offset}`;
    offset += b.length + 1;
    return entry;
  });
  const table = `${index.join(" ")} `;
  const stream = deflateSync(Buffer.from(table + bodies.join("\n")));
  const objStm = Buffer.concat([Buffer.from(`${pages + 3} 0 obj\n<< /Type /ObjStm /N ${bodies.length} /First ${table.length} /Filter /FlateDecode /Length ${stream.length} >>\nstream\n`), stream, Buffer.from("\nendstream\nendobj\n")]);
  return Buffer.concat([Buffer.from(head), objStm, Buffer.from("trailer\n<< /Root 1 0 R >>\n%%EOF\n")]).toString("base64");
}
