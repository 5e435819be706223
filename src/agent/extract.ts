// Finds the one program in an LLM reply and repairs the typographic damage chat models and
// editors do to code (smart quotes, invisible characters), saying what was changed.
import { splitThinking } from "../llm/thinking.js";

export type ExtractionProblem = "no_code" | "multiple_blocks" | "empty";

export type Extraction =
  | {
      ok: true;
      program: string;
      /** What sanitising changed, for the feedback (empty when nothing was changed). */
      notes: string[];
    }
  | { ok: false; program: null; problem: ExtractionProblem; message: string; hint: string };

const PROGRAM_TAGS: ReadonlySet<string> = new Set(["clojure", "clj", "cljs", "lisp", "ptc-lisp", "ptc", "edn"]);

interface Block {
  tag: string;
  body: string;
  closed: boolean;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)/;

/** Whether a program is inside a string at the end of `line`, given whether it was at its start. */
function endsInString(line: string, inString: boolean): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    // An escape in a string, or a character literal (\") outside one.
    if (c === "\\") i++;
    else if (c === '"') inString = !inString;
    else if (c === ";" && !inString) return false;
  }
  return inString;
}

/**
 * Fenced blocks in order. An unclosed fence runs to the end (a reply cut off mid-program). In a
 * program's block, a fence line inside a string (a program writing markdown) is the string's:
 * the block ends at the first fence outside one, or at its first fence when every one is inside.
 */
function fencedBlocks(text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (open === null) continue;
    const fence = open[1];
    const tag = open[2].toLowerCase();
    // Only a block tagged as a program: an untagged one may be prose with a stray quote.
    const program = PROGRAM_TAGS.has(tag);
    const body: string[] = [];
    let closed = false;
    let inString = false;
    let first: { line: number; length: number } | undefined;
    for (i++; i < lines.length; i++) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines[i]);
      if (close !== null && close[1][0] === fence[0] && close[1].length >= fence.length) {
        if (!inString) {
          closed = true;
          break;
        }
        first ??= { line: i, length: body.length };
      }
      body.push(lines[i]);
      if (program) inString = endsInString(lines[i], inString);
    }
    if (!closed && first !== undefined) {
      i = first.line;
      body.length = first.length;
      closed = true;
    }
    blocks.push({ tag, body: body.join("\n"), closed });
  }
  return blocks;
}

const looksLikeCode = (s: string): boolean => /^[(;[{]/.test(s.trimStart());

const ONE_BLOCK_HINT = "reply with exactly one ```clojure fenced block holding the whole program";

/** Extracts exactly one program: a fenced clojure/lisp block, an untagged block of code, or a bare form. */
export function extractProgram(reply: string): Extraction {
  // Drafts in a reasoning block are not the program.
  const reasoned = splitThinking(reply.replace(/\r\n?/g, "\n").replace(/^\uFEFF/, ""));
  if (reasoned.unclosed) {
    return { ok: false, program: null, problem: "no_code", message: "your reply ended inside its <think> block, before any program", hint: ONE_BLOCK_HINT + " after the reasoning" };
  }
  const text = reasoned.answer;
  const blocks = fencedBlocks(text);
  const tagged = blocks.filter((b) => PROGRAM_TAGS.has(b.tag));
  const candidates = tagged.length > 0 ? tagged : blocks.filter((b) => b.tag === "" && looksLikeCode(sanitizeProgram(b.body).text));
  let source: string;
  if (candidates.length > 1) {
    return {
      ok: false,
      program: null,
      problem: "multiple_blocks",
      message: `your reply has ${candidates.length} code blocks; exactly one program is run per turn, and definitions are not shared between blocks`,
      hint: "put everything in one ```clojure block",
    };
  } else if (candidates.length === 1) {
    source = candidates[0].body;
  } else if (blocks.length === 0 && looksLikeCode(sanitizeProgram(text).text)) {
    source = text;
  } else {
    return {
      ok: false,
      program: null,
      problem: "no_code",
      message: blocks.length > 0 ? `no PTC-Lisp program found: your code block is tagged '${blocks[0].tag}', not clojure` : "no PTC-Lisp program found in your reply",
      hint: ONE_BLOCK_HINT,
    };
  }
  const { text: program, notes } = sanitizeProgram(source);
  if (program.trim() === "") return { ok: false, program: null, problem: "empty", message: "your code block is empty", hint: ONE_BLOCK_HINT };
  return { ok: true, program, notes };
}

const SMART_DOUBLE = "\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB";
const SMART_SINGLE = "\u2018\u2019\u201A\u201B\u2032";
// Never meaningful in code: zero-width characters, word joiner, BOM, soft hyphen, bidi marks.
const INVISIBLE = /[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD\u202A-\u202E]/;
// Spaces that look like a space but are not one to the reader.
const ODD_SPACE = /[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/;

/**
 * A zero-width joiner or non-joiner between two non-ASCII, non-space characters in a string is
 * data: it builds an emoji sequence ("👨‍👩‍👧" is one character, three without it) or spells a
 * Persian or Indic word. Next to ASCII, a space or a quote it only makes equal-looking strings
 * differ, so it is still removed there.
 */
function joins(source: string, i: number): boolean {
  const c = source.charCodeAt(i);
  if (c !== 0x200c && c !== 0x200d) return false;
  return joinable(source[i - 1]) && joinable(source[i + 1]);
}

function joinable(c: string | undefined): boolean {
  return c !== undefined && c.charCodeAt(0) > 0x7f && !/\s/.test(c) && !INVISIBLE.test(c) && !SMART_DOUBLE.includes(c) && !SMART_SINGLE.includes(c);
}

/**
 * Maps smart quotes used as delimiters to ASCII quotes and removes invisible characters,
 * leaving string contents and comments alone (except invisible characters, never meant).
 * A string opened with a smart quote may hold ASCII quotes; they are escaped.
 */
export function sanitizeProgram(source: string): { text: string; notes: string[] } {
  let out = "";
  let quotes = 0;
  let invisible = 0;
  let spaces = 0;
  let mode: "code" | "string" | "smart-string" | "comment" = "code";
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (INVISIBLE.test(c) && !(mode !== "code" && mode !== "comment" && joins(source, i))) {
      invisible++;
      continue;
    }
    switch (mode) {
      case "code":
        if (c === '"') mode = "string";
        else if (c === ";") mode = "comment";
        else if (c === "\\" && i + 1 < source.length) {
          out += c + source[++i];
          continue;
        } else if (SMART_DOUBLE.includes(c)) {
          quotes++;
          mode = "smart-string";
          out += '"';
          continue;
        } else if (SMART_SINGLE.includes(c)) {
          quotes++;
          out += "'";
          continue;
        } else if (ODD_SPACE.test(c)) {
          spaces++;
          out += " ";
          continue;
        }
        break;
      case "string":
        if (c === "\\" && i + 1 < source.length) {
          out += c + source[++i];
          continue;
        }
        if (c === '"') mode = "code";
        break;
      case "smart-string":
        if (SMART_DOUBLE.includes(c)) {
          quotes++;
          mode = "code";
          out += '"';
          continue;
        }
        if (c === '"') {
          out += '\\"';
          continue;
        }
        if (c === "\\" && i + 1 < source.length) {
          out += c + source[++i];
          continue;
        }
        break;
      case "comment":
        if (c === "\n") mode = "code";
        break;
    }
    out += c;
  }
  const notes: string[] = [];
  if (quotes > 0) notes.push(`replaced ${quotes} smart quote${quotes === 1 ? "" : "s"} with ASCII quotes`);
  if (invisible > 0) notes.push(`removed ${invisible} invisible character${invisible === 1 ? "" : "s"}`);
  if (spaces > 0) notes.push(`replaced ${spaces} non-ASCII space${spaces === 1 ? "" : "s"} with plain spaces`);
  return { text: out, notes };
}
