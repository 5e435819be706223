// A tool's message about hidden arguments (hideRewritten): what it quotes of them is hidden, and
// nothing else. The adversary here is the other way round from the leak tests: ordinary words of
// a message that a long hidden argument happens to hold inside its own words, and words two
// arguments each hold a few letters of, must keep showing.
import { describe, expect, it } from "vitest";
import { hideRewritten } from "../../src/lisp/marks.js";

const A = "<A>";
const B = "<B>";

/** Rows: hidden arguments, the message, and what it must read after. */
const ROWS: ReadonlyArray<{ title: string; given: Array<[string | number, string]>; text: string; shown: string }> = [
  // Before: "<A> not found": "custom" from one, "omers" from the other, joined into one 9-letter echo.
  { title: "letters two arguments each hold a part of, joined", given: [["xcustomx", A], ["yomersy", B]], text: "customers not found", shown: "customers not found" },
  // Before: "bad <A> in request": a 4-letter word of the message inside a word of hidden prose.
  { title: "a word of the message inside a word of hidden prose", given: [["see attached metadata for details", A]], text: "bad data in request", shown: "bad data in request" },
  // Before: "<A>", the first argument's stand-in for what only the second holds whole.
  { title: "a stretch two arguments share, quoted from the second", given: [["commonwordsfirst", A], ["commonwordssecond", B]], text: "rejected: commonwordssecond", shown: "rejected: <B>" },
  // Before: "note <A> <A> <A> too": every 4-letter word of the message that the prose holds anywhere.
  { title: "short words of the message a prose argument holds inside longer words", given: [["then the theme of thermal thesis", A]], text: "note them then they too", shown: "note them <A> they too" },
  // Still hidden: pieces a message quotes.
  { title: "a long piece of a one-word secret", given: [["correcthorsebatterystaple", A]], text: "password batterystaple rejected", shown: "password <A> rejected" },
  { title: "a short piece of a one-word secret, as a word", given: [["correcthorsebatterystaple", A]], text: "weak word: horse", shown: "weak word: <A>" },
  { title: "a word of a hidden phrase", given: [["my secret phrase is purple elephant", A]], text: '"purple" is not allowed', shown: '"<A>" is not allowed' },
  { title: "a long word of a hidden phrase", given: [["my secret phrase is purple elephant", A]], text: "unknown word elephant", shown: "unknown word <A>" },
  { title: "the last characters of a token (digits)", given: [["K7Z2Q9-B3M8X4-W5R2", A]], text: "token ending W5R2 expired", shown: "token ending <A> expired" },
  { title: "a piece reversed", given: [["correcthorsebatterystaple", A]], text: "got elpatsyrettab", shown: "got <A>" },
  { title: "a piece in another case, split by separators", given: [["correcthorsebatterystaple", A]], text: "got BATTERY-STAPLE", shown: "got <A>" },
  { title: "the second argument's piece beside the first's", given: [["alphaalphaalpha", A], ["omegaomegaomega", B]], text: "alphaalpha then omegaomega", shown: "<A> then <B>" },
];

describe("hideRewritten: what a tool's message quotes of its hidden arguments", () => {
  for (const row of ROWS) {
    it(row.title, () => {
      expect(hideRewritten(row.text, row.given)).toBe(row.shown);
    });
  }

  it("hides a message of a million characters made of an argument's words, every one of them", () => {
    const text = "word ".repeat(200_000);
    const out = hideRewritten(text, [["a word here", A]]);
    expect(out).not.toContain("word");
    expect(out).toContain(A);
  });

  it("names each of 2,000 hidden addresses by its own stand-in where a message quotes it whole", () => {
    const given = Array.from({ length: 2000 }, (_, i): [string, string] => [`someone.${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26) % 26)}${String.fromCharCode(97 + Math.floor(i / 676))}@example.com`, `<E${i}>`]);
    const [value, shown] = given[1234];
    const out = hideRewritten(`no mailbox ${value} here`, given);
    expect(out).not.toContain(value.split("@")[0]);
    expect(out).toContain(shown);
  });
});
