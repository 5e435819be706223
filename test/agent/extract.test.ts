import { describe, expect, it } from "vitest";
import { extractProgram, sanitizeProgram } from "../../src/agent/extract.js";
import { evaluate } from "../../src/lisp/evaluate.js";

const fence = (tag: string, body: string): string => "```" + tag + "\n" + body + "\n```";

describe("extractProgram", () => {
  it("takes the one clojure block and ignores the prose around it", () => {
    const r = extractProgram(`I will count.\n\n${fence("clojure", "(println (+ 1 2))")}\n\nThat should work.`);
    expect(r).toEqual({ ok: true, program: "(println (+ 1 2))", notes: [] });
  });

  it.each(["lisp", "clj", "Clojure", "ptc-lisp"])("accepts a block tagged %s", (tag) => {
    expect(extractProgram(fence(tag, "(+ 1 2)")).program).toBe("(+ 1 2)");
  });

  it("accepts an untagged block of code, and a bare form", () => {
    expect(extractProgram(fence("", "(def x 1)\n(println x)")).program).toBe("(def x 1)\n(println x)");
    expect(extractProgram("  (return {:a 1})\n").program).toBe("  (return {:a 1})\n");
  });

  it("prefers tagged blocks over untagged ones (output examples are not programs)", () => {
    const r = extractProgram(`${fence("", "(this is sample output)")}\n${fence("clojure", "(+ 1 2)")}`);
    expect(r.program).toBe("(+ 1 2)");
  });

  it("keeps a fence line inside a string of the program as part of the string", () => {
    const program = '(def report "# Totals\n```\n3 items\n```\ndone")\n(return report)';
    const r = extractProgram(`Writing the report.\n\n${fence("clojure", program)}\n\nThat is all.`);
    expect(r).toEqual({ ok: true, program, notes: [] });
    // Escaped quotes, comments and character literals do not open or close a string.
    const tricky = '(def a "say \\"hi\\"") ; a "quote\n(def b \\")\n(def s "x\n```\ny")\n(return s)';
    expect(extractProgram(fence("clojure", tricky)).program).toBe(tricky);
    // A string left open for good still ends at the first fence: the reader says where.
    expect(extractProgram(`${fence("clojure", '(println "oops)')}\nmore prose`).program).toBe('(println "oops)');
    // An untagged block (sample output, prose) with a stray quote ends at its fence.
    expect(extractProgram(`${fence("", 'He said "hi')}\n${fence("clojure", "(return 1)")}`).program).toBe("(return 1)");
  });

  it("normalises CRLF line ends", () => {
    expect(extractProgram("```clojure\r\n(def x 1)\r\n(println x)\r\n```").program).toBe("(def x 1)\n(println x)");
  });

  it("rejects several program blocks, saying how many and why", () => {
    const r = extractProgram(`${fence("clojure", "(def a 1)")}\nthen\n${fence("clojure", "(println a)")}`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toBe("multiple_blocks");
    expect(r.message).toContain("2 code blocks");
    expect(r.message).toContain("not shared");
    expect(r.hint).toContain("one");
  });

  it("reports a reply without code", () => {
    const r = extractProgram("I think the answer is 42.");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toBe("no_code");
    expect(r.hint).toContain("```clojure");
  });

  it("names the tag of a block in another language", () => {
    const r = extractProgram(fence("python", "print(1)"));
    expect(r.ok || r.message).toContain("'python'");
  });

  it("reports an empty block", () => {
    const r = extractProgram(fence("clojure", "  \n"));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toBe("empty");
  });

  it("takes an unclosed fence to the end of the reply (a reply cut off mid-program)", () => {
    expect(extractProgram("```clojure\n(def x 1)\n(println x").program).toBe("(def x 1)\n(println x");
  });

  // Reasoning models served through OpenAI-compatible servers (DeepSeek-R1 and Qwen on vLLM or
  // Ollama) put their reasoning in the reply, in a <think> block, often with draft programs.
  it("reads past a reasoning model's <think> block, drafts and all", () => {
    const draft = `<think>\nLet me try:\n${fence("clojure", "(println (count data/rows))")}\nNo, sum them.\n</think>\n\n`;
    expect(extractProgram(draft + fence("clojure", "(println (reduce + data/rows))")).program).toBe("(println (reduce + data/rows))");
    // A chat template that opens the block itself sends only its end.
    expect(extractProgram("Drafting (first data/rows) first.\n</think>\n(println 1)").program).toBe("(println 1)");
    expect(extractProgram("<thinking>\n(a draft)\n</thinking>\n" + fence("", "(println 2)")).program).toBe("(println 2)");
  });

  it("ends a <think> block at its closing tag when the reasoning holds letters that lower-case longer (İstanbul)", () => {
    // "İ" (U+0130) lower-cases to two code units: a place found in a lower-cased copy fell 5 characters past the tag, into the fence.
    const reasoning = "<think>\nİstanbul, İzmir: İİİ.\n</THINK>\n";
    expect(extractProgram(reasoning + fence("clojure", "(println (count data/rows))")).program).toBe("(println (count data/rows))");
  });

  it("says so when a reply ends inside its <think> block", () => {
    const r = extractProgram(`<think>\nFirst ${fence("clojure", "(def a 1)")}\nthen`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.problem, r.message]).toEqual(["no_code", expect.stringContaining("<think>")]);
  });

  it("keeps <think> text that is a program's own data", () => {
    const program = '(println "<think>")\n(println "</think>")';
    expect(extractProgram(fence("clojure", program)).program).toBe(program);
    expect(extractProgram(program).program).toBe(program);
  });

  it("does not end a block at a shorter inner fence", () => {
    const body = '(println "```")';
    expect(extractProgram("````clojure\n" + body + "\n```\n(more)\n````").program).toBe(body + "\n```\n(more)");
  });
});

describe("sanitizeProgram", () => {
  it("turns smart-quoted strings into ASCII strings and says so", async () => {
    const r = sanitizeProgram("(println \u201Chello world\u201D)");
    expect(r.text).toBe('(println "hello world")');
    expect(r.notes).toEqual(["replaced 2 smart quotes with ASCII quotes"]);
    const run = await evaluate(r.text);
    expect(run.ok && run.prints).toEqual(["hello world"]);
  });

  it("leaves smart quotes inside ASCII strings and comments alone", () => {
    const src = '(println "He said \u201Chi\u201D") ; \u201Cquoted\u201D';
    expect(sanitizeProgram(src)).toEqual({ text: src, notes: [] });
  });

  it("escapes ASCII quotes inside a smart-quoted string", async () => {
    const r = sanitizeProgram('(count \u201Csay "x"\u201D)');
    expect(r.text).toBe('(count "say \\"x\\"")');
    const run = await evaluate(r.text);
    expect(run.ok && run.value).toBe(7);
  });

  it("keeps escaped quotes and character literals intact", () => {
    const src = '(str "a\\"b" \\" \\a)';
    expect(sanitizeProgram(src).text).toBe(src);
  });

  it("removes invisible characters and replaces odd spaces outside strings", async () => {
    const r = sanitizeProgram("(+\u00A01\u200B 2)\uFEFF");
    expect(r.text).toBe("(+ 1 2)");
    expect(r.notes).toEqual(["removed 2 invisible characters", "replaced 1 non-ASCII space with plain spaces"]);
    const run = await evaluate(r.text);
    expect(run.ok && run.value).toBe(3);
  });

  it("keeps a non-breaking space inside a string (it is data there)", () => {
    expect(sanitizeProgram('(str "a\u00A0b")').text).toBe('(str "a\u00A0b")');
  });

  it("keeps a joiner that joins two non-ASCII characters inside a string (an emoji sequence, a Persian word)", async () => {
    const family = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}";
    const src = `(str "${family}" (count "${family}") "\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645" \u201C\u2764\uFE0F\u200D\u{1F525}\u201D)`;
    const r = sanitizeProgram(src);
    expect(r.text).toBe(src.replace(/[\u201C\u201D]/g, '"'));
    expect(r.notes).toEqual(["replaced 2 smart quotes with ASCII quotes"]);
    const run = await evaluate(r.text);
    expect(run.ok && run.value).toBe(`${family}1\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645\u2764\uFE0F\u200D\u{1F525}`);
  });

  it("still removes a joiner next to ASCII, a space or a string's end, and outside strings", () => {
    const r = sanitizeProgram('(= "admin\u200D" "a\u200Cb" "\u00E9\u200D " x\u200D\u00E9 \u201C\u00E9\u200D\u201D) ; \u00E9\u200D\u00E9');
    expect(r.text).toBe('(= "admin" "ab" "\u00E9 " x\u00E9 "\u00E9") ; \u00E9\u00E9');
    expect(r.notes).toEqual(["replaced 2 smart quotes with ASCII quotes", "removed 6 invisible characters"]);
  });

  it("feeds its notes through extractProgram", () => {
    const r = extractProgram(fence("clojure", "(println \u2018x)"));
    expect(r.ok && r.notes).toEqual(["replaced 1 smart quote with ASCII quotes"]);
    expect(r.program).toBe("(println 'x)");
  });
});
