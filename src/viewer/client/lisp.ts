// PTC-Lisp syntax highlighting: a small tokenizer (comments, strings, keywords, numbers,
// special forms, tool and data references, brackets), rendered line by line so an error's
// line can be marked.
import { h, text } from "./dom.js";

const SPECIAL = new Set(["def", "defn", "defn-", "fn", "let", "if", "when", "when-not", "when-let", "if-let", "cond", "case", "do", "loop", "recur", "return", "fail", "for", "doseq", "->", "->>", "some->", "cond->", "and", "or", "try", "catch", "throw", "quote"]);

const TOKEN = /;[^\n]*|"(?:[^"\\]|\\[\s\S])*"?|#"(?:[^"\\]|\\[\s\S])*"?|:[^\s()[\]{}",;]+|-?\d[\d.eE_/+-]*[MN]?|[()[\]{}]|#\{|[^\s()[\]{}",;]+|\s+|[\s\S]/g;

export type TokenClass = "comment" | "string" | "keyword" | "number" | "special" | "tool" | "data" | "bracket" | "symbol" | "space";

export function tokenize(source: string): Array<[TokenClass, string]> {
  const out: Array<[TokenClass, string]> = [];
  for (const m of source.matchAll(TOKEN)) {
    const t = m[0];
    let c: TokenClass;
    if (t[0] === ";") c = "comment";
    else if (t[0] === '"' || t.startsWith('#"')) c = "string";
    else if (t[0] === ":") c = "keyword";
    else if (/^-?\d/.test(t)) c = "number";
    else if (/^[()[\]{}]$|^#\{$/.test(t)) c = "bracket";
    else if (/^\s+$/.test(t)) c = "space";
    else if (t.startsWith("tool/")) c = "tool";
    else if (t.startsWith("data/")) c = "data";
    else if (SPECIAL.has(t) || t === "true" || t === "false" || t === "nil") c = "special";
    else c = "symbol";
    out.push([c, t]);
  }
  return out;
}

/** The program as highlighted lines; `errorLine` (1-based) is marked. */
export function highlight(source: string, errorLine?: number): HTMLElement {
  const lines: HTMLElement[] = [];
  let line = h("span", { class: "ln" });
  const flush = () => {
    lines.push(line);
    line = h("span", { class: "ln" });
  };
  for (const [c, token] of tokenize(source)) {
    const parts = token.split("\n");
    parts.forEach((part, i) => {
      if (i > 0) flush();
      if (part !== "") line.appendChild(c === "space" || c === "symbol" ? text(part) : h("span", { class: `t-${c}` }, part));
    });
  }
  flush();
  lines.forEach((l, i) => {
    if (i + 1 === errorLine) l.classList.add("error-line");
  });
  return h("pre", { class: "code lisp" }, lines.flatMap((l, i) => (i === 0 ? [l] : ["\n", l])));
}
