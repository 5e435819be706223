// The prompt template files in `prompts/` (the agent's and the compaction summarizers'):
// loaded once, their leading `<!-- ... -->` note stripped, and filled by `{{name}}` placeholders.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type TemplateName =
  | "role"
  | "language"
  | "mistakes"
  | "multi-turn"
  | "single-turn"
  | "history-full"
  | "history-compressed"
  | "agent"
  | "task"
  | "compaction-conversation"
  | "compaction-code"
  | "compaction-recap"
  | "compaction-goal";

// Source and build layouts put this module at different depths, so look upward for prompts/.
function promptsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "prompts");
    if (existsSync(join(candidate, "role.md"))) return candidate;
    dir = dirname(dir);
  }
  throw new Error("ptc-lisp: the prompts/ template directory was not found next to the package");
}

let dir: string | null = null;
const loaded = new Map<TemplateName, string>();

/** A template's text, without its leading comment and surrounding blank lines. */
export function template(name: TemplateName): string {
  let text = loaded.get(name);
  if (text === undefined) {
    dir ??= promptsDir();
    text = readFileSync(join(dir, `${name}.md`), "utf8")
      .replace(/\r\n?/g, "\n")
      .replace(/^\s*<!--[\s\S]*?-->\s*/, "")
      .trim();
    loaded.set(name, text);
  }
  return text;
}

/** Replaces every `{{key}}` in one pass, so a value holding braces is never expanded again; a placeholder without a value is a bug in the caller and throws. */
export function fill(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{(\w[\w-]*)\}\}/g, (_, key: string) => {
    if (!Object.hasOwn(values, key)) throw new Error(`prompt template placeholder {{${key}}} has no value`);
    return values[key];
  });
}
