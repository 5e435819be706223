// The page: one HTML document holding the styles, the bundled client script and the data.
// Nothing is fetched; the content security policy allows exactly the inline script and style
// by their hashes, so nothing else can run, load or connect, served or opened from disk.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PageData } from "./model.js";

export class ViewerAssetsError extends Error {
  override readonly name = "ViewerAssetsError";
}

interface Assets {
  script: string;
  style: string;
}

let assets: Assets | undefined;

/** The client bundle and style sheet that scripts/build-viewer.mjs writes beside this module. */
function loadAssets(): Assets {
  if (assets !== undefined) return assets;
  try {
    assets = {
      script: readFileSync(new URL("./generated/client.js", import.meta.url), "utf8"),
      style: readFileSync(new URL("./generated/style.css", import.meta.url), "utf8"),
    };
  } catch (e) {
    throw new ViewerAssetsError(`the viewer's page assets are not built (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); run npm run build`);
  }
  return assets;
}

const sha256 = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/** JSON that cannot end the script element it sits in (`</script>`, `<!--`) or break a line in old parsers. */
export function embedJson(data: unknown): string {
  return JSON.stringify(data).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

const escapeHtml = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The policy for a page: its own inline script and style, data: images, nothing else. */
export function contentSecurityPolicy(): string {
  const { script, style } = loadAssets();
  return `default-src 'none'; script-src ${sha256(script)}; style-src ${sha256(style)}; img-src data:; base-uri 'none'; form-action 'none'`;
}

export function renderPage(data: PageData): string {
  const { script, style } = loadAssets();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy()}">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(data.title)}</title>
<style>${style}</style>
</head><body>
<noscript>This viewer draws its page with a script; enable JavaScript for this file.</noscript>
<div id="app"></div>
<script type="application/json" id="ptc-data">${embedJson(data)}</script>
<script>${script}</script>
</body></html>
`;
}
