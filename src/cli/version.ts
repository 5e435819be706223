// The package version, for `ptc --version` and the reports that say what produced them.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package version, found by walking up from this file (src/cli or dist/src/cli). */
export function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "ptc-lisp") return pkg.version ?? "unknown";
    }
    const up = dirname(dir);
    if (up === dir) return "unknown";
    dir = up;
  }
}
