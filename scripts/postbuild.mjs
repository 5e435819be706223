// After tsc: copy the generated parser and the viewer's page assets (which tsc does not emit) into dist and
// make the CLI executable. It also runs when tsc reported type errors (tsc still emits),
// so dist/ stays runnable while the build itself is reported as failed.
import { chmodSync, cpSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
cpSync(join(root, "src/lisp/generated"), join(root, "dist/src/lisp/generated"), { recursive: true });
cpSync(join(root, "src/viewer/generated"), join(root, "dist/src/viewer/generated"), { recursive: true });
const cli = join(root, "dist/src/cli/main.js");
if (!existsSync(cli)) throw new Error(`postbuild: ${cli} was not built`);
chmodSync(cli, 0o755);
