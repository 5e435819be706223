// Bundles the viewer's client (src/viewer/client, TypeScript, plain DOM) into one minified
// script and copies its style sheet, both into src/viewer/generated/, where the page module
// reads them to inline into every page (postbuild copies them into dist/).
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const client = join(root, "src/viewer/client");
const outDir = join(root, "src/viewer/generated");
mkdirSync(outDir, { recursive: true });
await build({
  entryPoints: [join(client, "main.ts")],
  outfile: join(outDir, "client.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  platform: "browser",
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync(join(client, "style.css"), join(outDir, "style.css"));
// Both are inlined into the page: neither may end its element early.
for (const [file, tag] of [["client.js", "script"], ["style.css", "style"]]) {
  if (new RegExp(`</${tag}`, "i").test(readFileSync(join(outDir, file), "utf8"))) throw new Error(`build-viewer: ${file} contains </${tag}`);
}
