// The characters a stand-in for a hidden value (marks.ts) is written between until it is shown:
// here, apart from marks.ts, so that the printer, which marks.ts uses, can tell one too.

export const STAND_IN_OPEN = "\uE000";
export const STAND_IN_CLOSE = "\uE001";

/** Whether a string is a stand-in (what marks.ts hides a marked value as). */
export function isStandIn(s: string): boolean {
  return s.length > 1 && s.startsWith(STAND_IN_OPEN) && s.endsWith(STAND_IN_CLOSE);
}
