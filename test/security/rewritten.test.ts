// The adversary for a host's message about the hidden arguments it was given (`hideRewritten`),
// the other way round: the message's own words must keep showing. A stretch of the message
// whose every 4 characters occur somewhere in some hidden argument was hidden whole from 8
// characters on, though the argument never held it in one place (`crowdfund waiting` beside a
// note ending `... waits for a refund`: "fund" from one word, "wait" from another), and was
// named after the first argument holding its first characters, not the one that holds it whole.
// Letters of astral characters (`𝐀`) shifted where the message was cut, so a token after them
// showed, and a final `Σ` read as `ς` in the argument but `σ` in the message showed. Each row
// failed before its fix.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { hideRewritten, showStandIns } from "../../src/lisp/marks.js";
import { fragments, leaks } from "../support/hidden.js";

const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
const NOTE = "the quick brown fox jumps over the lazy dog while the customer waits for a refund";
const FIRST = "james mary robert patricia john jennifer michael linda david elizabeth william barbara richard susan joseph jessica thomas sarah charles karen christopher nancy daniel lisa matthew betty anthony margaret mark sandra donald ashley steven kimberly paul emily andrew donna joshua michelle".split(" ");
const LAST = "smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis robinson walker young allen king wright scott torres nguyen hill flores".split(" ");
/** 1,600 hidden emails, first.last@example.com. */
const EMAILS = FIRST.flatMap((f) => LAST.map((l) => `${f}.${l}@example.com`));

const standIn = (name: string): string => `\uE000hidden string from data/${name}\uE001`;
/** `text` as a model sees it once hideRewritten has hidden the arguments (`[value, name]`) in it. */
const hide = (text: string, given: Array<[string, string]>, budget?: number): string => showStandIns(hideRewritten(text, given.map(([v, name]) => [v, standIn(name)]), budget));
const emails = (): Array<[string, string]> => EMAILS.map((e, i) => [e, `_users ${i}`]);

describe("a tool's message keeps its own words beside long hidden arguments", () => {
  it.each(["crowdfund waiting list is full", "crowdfund overflow", "crowdfund jumpstart denied", "crowdfund quickly closed"])("a hidden note: %s", (text) => {
    expect(hide(text, [[NOTE, "_note"]])).toBe(text);
  });

  it.each(["service temporarily unavailable, retry later", "permission denied for the marketing mailing list"])("1,600 hidden emails: %s", (text) => {
    expect(hide(text, emails())).toBe(text);
  });

  it("a word that is a word of the argument's but not of the message's keeps showing", () => {
    expect(hide("refunded twice", [[NOTE, "_note"]])).toBe("refunded twice");
    expect(hide("fund transfer failed", [[NOTE, "_note"]])).toBe("fund transfer failed");
  });

  it.each(["none", "worker"] as const)("through a tool run (isolation %s)", async (isolation) => {
    const note = { run: () => { throw new Error("crowdfund waiting list is full"); } };
    const r = await evaluate("(tool/note {:note data/_note})", { ctx: { _note: NOTE }, isolation, tools: { note } });
    expect(r.toolCalls?.[0]?.error).toContain("crowdfund waiting list is full");
  });
});

describe("a tool's message still hides what it holds of a hidden argument", () => {
  it("8+ letters the argument holds in one place, and a word of both", () => {
    expect(hide("note says: the lazy dog while", [[NOTE, "_note"]])).toBe("note says: <hidden string from data/_note>");
    expect(hide("refund denied", [[NOTE, "_note"]])).toBe("<hidden string from data/_note> denied");
  });

  it("a final capital sigma, lower-cased as one character at a time, as the message is read", () => {
    expect(hide("no user ΑΛΕΞΑΝΔΡΟΣ ΠΑΠΑΔΟΠΟΥΛΟΣ", [["ΑΛΕΞΑΝΔΡΟΣ ΠΑΠΑΔΟΠΟΥΛΟΣ", "_name"]])).toBe("no user <hidden string from data/_name>");
  });

  it("behind letters of astral characters", () => {
    const tok: Array<[string, string]> = [[TOKEN, "_tok"]];
    for (const [text, want] of [
      [`𝐀𝐁𝐂𝐃𝐄𝐅 bad token ${TOKEN} here`, "𝐀𝐁𝐂𝐃𝐄𝐅 bad token <hidden string from data/_tok> here"],
      [`😀 user 𝐀𝐁𝐂𝐃 token ${TOKEN.slice(0, 12)} ok`, "😀 user 𝐀𝐁𝐂𝐃 token <hidden string from data/_tok> ok"],
      [`𝐚𝐛𝐜𝐝𝐞𝐟𝐠𝐡𝐢𝐣𝐤𝐥 token ${TOKEN}`, "𝐚𝐛𝐜𝐝𝐞𝐟𝐠𝐡𝐢𝐣𝐤𝐥 token <hidden string from data/_tok>"],
    ]) {
      const seen = hide(text, tok);
      expect(seen).toBe(want);
      expect(leaks(seen, fragments([TOKEN]))).toEqual([]);
    }
  });

  it("when the work a message may take is spent, the rest of a stretch is hidden whole from 8 letters on, as before", () => {
    expect(hide("crowdfund waiting list is full", [[NOTE, "_note"]], 0)).toBe("crowd<hidden string from data/_note>ing list is full");
  });

  it("a long message keeps its words and hides the echo at its end", () => {
    const seen = hide("crowdfund waiting ".repeat(50_000) + "the lazy dog", [[NOTE, "_note"]]);
    expect(seen.startsWith("crowdfund waiting crowdfund waiting ")).toBe(true);
    expect(seen.endsWith("crowdfund waiting <hidden string from data/_note>")).toBe(true);
  });
});

describe("a stretch is named after the argument it is from", () => {
  it.each([
    ["token B3M8X4-W5R2-ZZQP rejected", TOKEN, "B3M8X4-W5R2-ZZQP", "token <hidden string from data/_b> rejected"],
    ["service-endpoint-beta is down", "alpha-service-endpoint", "service-endpoint-beta", "<hidden string from data/_b> is down"],
    ["customer waits for a refund", "please call the customer back", "the customer waits for a refund", "<hidden string from data/_b>"],
    [`tokens ${TOKEN}/Q7P4-LL29-XK3M expired`, TOKEN, "Q7P4-LL29-XK3M", "tokens <hidden string from data/_a>/<hidden string from data/_b> expired"],
  ])("%s", (text, a, b, want) => {
    expect(hide(text, [[a, "_a"], [b, "_b"]])).toBe(want);
  });

  // `for william.smith@…` holds `rwilliams` of `jennifer.williams@…`: a piece from an earlier place
  // gives way to one starting at a word of the message that reaches further.
  it.each(["william.smith@example.com", "mark.wright@example.com"])("no mailbox for %s, among 1,600 hidden emails", (email) => {
    expect(hide(`no mailbox for ${email}`, emails())).toBe(`no mailbox for <hidden string from data/_users ${EMAILS.indexOf(email)}>`);
  });

  it.each(["none", "worker"] as const)("through a tool run (isolation %s)", async (isolation) => {
    const check = { run: (args: Record<string, unknown>) => { throw new Error(`token ${String(args.b).replace(/-/g, "")} rejected`); } };
    const r = await evaluate("(tool/check {:a data/_a :b data/_b})", { ctx: { _a: TOKEN, _b: "B3M8X4-W5R2-ZZQP" }, isolation, tools: { check } });
    expect(r.toolCalls?.[0]?.error).toMatch(/^token .*hidden string from data\/_b.* rejected$/);
  });
});

// The work is bounded (a budget in characters compared, growing with the message): past it the
// rest is hidden as before. These fit in it, so what they show tells the work did not run out.
describe("the work pieces take grows with the message", () => {
  it("16,000 hidden emails, each sent back in a 1.4 MB message, are each named after their own", () => {
    const many = Array.from({ length: 16_000 }, (_, i) => `user${i}.name@example${i % 13}.com`);
    const text = many.map((e) => `no mailbox for ${e} (550 mailbox unavailable, try again later)\n`).join("");
    const lines = hide(text, many.map((e, i) => [e, `_emails ${i}`])).split("\n");
    const wrong = lines.filter((line, i) => line !== "" && line !== `no mailbox for <hidden string from data/_emails ${i}> (550 mailbox unavailable, try again later)`);
    expect(wrong.slice(0, 3)).toEqual([]);
  });

  it("a 1 MB message of a word one argument holds inside its own words shows whole", () => {
    const text = "word ".repeat(200_000);
    expect(hide(text, [["sword password", "_pw"]]) === text).toBe(true);
  });
});

// A message may send a hidden argument back escaped: a URL (`%C3%A9`, UTF-8 bytes) or an
// ASCII-only JSON writer such as Python's (`\u00e9`, and a character beyond the BMP as a pair,
// `\ud835\udc00`). Each escape was read as one character of its own: `Jos%C3%A9` read as `josã©`
// and a pair as two lone halves, which the message's reader dropped while the argument's kept the
// letter, so the escaped argument showed. Or decomposed (NFD: `e` and a combining acute for `é`,
// as macOS and some databases write text), or with its accents folded away (`Jose`, as a search
// does): the message's reader dropped the combining marks, the argument's kept `é`, so the name,
// which reads the same decomposed, showed. Or as HTML writes it (`&amp;`, `&#233;`): the letters and
// digits of a reference were read as the argument's, so `Tr0ub4dor&amp;3-horse` showed whole. Or
// in base64, as a message quoting the request it failed on shows an `Authorization: Basic` header.
describe("a hidden argument sent back escaped", () => {
  /** Each character beyond ASCII as `\uXXXX` (pairs beyond the BMP), as an ASCII-only JSON writer does. */
  const asciiJson = (s: string): string => s.replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
  /** The message as a reader would take it: escapes read back, so that a leak cannot hide behind one. */
  /** `&`, `<`, `>`, `"` and `'` as HTML writes them. */
  const html = (s: string): string => s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string);
  const unescaped = (s: string): string => s.replace(/&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/g, (_, d?: string, x?: string, n?: string) => (n !== undefined ? ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[n] as string : String.fromCodePoint(d !== undefined ? Number(d) : parseInt(x as string, 16)))).replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/(?:%[0-9A-Fa-f]{2})+/g, (m) => { try { return decodeURIComponent(m); } catch { return m; } }).replace(/(?:(?:\\x)?[0-9a-fA-F]{2}[ :]?){8,}/g, (m) => Buffer.from(m.replace(/\\x|[ :]/g, ""), "hex").toString("utf8"));
  /** Text with its accents folded away, as a search sends it back. */
  const unaccented = (s: string): string => s.normalize("NFD").replace(/\p{M}/gu, "").normalize("NFC");
  /** Accents and compatibility forms (full-width `ｓ`, `𝐀`) folded away: a leak of a value is looked for in both as they would read it. */
  const folded = (s: string): string => s.normalize("NFKD").replace(/\p{M}/gu, "").normalize("NFC");
  // Only fragments holding a letter or digit: separators and symbols before or after the hidden
  // stretch stay (`"aaaa<>'<"` shows its `<>'<`).
  const leaked = (out: string, value: string): string[] => leaks(folded(unescaped(out)), new Set([...fragments([folded(value)])].filter((f) => /[\p{L}\p{N}]/u.test(f))));
  const ENCODINGS: ReadonlyArray<[string, (s: string) => string]> = [
    ["as it is", (s) => s],
    ["URL-encoded", encodeURIComponent],
    ["ASCII JSON", asciiJson],
    ["upper-case URL-encoded", (s) => encodeURIComponent(s.toUpperCase())],
    ["decomposed (NFD)", (s) => s.normalize("NFD")],
    ["upper-case decomposed", (s) => s.toUpperCase().normalize("NFD")],
    ["decomposed, ASCII JSON", (s) => asciiJson(s.normalize("NFD"))],
    ["accents folded", unaccented],
    ["compatibility forms folded (NFKC)", (s) => s.normalize("NFKC")],
    ["HTML-escaped", html],
    ["HTML, ASCII only", (s) => html(s).replace(/[^\x20-\x7e]/gu, (ch) => `&#${ch.codePointAt(0)};`)],
    ["HTML, ASCII only in hex", (s) => html(s).replace(/[^\x20-\x7e]/gu, (ch) => `&#x${(ch.codePointAt(0) as number).toString(16)};`)],
    ["base64", (s) => Buffer.from(s).toString("base64")],
    ["base64url", (s) => Buffer.from(s).toString("base64url")],
    ["in a Basic header", (s) => `Authorization: Basic ${Buffer.from(`alice:${s}`).toString("base64")}`],
    ["hex", (s) => Buffer.from(s).toString("hex")],
    ["upper-case hex", (s) => Buffer.from(s).toString("hex").toUpperCase()],
    ["a hex dump", (s) => (Buffer.from(s).toString("hex").match(/../g) as string[]).join(" ")],
    ["\\x escapes", (s) => (Buffer.from(s).toString("hex").match(/../g) as string[]).map((b) => `\\x${b}`).join("")],
    ["hex after a hex digit", (s) => `a${Buffer.from(s).toString("hex")}`],
  ];

  it.each(ENCODINGS.flatMap(([how, encode]) => ["José García-Müller", "𝐀𝐁𝐂𝐃𝐄𝐅𝐆𝐇", "Ωμέγα Δέλτα Ψ", "Дмитрий Иванов", "山田太郎さん様です", `Tr0ub4dor&3-"horse's"`, "ｓｋ－ｌｉｖｅ－４ｆ３ｋ９ｑ８ｚ"].map((v) => [how, v, encode] as const)))("%s: %s", (_how, value, encode) => {
    const out = hide(`no account for "${encode(value)}" here`, [[value, "_name"]]);
    expect(out).toContain("<hidden string from data/_name>");
    expect(leaked(out, value)).toEqual([]);
  });

  // Letters and digits only: the separators and symbols between them are not what is hidden.
  it("any such argument, so escaped (property)", () => {
    const chars = [..."abcXYZ019éüßçñøåÆŒΣςσΩЖжЯ山田語𝐀𝐁𝐳İıﬁ&<>\"'"];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...chars), { minLength: 8, maxLength: 16 }), fc.constantFrom(...ENCODINGS), (cs, [, encode]) => {
        // 8+ letters and digits, as the search needs (`a<<a&"a>` has 3: the tool's exact-match pass hides it).
        fc.pre(cs.filter((ch) => /[\p{L}\p{N}]/u.test(ch)).length >= 8);
        const value = cs.join("");
        const out = hide(`bad value ${encode(value)}!`, [[value, "_v"]]);
        return leaked(out, value).length === 0;
      }),
      { numRuns: 400 },
    );
  });

  it.each(["none", "worker"] as const)("an argument of fewer than 8 letters and digits, sent back as it is, by the exact-match pass (isolation %s)", async (isolation) => {
    const fail = { run: (a: Record<string, unknown>) => { throw new Error(`bad value ${String(a.v)}!`); } };
    const r = await evaluate("(println (try (tool/fail {:v data/_v}) (catch e (ex-message e))))", { ctx: { _v: 'a<<a&"a>' }, isolation, tools: { fail } });
    expect(showStandIns(r.prints.join("\n"))).toBe("tool/fail failed: bad value <hidden string from data/_v>!");
  });

  it("symbols after the hidden stretch are not a leak; its letters are", () => {
    expect(leaked(hide("bad value aaaa<>'<!", [["aaaa<>'<", "_v"]]), "aaaa<>'<")).toEqual([]);
    expect(leaked("bad value aaaa<>'<!", "aaaa<>'<")).toEqual(["aaaa", "aaa<", "aa<>", "a<>'"]);
  });

  // A result is searched for the letters and digits (8+) of a hidden argument, and for one equal
  // to it in any case (4+ characters): neither found the name decomposed, nor a password in HTML or
  // in base64.
  it.each(["none", "worker"] as const)("in a tool's result and its error (isolation %s)", async (isolation) => {
    const names = { _name: "Zoë Ångström-Müller", _short: "José", _pw: "Tr0ub4dor&3-horse" };
    const find = {
      run: (a: Record<string, unknown>) => ({ nfd: String(a.name).normalize("NFD"), folded: unaccented(String(a.name)), short: String(a.short).normalize("NFD"), page: `<p>Welcome ${html(String(a.pw))}</p>`, basic: `Basic ${Buffer.from(`alice:${String(a.pw)}`).toString("base64")}`, hex: `payload 0x${Buffer.from(String(a.pw)).toString("hex")}` }),
    };
    const fail = { run: (a: Record<string, unknown>) => { throw new Error(`no customer named ${String(a.name).normalize("NFD")}`); } };
    const program = "(println (try (tool/fail {:name data/_name}) (catch e (ex-message e))))\n(println (tool/find {:name data/_name :short data/_short :pw data/_pw}))";
    const r = await evaluate(program, { ctx: names, isolation, tools: { find, fail } });
    const out = showStandIns(r.prints.join("\n"));
    expect(out).toBe(
      "tool/fail failed: no customer named <hidden string from data/_name>\n" +
        "{:nfd <hidden string derived from data/_name> :folded <hidden string derived from data/_name> :short <hidden string derived from data/_short> :page <hidden string derived from data/_pw> :basic <hidden string derived from data/_pw> :hex <hidden string derived from data/_pw>}",
    );
    for (const v of Object.values(names)) expect(leaked(out, v)).toEqual([]);
  });
});
