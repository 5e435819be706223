// Integer text as Java's Long/parseLong and Integer/parseInt read it (and so Clojure's
// parse-long, Long/valueOf): an optional sign, then digits of the radix, each UTF-16 unit read by
// Character/digit, which takes any Unicode decimal digit ("١٢٣" is 123) and, past radix 10, Latin
// letters of either width. A number the type cannot hold is refused; a long a double cannot hold
// exactly (past ±2^53-1) is told apart, so the caller never answers with another number.

/** What the text reads as, when not an integer: not one at all, past the type's range, or a long past ±2^53-1. */
export type NotRead = "bad" | "outside" | "inexact";

const ZERO = 0x30;
const NINE = 0x39;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
const WIDE_UPPER_A = 0xff21;
const WIDE_UPPER_Z = 0xff3a;
const WIDE_LOWER_A = 0xff41;
const WIDE_LOWER_Z = 0xff5a;
const DECIMAL = /\p{Nd}/u;

/** Java's Character/digit of one UTF-16 unit: its value in `radix`, or -1. */
function digit(unit: number, radix: number): number {
  let d = -1;
  if (unit >= ZERO && unit <= NINE) d = unit - ZERO;
  else if (unit >= LOWER_A && unit <= LOWER_Z) d = unit - LOWER_A + 10;
  else if (unit >= UPPER_A && unit <= UPPER_Z) d = unit - UPPER_A + 10;
  else if (unit >= WIDE_LOWER_A && unit <= WIDE_LOWER_Z) d = unit - WIDE_LOWER_A + 10;
  else if (unit >= WIDE_UPPER_A && unit <= WIDE_UPPER_Z) d = unit - WIDE_UPPER_A + 10;
  else if (unit > 0x7f && !(unit >= 0xd800 && unit <= 0xdfff)) d = decimalValue(unit);
  return d < radix ? d : -1;
}

// Each UTF-16 unit's decimal value (-1: none), found once: -2 until it is.
let decimals: Int8Array | null = null;

/**
 * The value of a Unicode decimal digit, or -1. Unicode encodes them in runs of ten, 0 to 9, and
 * runs that touch each begin at a 0: the value is the distance from the run's start, modulo 10.
 */
function decimalValue(unit: number): number {
  decimals ??= new Int8Array(0x10000).fill(-2);
  const known = decimals[unit];
  if (known !== -2) return known;
  let value = -1;
  if (DECIMAL.test(String.fromCharCode(unit))) {
    let start = unit;
    while (start > 0 && DECIMAL.test(String.fromCharCode(start - 1))) start--;
    value = (unit - start) % 10;
  }
  decimals[unit] = value;
  return value;
}

// The largest magnitudes, positive and negative: an int's as numbers, a long's as bigints (read
// exactly only past 2^53, where a long still fits and a double no longer does).
const INT_LIMITS = [2 ** 31 - 1, 2 ** 31] as const;
const LONG_LIMITS = [2n ** 63n - 1n, 2n ** 63n] as const;

/** The integer `text` is in `radix` as a `bits`-bit Java integer, or why it is not one. */
export function javaInteger(text: string, radix: number, bits: 32 | 64): number | NotRead {
  const sign = text.charCodeAt(0);
  const negative = sign === 0x2d;
  const from = negative || sign === 0x2b ? 1 : 0;
  if (text.length === from) return "bad";
  const side = negative ? 1 : 0;
  const intLimit = bits === 32 ? INT_LIMITS[side] : Number.MAX_SAFE_INTEGER;
  let n = 0;
  let big: bigint | null = null;
  let outside = false;
  for (let i = from; i < text.length; i++) {
    const d = digit(text.charCodeAt(i), radix);
    if (d < 0) return "bad";
    if (outside) continue;
    if (big === null && n <= (Number.MAX_SAFE_INTEGER - d) / radix) {
      n = n * radix + d;
      outside = n > intLimit && bits === 32;
    } else {
      // Only a long gets here (an int is outside long before): its digits past 2^53, exactly.
      big = (big ?? BigInt(n)) * BigInt(radix) + BigInt(d);
      outside = big > LONG_LIMITS[side];
    }
  }
  if (outside) return "outside";
  if (big !== null) return "inexact";
  return negative && n !== 0 ? -n : n;
}
