// Names in hidden context. A context key starting with `_` is hidden from models. Inside hidden
// context, a map key that reads as a field name (`:token`, `:unit-price`, `:address2`) is shown,
// so a model can tell the data's shape and name its fields; any other key (`:alice@example.com`,
// `:K7Z2Q9-B3M8X4`, `:4111111111111111`) is hidden like a value, since maps keyed by users, cards
// or tokens are common.

const FIELD = /^[A-Za-z]+(?:[-_][A-Za-z]+)*\d{0,2}[?!]?$/;

/** Whether a context key is hidden from prompts. */
export function isHiddenKey(key: string): boolean {
  return key.startsWith("_");
}

/** Whether a key of hidden context reads as a field name: letters in `-`/`_`-joined words, up to two trailing digits, 32 characters at most. */
export function isFieldName(name: string): boolean {
  return name.length <= 32 && FIELD.test(name);
}
