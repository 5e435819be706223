// A turn's prompt: as sent beside the full history (or either alone), each message with its
// tokens and how it relates to the previous turn's prompt, and a marker where the prefix
// cache broke.
import { expandRuns, type MessageChange, type MessageRef, type PromptView } from "../model.js";
import { block, fmt, h, lazyDetails } from "./dom.js";

export type PromptLayout = "split" | "sent" | "full";

const CHANGE_LABEL: Record<MessageChange, string> = {
  cached: "cached prefix",
  changed: "changed: the cache breaks inside",
  same: "sent before, not at this place",
  new: "new",
};

function message(texts: readonly string[], m: MessageRef, index: number, change?: MessageChange, commonChars = 0): HTMLElement {
  const text = texts[m.text] ?? "";
  const head = h("div", { class: "msg-head" }, h("span", { class: `role role-${m.role}` }, m.role), ` #${index + 1} · ${fmt(m.tokens)} tokens`, change ? h("span", { class: `change change-${change}` }, CHANGE_LABEL[change]) : null);
  // The shared start is counted in UTF-16 units, which may end inside a character written as two (an emoji): mark before it.
  const cut = commonChars > 0 && text.charCodeAt(commonChars - 1) >= 0xd800 && text.charCodeAt(commonChars - 1) <= 0xdbff ? commonChars - 1 : commonChars;
  const body = (t: string) =>
    change === "changed" && cut > 0 && cut < t.length
      ? h("pre", null, h("span", { class: "common" }, t.slice(0, cut)), h("mark", { class: "break-mark", title: "the prefix cache breaks here" }, "▼"), h("span", { class: "differs" }, t.slice(cut)))
      : h("pre", null, t);
  return h("div", { class: `msg msg-${m.role}${change ? ` ${change}` : ""}`, "data-index": index }, head, block(text, `${m.role} message`, body));
}

// A long history shows its first messages (the system prompt, the task) and its latest; the
// ones between open on demand. Built whole, a 700-turn run's prompt was 15,000 elements.
const HEAD = 2;
const TAIL = 20;
const MIN_HIDDEN = 10;

/** The messages [from, to) of a long list, behind a summary that builds them when opened. */
function earlier(texts: readonly string[], list: readonly MessageRef[], from: number, to: number, build: (i: number) => HTMLElement): HTMLElement {
  const n = to - from;
  const hiddenTexts = list.slice(from, to).map((m) => texts[m.text] ?? "");
  return lazyDetails({ class: "earlier", "data-from": from + 1, "data-to": to }, `${fmt(n)} earlier messages, #${from + 1} to #${to} (${fmt(tokensOf(list, [from, to]))} tokens): show`, () => Array.from({ length: n }, (_, k) => build(from + k)), hiddenTexts);
}

/** Where a list of `n` messages hides its middle: [from, to), or null when it is short enough to show whole. `limit` caps what may be hidden. */
function hidden(n: number, limit = n): [number, number] | null {
  const to = Math.min(limit, n - TAIL);
  return to - HEAD >= MIN_HIDDEN ? [HEAD, to] : null;
}

/** A prompt's message lists, read from the page's message table. */
interface Lists {
  sent: MessageRef[];
  full: MessageRef[];
  dropped: MessageRef[];
}

function sentColumn(texts: readonly string[], p: PromptView, l: Lists): HTMLElement {
  const items: HTMLElement[] = [];
  let cachedChars = 0;
  const cached = p.prefix?.messages ?? 0;
  // Only messages of the cached prefix are hidden: what changed is always in view.
  const gap = hidden(l.sent.length, cached);
  l.sent.forEach((m, i) => {
    const change: MessageChange = i < cached ? "cached" : p.changes[i - cached];
    if (p.prefix !== null && i === p.prefix.messages) {
      items.push(h("div", { class: "cache-break" }, `prefix cache breaks here: ${fmt(p.prefix.tokens)} tokens (${p.prefix.messages} message${p.prefix.messages === 1 ? "" : "s"}) could be served from the cache`));
    }
    if (gap !== null && i === gap[0]) items.push(earlier(texts, l.sent, gap[0], gap[1], (k) => message(texts, l.sent[k], k, "cached")));
    if (gap === null || i < gap[0] || i >= gap[1]) items.push(message(texts, m, i, change, change === "changed" && p.prefix ? p.prefix.chars - cachedChars : 0));
    if (change === "cached") cachedChars += (texts[m.text] ?? "").length;
  });
  if (p.prefix !== null && p.prefix.messages === l.sent.length) items.push(h("div", { class: "cache-break whole" }, "the whole prompt repeats the previous one"));
  if (l.dropped.length > 0) {
    items.push(lazyDetails({ class: "dropped" }, `${l.dropped.length} message${l.dropped.length === 1 ? "" : "s"} of the previous prompt no longer sent (${fmt(l.dropped.reduce((n, m) => n + m.tokens, 0))} tokens)`, () => l.dropped.map((m, i) => message(texts, m, i)), l.dropped.map((m) => texts[m.text] ?? "")));
  }
  const same = l.sent.length === l.full.length && l.sent.every((m, i) => m.text === l.full[i].text);
  return h(
    "section",
    { class: "prompt-col", "data-view": "sent" },
    h("h4", null, `As sent: ${fmt(p.sentTokens)} tokens, ${l.sent.length} messages`, same ? h("span", { class: "badge" }, "same as the full history") : null),
    keptLine(p),
    items,
  );
}

function keptLine(p: PromptView): HTMLElement | null {
  if (p.summarized === 0 && p.keptFull.length === 0) return null;
  const kept = p.keptFull.map((k) => `turn ${k.turn} (${k.reason})`).join(", ");
  return h("p", { class: "muted" }, `${p.summarized} earlier turn${p.summarized === 1 ? "" : "s"} summarized${kept ? `; kept in full: ${kept}` : ""}`);
}

function fullColumn(texts: readonly string[], p: PromptView, l: Lists): HTMLElement {
  const gap = hidden(l.full.length);
  const shown = (from: number, to: number) => l.full.slice(from, to).map((m, k) => message(texts, m, from + k));
  const items = gap === null ? shown(0, l.full.length) : [...shown(0, gap[0]), earlier(texts, l.full, gap[0], gap[1], (k) => message(texts, l.full[k], k)), ...shown(gap[1], l.full.length)];
  return h("section", { class: "prompt-col", "data-view": "full" }, h("h4", null, `Full history: ${fmt(p.fullTokens)} tokens, ${l.full.length} messages`), items);
}

const tokensOf = (list: readonly MessageRef[], [from, to]: [number, number]): number => {
  let n = 0;
  for (let i = from; i < to; i++) n += list[i].tokens;
  return n;
};

export function promptSection(texts: readonly string[], messages: readonly MessageRef[], p: PromptView, layout: PromptLayout, setLayout: (l: PromptLayout) => void): HTMLElement {
  const refs = (runs: number[]): MessageRef[] => expandRuns(runs).map((i) => messages[i]);
  const lists: Lists = { sent: refs(p.sent), full: refs(p.full), dropped: refs(p.dropped) };
  const saved = p.fullTokens === 0 ? 0 : 1 - p.sentTokens / p.fullTokens;
  const button = (l: PromptLayout, label: string) => h("button", { class: l === layout ? "toggle on" : "toggle", "data-layout": l, "aria-pressed": String(l === layout), onclick: () => setLayout(l) }, label);
  return h(
    "section",
    { class: "prompt", id: "prompt" },
    h("h3", null, "Prompt the model received"),
    h(
      "p",
      { class: "muted" },
      `As sent ${fmt(p.sentTokens)} tokens against ${fmt(p.fullTokens)} for the full history (${(saved * 100).toFixed(1)}% fewer). `,
      p.prefix === null ? "First turn: nothing cached yet." : `${fmt(p.prefix.tokens)} tokens shared with the previous prompt.`,
    ),
    h("div", { class: "toggles", role: "group", "aria-label": "prompt view" }, button("split", "Side by side"), button("sent", "As sent"), button("full", "Full history"), h("span", { class: "muted" }, " (key f)")),
    h("div", { class: `prompt-cols layout-${layout}` }, layout !== "full" ? sentColumn(texts, p, lists) : null, layout !== "sent" ? fullColumn(texts, p, lists) : null),
  );
}
