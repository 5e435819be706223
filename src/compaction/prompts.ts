// The compaction prompt templates in `prompts/compaction-*.md`: loaded once, their leading
// `<!-- ... -->` note stripped, filled by `{{name}}` placeholders.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type CompactionPrompt = "conversation" | "code" | "recap" | "goal";

// Source and build layouts put this module at different depths, so look upward for prompts/.
function promptsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "prompts");
    if (existsSync(join(candidate, "compaction-conversation.md"))) return candidate;
    dir = dirname(dir);
  }
  throw new Error("ptc-lisp: the prompts/ directory with the compaction templates was not found next to the package");
}

let dir: string | null = null;
const loaded = new Map<CompactionPrompt, string>();

/** A compaction template's text, without its leading comment. */
export function compactionPrompt(name: CompactionPrompt): string {
  let text = loaded.get(name);
  if (text === undefined) {
    dir ??= promptsDir();
    text = readFileSync(join(dir, `compaction-${name}.md`), "utf8")
      .replace(/\r\n?/g, "\n")
      .replace(/^\s*<!--[\s\S]*?-->\s*/, "")
      .trim();
    loaded.set(name, text);
  }
  return text;
}

/** Replaces every `{{key}}` in one pass, so a value containing braces is never re-expanded. */
export function fillPrompt(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    if (!Object.hasOwn(values, key)) throw new Error(`compaction prompt placeholder {{${key}}} has no value`);
    return values[key];
  });
}
