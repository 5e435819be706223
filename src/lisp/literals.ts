// Collections a program writes as constants ([1 2 3], {:plan "pro"}): the program's own text,
// never computed from hidden context, so marks.ts takes them to hold no hidden value, whatever
// hidden value a string or number in them equals.
const literals = new WeakSet<object>();

/** Notes a collection the analyzer made of a program's constants. */
export function noteLiteral<T extends object>(v: T): T {
  literals.add(v);
  return v;
}

/** Whether a collection is one a program wrote as a constant. */
export function isLiteral(v: object): boolean {
  return literals.has(v);
}
