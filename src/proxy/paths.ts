// Where the proxy keeps its state, and which request paths it accepts. State goes to the XDG
// state directory (never the working directory unless asked: a command run in a clone must not
// leave a database in it). A request path is normalized once (doubled slashes, dot segments,
// percent-encoded unreserved characters) before anything matches on it, so `//ext/...` is the
// admin route and `/v1/../../x` cannot climb out of the upstream's base path.
import { homedir } from "node:os";
import { join } from "node:path";

/** $XDG_STATE_HOME/ptc, else ~/.local/state/ptc. */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  return join(xdg !== undefined && xdg.startsWith("/") ? xdg : join(env.HOME ?? homedir(), ".local", "state"), "ptc");
}

export type NormalizedPath = { ok: true; path: string; query: string } | { ok: false; reason: string };

const UNRESERVED = /%(?:3[0-9]|4[1-9a-f]|5[0-9a]|6[1-9a-f]|7[0-9a]|2d|2e|5f|7e)/gi;

export function normalizePath(url: string): NormalizedPath {
  const q = url.indexOf("?");
  const raw = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? "" : url.slice(q);
  if (!raw.startsWith("/")) return { ok: false, reason: "the request target must be a path" };
  // An encoded separator would be decoded by some upstream after this check: refused outright.
  if (/%2f|%5c|\\/i.test(raw)) return { ok: false, reason: "encoded slashes and backslashes are not accepted" };
  const out: string[] = [];
  const segments = raw.split("/");
  for (let i = 1; i < segments.length; i++) {
    const seg = segments[i];
    // Empty segments are doubled slashes, except a trailing one, which is kept.
    if (seg === "" && i < segments.length - 1) continue;
    // Encoded letters, digits and -._~ are the characters themselves (RFC 3986 6.2.2.2), and the
    // upstream decodes them: `/v1/chat/%63ompletions` is its chat route, so it must be the proxy's too
    // (else it went through uncompacted, and a stream that reports no usage was charged nothing).
    const plain = seg.includes("%") ? seg.replace(UNRESERVED, (e) => String.fromCharCode(parseInt(e.slice(1), 16))) : seg;
    if (plain === ".") continue;
    if (plain === "..") {
      if (out.length === 0) return { ok: false, reason: "the path climbs above the root" };
      out.pop();
      continue;
    }
    out.push(plain);
  }
  return { ok: true, path: `/${out.join("/")}`, query };
}

/** Forwarded paths stay under /v1. */
export const underV1 = (path: string): boolean => path === "/v1" || path.startsWith("/v1/");
