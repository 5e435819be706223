// After tsc: copy the generated parser (plain JS) into dist and make the CLI executable.
import { chmodSync, cpSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
cpSync(join(root, "src/lisp/generated"), join(root, "dist/lisp/generated"), { recursive: true });
const cli = join(root, "dist/cli/main.js");
if (existsSync(cli)) chmodSync(cli, 0o755);
