// A few lines of DOM building instead of a framework: elements from a tag, attributes
// (functions become event listeners) and children.
export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

// Characters that change how the text around them reads without being seen: bidi overrides,
// embeddings and isolates (a line of a program or a tool's output shown in another order than
// it holds, and spilling over what follows), zero-width spaces, word joiners, invisible
// operators, byte-order marks, and control characters (an escape). Every text a trace brings
// shows them as a marked code instead.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;
const HAS_INVISIBLE = new RegExp(INVISIBLE.source);

// A text of nothing but such characters (a hostile tool's output) would be an element each:
// past this many in one text, the rest are written as codes in the text itself.
const MAX_MARKS = 200;

/** `s` as a text node, or a fragment with its invisible characters shown as codes (`U+202E`). */
export function text(s: string): Node {
  if (!HAS_INVISIBLE.test(s)) return document.createTextNode(s);
  const out = document.createDocumentFragment();
  let plain = "";
  let from = 0;
  let marks = 0;
  for (const m of s.matchAll(INVISIBLE)) {
    plain += s.slice(from, m.index);
    from = m.index + 1;
    const code = `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    if (marks === MAX_MARKS) {
      plain += `[${code}]`;
      continue;
    }
    marks++;
    if (plain !== "") out.appendChild(document.createTextNode(plain));
    plain = "";
    const mark = document.createElement("span");
    mark.className = "ctl";
    mark.title = `an invisible character (${code}) in the text`;
    mark.textContent = code;
    out.appendChild(mark);
  }
  plain += s.slice(from);
  if (plain !== "") out.appendChild(document.createTextNode(plain));
  return out;
}

function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(typeof c === "string" || typeof c === "number" ? text(String(c)) : c);
  }
}

function setAttrs(el: Element, attrs: Attrs | null | undefined): void {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs?: Attrs | null, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** A file's name without its folders (the navigation and headers show this; the full path is the title). */
export const baseName = (path: string): string => path.split(/[\\/]/).pop() ?? path;

export const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");
export const ms = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${fmt(n)} ms`);

/** `12.3 KB`: the UTF-8 size of a text. */
export function size(text: string): string {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A closed `details` whose content is built when it is first opened: a long run's prompt holds
 * hundreds of messages, which built at every step made each key press take a second. Until
 * then it holds `texts` (what the content shows) as plain text, one element: find in page looks
 * into a closed details (and opens it at a match), but not into what is not built.
 */
export function lazyDetails(attrs: Attrs | null, summary: string, build: () => Child[], texts: readonly string[] = []): HTMLDetailsElement {
  const plain = texts.length === 0 ? null : h("pre", { class: "lazy-text" }, texts.map((t, i) => (i === 0 ? t : `\n${t}`)));
  const el = h("details", attrs, h("summary", null, summary), plain);
  let built = false;
  el.addEventListener("toggle", () => {
    if (!el.open || built) return;
    built = true;
    plain?.remove();
    append(el, build());
  });
  return el;
}

const COLLAPSE_CHARS = 1500;
const COLLAPSE_LINES = 25;

/** A block of text; a large one is collapsed behind a summary giving its size. */
export function block(text: string, label: string, body: (text: string) => Node = (t) => h("pre", null, t)): HTMLElement {
  const lines = text.split("\n").length;
  if (text.length <= COLLAPSE_CHARS && lines <= COLLAPSE_LINES) return h("div", { class: "block" }, body(text));
  return h("details", { class: "block large" }, h("summary", null, `${label}: ${size(text)}, ${fmt(lines)} line${lines === 1 ? "" : "s"} (show)`), body(text));
}
