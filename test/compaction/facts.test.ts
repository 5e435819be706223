// The facts summarizer: keeps the values later turns need (names, times, ids, paths, commands
// and their errors, call arguments), drops the prose, and keeps its budget; the copy baseline
// beside it shows what copying keeps instead.
import { describe, expect, it, vi } from "vitest";
import { countTokens, promptTokens } from "../../src/compaction/tokens.js";
import { extractiveSummary } from "../../src/compaction/summarizers/extractive.js";
import { factsSummarizer, factsSummary, textFacts } from "../../src/compaction/summarizers/facts.js";
import type { ChatMessage } from "../../src/llm/types.js";

// Counts the characters the summarizer has tokenized, so its work is measured without a clock.
const tokenized = vi.hoisted(() => ({ chars: 0 }));
vi.mock("../../src/compaction/tokens.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/compaction/tokens.js")>();
  return { ...real, countTokens: (text: string) => ((tokenized.chars += text.length), real.countTokens(text)) };
});

/**
 * The facts summary of a listing with this output, and the characters its value patterns read
 * (the long sticky ones; the word pattern reads one word whatever it is given): work counted
 * instead of timed.
 */
function scannedSummary(output: string): { text: string; chars: number } {
  let chars = 0;
  const exec = RegExp.prototype.exec;
  const spy = vi.spyOn(RegExp.prototype, "exec").mockImplementation(function (this: RegExp, input: string) {
    if (this.sticky && this.source.length > 40 && !this.source.includes("Script=Han")) chars += input.length - this.lastIndex;
    return exec.call(this, input);
  });
  try {
    const text = factsSummary({ messages: listing(output), maxTokens: 200 });
    return { text, chars };
  } finally {
    spy.mockRestore();
  }
}

/** A call whose one output is `output`. */
const listing = (output: string): ChatMessage[] => [
  { role: "assistant", content: "Listing the repository.", tool_calls: [{ id: "f", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "find /repo -name '*.py'" }) } }] },
  { role: "tool", tool_call_id: "f", content: output },
];

const coding: ChatMessage[] = [
  { role: "assistant", content: "Let me look at the parser first.", tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "python -m pytest tests/test_parser.py -x" }) } }] },
  {
    role: "tool",
    tool_call_id: "c1",
    content: ["============ test session starts ============", ...Array.from({ length: 60 }, (_, i) => `tests/test_parser.py::test_case_${i} PASSED`), "tests/test_parser.py::test_empty FAILED", "E   AttributeError: 'NoneType' object has no attribute 'strip' in parse_header", "1 failed, 60 passed in 0.52s"].join("\n"),
  },
  { role: "assistant", content: "The failure is in src/pkg/parser.py, in parse_header. I will guard against None there and keep the rest as it is.", tool_calls: [{ id: "c2", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "sed -n '1,40p' src/pkg/parser.py" }) } }] },
  { role: "tool", tool_call_id: "c2", content: Array.from({ length: 40 }, (_, i) => `    value_${i} = compute(${i})`).join("\n") },
];

describe("facts summarizer", () => {
  it("pairs each call with its own result when a server reuses call ids from one reply to the next", () => {
    // Some OpenAI-compatible servers number calls per reply ("call_0" every turn): results were
    // looked up by id across the whole span, so every call showed the last one's output.
    const commands = ["ls src", "grep -rn TODO src", "pytest tests/test_parser.py"];
    const outputs = ["parser.py\nlexer.py", "src/lexer.py:12: TODO handle tabs", "FAILED tests/test_parser.py::test_empty - IndexError"];
    const messages: ChatMessage[] = [{ role: "user", content: "find the bug" }];
    commands.forEach((command, i) => {
      messages.push({ role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } }] });
      messages.push({ role: "tool", tool_call_id: "call_0", content: outputs[i] });
    });
    const text = factsSummary({ messages, maxTokens: 2000 });
    expect(text).toMatch(/ls src; ->; parser\.py; lexer\.py/);
    expect(text).toMatch(/grep -rn TODO src; ->; src\/lexer\.py/);
    expect(text).toMatch(/pytest tests\/test_parser\.py; ->; FAILED/);
  });

  it("ends no call line in a bare arrow when every fact of its result was dropped or is said later", () => {
    // The result's values are repeated by the reply after it (latest mention wins) or cut by the
    // budget: the line kept "called find_train; Cambridge; Friday; ->", an arrow pointing at nothing.
    const messages: ChatMessage[] = [
      { role: "user", content: "Find me a train to Cambridge on Friday" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "find_train", arguments: JSON.stringify({ to: "Cambridge", day: "Friday" }) } }] },
      { role: "tool", tool_call_id: "c1", content: JSON.stringify({ trains: [{ id: "TR0757", leaves: "09:15" }] }) },
      { role: "assistant", content: "TR0757 leaves at 09:15." },
      { role: "user", content: "Book it" },
    ];
    for (const maxTokens of [16, 30, 100]) {
      const text = factsSummary({ messages, maxTokens });
      expect(text).toContain("called find_train; Cambridge; Friday");
      for (const line of text.split("\n")) expect(line).not.toMatch(/->\s*$/);
      // Read back as a previous summary and folded again, the call's arguments stay its arguments.
      const again = factsSummary({ messages: [{ role: "user", content: "And a taxi" }], previous: text, maxTokens: 100 });
      expect(again).toContain("called find_train; Cambridge; Friday");
      for (const line of again.split("\n")) expect(line).not.toMatch(/->\s*$/);
    }
  });

  it("keeps commands, the error line, paths and function names of tool output, not its first lines, within its budget", () => {
    const replaced = promptTokens(coding);
    const budget = Math.floor(replaced * 0.2);
    const text = factsSummary({ messages: coding, maxTokens: budget });
    expect(countTokens(text)).toBeLessThanOrEqual(budget);
    expect(text).toContain("python -m pytest tests/test_parser.py -x");
    expect(text).toMatch(/AttributeError: 'NoneType' object has no attribute 'strip'/);
    expect(text).toContain("src/pkg/parser.py");
    expect(text).toContain("parse_header");
    expect(text).not.toContain("test session starts");
    // The copy baseline keeps the first line of the output and loses the error.
    const copy = extractiveSummary({ messages: coding, maxTokens: 10_000 });
    expect(copy).toContain("test session starts");
    expect(copy).not.toContain("AttributeError");
  });

  it("summarizes a huge tool output in work proportional to it, within its budget", () => {
    // A find over a real repository: 1,500 paths, each one a fact. Dropping them one by one and
    // counting the whole line again each time took seconds per thousand (minutes for ten thousand).
    const paths = Array.from({ length: 1500 }, (_, i) => `/repo/src/module_${i}/file_${i}.py`).join("\n");
    tokenized.chars = 0;
    const text = factsSummary({ messages: listing(paths), maxTokens: 600 });
    expect(countTokens(text)).toBeLessThanOrEqual(600);
    expect(text).toContain("find /repo -name '*.py'");
    expect(tokenized.chars).toBeLessThan(20 * paths.length);
    // 200,000 values in one output: more than a call's arguments may spread.
    const numbers = Array.from({ length: 200_000 }, (_, i) => `v${i}`).join(" ");
    expect(countTokens(factsSummary({ messages: listing(numbers), maxTokens: 300 }))).toBeLessThanOrEqual(300);
  });

  // A run of words with no stop word was one item, however long: "alpha beta " 300,000 times
  // made one of 3.3 MB, rendered and tokenized at every step of the budget's search and then
  // dropped whole, so the message summarized to nothing. A run is cut at a value's length now.
  it("cuts a run of content words with no stop word into items of bounded length, and keeps some of it", () => {
    const cases: Array<[ChatMessage[], string]> = [
      [[{ role: "user", content: "alpha beta ".repeat(300_000) }, { role: "assistant", content: "ok" }], "alpha beta alpha beta"],
      [[{ role: "assistant", content: "", tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "y ".repeat(1_000_000) } }] }, { role: "tool", tool_call_id: "a", content: "done" }], "y y y y"],
      [[{ role: "user", content: `${"q".repeat(1_000_000)} then see TR0757` }, { role: "assistant", content: "ok" }], "TR0757"],
    ];
    for (const [messages, kept] of cases) {
      tokenized.chars = 0;
      const text = factsSummary({ messages, maxTokens: 200 });
      expect(text).toContain(kept);
      expect(countTokens(text)).toBeLessThanOrEqual(200);
      expect(tokenized.chars).toBeLessThan(20_000);
    }
    expect(Math.max(...textFacts("alpha beta ".repeat(1_000)).map((f) => f.text.length))).toBeLessThanOrEqual(256);
  });

  // The proxy summarizes a request body of up to 32 MB while it serves other requests: summarize
  // read it all in one synchronous stretch (about 0.15 to 0.5 s per MB), and no other request,
  // timer or deadline ran until it was done. It now gives the event loop a turn every 64K
  // characters (or values) read, and says what factsSummary says.
  it("gives the event loop a turn every 64K characters or values while it summarizes megabytes", async () => {
    const prose = "the quick brown fox jumps over the lazy dog, see src/a.ts and TR0757\n".repeat(30_000);
    const values = JSON.stringify({ results: Array.from({ length: 200_000 }, (_, i) => `v${i}`) });
    const cases: Array<[ChatMessage[], number]> = [
      [listing(prose), prose.length],
      [listing(values), 200_000],
      [[{ role: "user", content: prose }, { role: "assistant", content: "ok" }], prose.length],
      [[{ role: "assistant", content: "", tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: JSON.stringify({ q: prose }) } }] }], prose.length],
    ];
    for (const [messages, work] of cases) {
      let turns = 0;
      let running = true;
      const tick = (): void => {
        if (!running) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const result = await factsSummarizer.summarize({ messages, maxTokens: 300 }, {});
      running = false;
      expect(result.text).toBe(factsSummary({ messages, maxTokens: 300 }));
      expect(turns).toBeGreaterThanOrEqual(Math.floor(work / 65_536) - 1);
    }
  });

  // A search for error words that backtracks over every position of a line is quadratic in it:
  // this 100,000-character line took 10 s (a megabyte, a quarter of an hour, blocking the proxy);
  // read in one pass it takes milliseconds, far inside the test's timeout.
  it("reads a line of 100,000 word characters (a contract's bytecode, a hex dump) in one pass", () => {
    const hex = Array.from({ length: 100_000 }, (_, i) => "0123456789abcdef"[(i * 7) % 16]).join("");
    const text = factsSummary({ messages: listing(`0x${hex}\nError: out of gas`), maxTokens: 200 });
    expect(text).toContain("Error: out of gas");
    expect(countTokens(text)).toBeLessThanOrEqual(200);
  });

  // Every dot of a progress line starts a word, and matching a value from each one scanned the
  // rest of the line (for a path's "/", an email's "@"): a 96,000-dot line took 65 s. The text
  // a value match may read is counted instead of timed: linear in the line, as for any prose.
  // Windowed, each position of a run of dashes still read up to 256 characters: six 200,000-dash
  // messages took 2.9 s. A value does not start inside a run of ".", "+", "-" (the run's first
  // character was tried, and a value from inside it would have matched from there), so a run is
  // read about once.
  it("reads a run of dots, dashes and underscores about once, not once per character", () => {
    for (const run of ["-", ".", "+-", "-.", "-_", "..-", "-__", "._-"]) {
      const line = `Downloading ${run.repeat(Math.ceil(20_000 / run.length))} done see ./src/a.ts and -_x`;
      const { text, chars } = scannedSummary(`${line}\nError: checksum mismatch`);
      expect(text).toContain("Error: checksum mismatch");
      expect(text).toContain("./src/a.ts");
      expect(chars).toBeLessThan(8 * line.length);
    }
  });

  // The run skip also skipped an underscore after a dash or a dot, and the letters after it are no
  // word start: a code name opening with "_" there was never read ('--_session_token' kept nothing).
  it("keeps a code name opening with an underscore right after a run of dashes or dots", () => {
    const cases: Array<[string, string]> = [
      ["export --_session_token abc", "_session_token"],
      ["see x.-_foo_bar", "_foo_bar"],
      ["module -.__init__ loaded", "__init__"],
      ["flag +-_debug_level=3", "_debug_level"],
    ];
    for (const [text, value] of cases) expect(textFacts(text).map((f) => f.text)).toContain(value);
  });

  it("reads a line of 20,000 dots or dashes in work proportional to it, and keeps a long value whole", () => {
    for (const run of [".", "-", "+-"]) {
      const line = `Downloading ${run.repeat(20_000 / run.length)} done`;
      const { text, chars } = scannedSummary(`${line}\nError: checksum mismatch`);
      expect(text).toContain("Error: checksum mismatch");
      expect(chars).toBeLessThan(1_000 * line.length);
    }
    const binary = "01".repeat(600);
    expect(textFacts(`The file holds ${binary}.`).map((f) => f.text)).toContain(binary);
  });

  it("cuts long error lines and commands without splitting a character", () => {
    const rocket = `${"x".repeat(159)}🚀 failed`;
    const messages: ChatMessage[] = [{ role: "assistant", content: "", tool_calls: [{ id: "r", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: rocket }) } }] }, { role: "tool", tool_call_id: "r", content: `ERROR ${"y".repeat(153)}🚀 boom` }];
    const text = factsSummary({ messages, maxTokens: 600 });
    expect(text).toContain("x".repeat(159));
    expect(text).toContain(`ERROR ${"y".repeat(153)}`);
    // No lone surrogate: every high surrogate is followed by a low one, and every low one follows a high one.
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it("keeps names, times and amounts of a dialogue and drops the filler", () => {
    const facts = textFacts("Sounds great. Could you book a table at The Gardenia for 4 people at 19:30 on the 10th? I also need to transfer 150 bucks to Margaret.");
    // Values rank above plain words, which a tight budget drops first; stop words are never kept.
    expect(facts.filter((f) => f.rank === 2).map((f) => f.text)).toEqual(["The Gardenia", "4 people", "19:30", "the 10th", "150 bucks", "Margaret"]);
    expect(facts.map((f) => f.text).join(" ")).not.toMatch(/\b(?:Could|you|great|at|also)\b/);
  });

  it("keeps identifiers and numbers written inside Chinese, Japanese or Korean text, which has no spaces between words", () => {
    // A run of letters took the Latin letters after the kana with it ("予約番号はQX"), and the rest of the reference was lost.
    const values = (text: string) => textFacts(text).filter((f) => f.rank >= 2).map((f) => f.text);
    expect(values("予約番号はQX77Zです。")).toContain("QX77Z");
    expect(values("订单号AB1234已确认")).toContain("AB1234");
    expect(values("예약번호는QX77Z입니다")).toContain("QX77Z");
    const summary = factsSummary({ messages: [{ role: "user", content: "東京駅の近くで4人分の予約をお願いします。予約番号はQX77Zです。" }, { role: "assistant", content: "了解しました。" }], maxTokens: 60 });
    expect(summary).toContain("QX77Z");
  });

  it("keeps the latest mention of a repeated value once, and folds a previous summary without losing its values", () => {
    const first = factsSummary({ messages: [{ role: "user", content: "Book the Ortega for Friday at 19:30 please." }, { role: "assistant", content: "Booked the Ortega for Friday at 19:30." }], maxTokens: 100 });
    expect(first.match(/19:30/g)).toHaveLength(1);
    const folded = factsSummary({ previous: first, messages: [{ role: "user", content: "Now a taxi to the station, ref QX77Z." }, { role: "assistant", content: "Taxi booked, ref QX77Z." }], maxTokens: 100 });
    for (const v of ["Ortega", "19:30", "QX77Z"]) expect(folded).toContain(v);
  });

  it("drops plain words before values when the budget is tight, and oldest first", () => {
    const messages: ChatMessage[] = Array.from({ length: 10 }, (_, i): ChatMessage => ({ role: i % 2 === 0 ? "user" : "assistant", content: `Lovely weather for a quiet walk along the river, booking ref R${1000 + i}.` }));
    const text = factsSummary({ messages, maxTokens: 40 });
    expect(countTokens(text)).toBeLessThanOrEqual(40);
    expect(text).toContain("R1009");
    expect(text).not.toMatch(/weather|river/);
  });

  it("under a tight budget keeps one value of every old message before a second value of any (far facts first)", () => {
    // Each turn states a place and three details; the budget holds about one item per turn.
    const places = ["Pizza Hut Cherry Hinton", "Golden Wok", "Cotto Bistro", "Saigon City", "Curry Garden", "La Mimosa"];
    const messages: ChatMessage[] = places.flatMap((p, i): ChatMessage[] => [
      { role: "user", content: `Anything else?` },
      { role: "assistant", content: `${p} is free on Friday at 1${i}:15 for 4 people, about £${20 + i} each.` },
    ]);
    const text = factsSummary({ messages, maxTokens: 50 });
    expect(countTokens(text)).toBeLessThanOrEqual(50);
    for (const p of places) expect(text).toContain(p);
  });

  it("ranks identifiers (booking references, train ids, paths) above other values", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "Please book it." },
      { role: "assistant", content: "Done: Booked Pasta Palace for 3 at 19:00 on Saturday, reference PP42X9, train TR0757 from platform 4." },
    ];
    const text = factsSummary({ messages, maxTokens: 12 });
    expect(text).toContain("PP42X9");
    expect(text).toContain("TR0757");
  });

  it("keeps every identifier of a listed tool result (a user's reservations) before plain values, not only the first", () => {
    // τ-bench: get_user_details lists the reservations the agent then opens one by one; the list's
    // later entries ranked as plain words, so a tight budget kept "OI5L9G" and dropped the other
    // six, which later turns need, while it kept a street address and a zip code.
    const reservations = ["OI5L9G", "AQLBTL", "KA7I60", "I57WUD", "OBUT9V", "4BMN53", "Q0ZF0J"];
    const details = { name: { first_name: "Sofia", last_name: "Kim" }, address: { address1: "825 Laurel Lane", address2: "Suite 595", city: "Houston", country: "USA", province: "TX", zip: "77243" }, membership: "silver", reservations };
    const messages: ChatMessage[] = [
      { role: "user", content: "Please look at my upcoming trips, my id is sofia_kim_7287." },
      { role: "assistant", content: "", tool_calls: [{ id: "u", type: "function", function: { name: "get_user_details", arguments: JSON.stringify({ user_id: "sofia_kim_7287" }) } }] },
      { role: "tool", tool_call_id: "u", content: JSON.stringify(details) },
    ];
    const text = factsSummary({ messages, maxTokens: 64 });
    expect(countTokens(text)).toBeLessThanOrEqual(64);
    for (const r of reservations) expect(text).toContain(r);
    // Later entries of a list still go first when they are not identifiers (search results beyond the first offer).
    const offers = factsSummary({ messages: [...messages.slice(0, 2), { role: "tool", tool_call_id: "u", content: JSON.stringify({ ref: "QX77Z", hotels: ["Acorn Guest House", "Alpha-Milton", "Bridge Guest House", "Home From Home", "Worth House", "Avalon"] }) }], maxTokens: 30 });
    expect(offers).toContain("QX77Z");
    expect(offers).not.toContain("Avalon");
  });

  it("keeps an identifier whose letters and digits a dash joins (a ticket, a flight, a model) whole", () => {
    // It was cut at the dash ("PROJ-" a plain word, "1234" a number), so the reference was in no summary whole.
    const values = (text: string) => textFacts(text).filter((f) => f.rank >= 3).map((f) => f.text);
    expect(values("Fixed in PROJ-1234 yesterday.")).toEqual(["PROJ-1234"]);
    expect(values("Your flight UA-889 leaves from gate B12; reference CM-5521, case ABC-DEF-123.")).toEqual(["UA-889", "B12", "CM-5521", "ABC-DEF-123"]);
    expect(values("Use gpt-4o for COVID-19 data.")).toEqual(["gpt-4o", "COVID-19"]);
    const summary = factsSummary({ messages: [{ role: "user", content: "Please reopen the ticket." }, { role: "assistant", content: "Reopened INC-00123 and assigned it to the network team, who will look at it today." }], maxTokens: 16 });
    expect(summary).toContain("INC-00123");
  });

  it("keeps a number with a decimal point or thousands separator whole when no unit follows it", () => {
    // It was cut at the separator: "The fare is 1,250." kept "1" and "250", never the fare.
    const values = (text: string) => textFacts(text).filter((f) => f.rank >= 2).map((f) => f.text);
    expect(values("The fare is 1,250.")).toEqual(["1,250"]);
    expect(values("Set the timeout to 2.5 and retry.")).toEqual(["2.5"]);
    expect(values("Requires python 3.11 or later, and v2.3.1 of the client at 10.0.0.1.")).toEqual(["3.11", "v2.3.1", "10.0.0.1"]);
    expect(values("Rooms 1, 2 and 3.")).toEqual(["1", "2", "3"]);
  });

  it("keeps a number grouped by spaces (French, Russian, German...) and a non-Latin reference whole", () => {
    // "Итого 42 300 рублей" gave "42" and "300": a tight budget kept "42", a total 1,000 times too small.
    const values = (text: string) => textFacts(text).filter((f) => f.rank >= 2 && /\d/.test(f.text)).map((f) => f.text);
    expect(values("Итого 42 300 рублей.")).toEqual(["42 300"]);
    expect(values("Le total est de 1 250 € (1\u202f250,50 € avec la taxe).")).toEqual(["1 250", "1 250,50"]);
    expect(values("Rooms 1 2 and 3, in 2019 100 guests.")).toEqual(["1", "2", "3", "2019", "100 guests"]);
    // "РК-4471" was the word "РК-" and the number "4471".
    expect(values("Готово, бронь номер РК-4471 подтверждена; Κράτηση ΑΘ-2231.")).toEqual(["РК-4471", "ΑΘ-2231"]);
    expect(values("予約番号はQX77Zです。")).toEqual(["QX77Z"]);
    const summary = factsSummary({ messages: [{ role: "user", content: "Сколько всё стоит?" }, { role: "assistant", content: "Итого 42 300 рублей за номер, бронь РК-4471 подтверждена, оплата картой при заезде." }], maxTokens: 16 });
    expect(summary).toContain("42 300");
    expect(summary).toContain("РК-4471");
  });

  it("keeps what the user stated (a name, a time) before what the assistant offered", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "I need a hotel for 2 people under the name Ashley, around 17:40." },
      ...["hotel", "restaurant", "taxi"].flatMap((d): ChatMessage[] => [
        { role: "assistant", content: `Certainly. I found three ${d} options in the centre; the first is well reviewed.` },
        { role: "user", content: "The first one is fine. Please book it." },
      ]),
      { role: "assistant", content: "Done." },
    ];
    const text = factsSummary({ messages, maxTokens: 24 });
    expect(text).toContain("Ashley");
    expect(text).toContain("17:40");
  });

  it("reads a date with its month whole ('the 9th of March', not 'the 9th' and 'March')", () => {
    expect(textFacts("Can you see what's available on the 9th of March instead?").map((f) => f.text)).toContain("the 9th of March");
  });
});
