// Which hosts and browser origins the proxy answers. A page on evil.example can rebind its name to
// 127.0.0.1 and then drive the proxy from a victim's browser as same-origin; the Host header still
// says evil.example. And any page can send a form or a text/plain fetch (no preflight) to the
// proxy, whose chat routes read the body as JSON whatever its type. So the Host must be a name no
// page can rebind (an IP address, localhost, *.localhost), the name the proxy listens on, or one
// given with allowedHosts; and a browser request from a page elsewhere (Origin) is refused on the
// admin routes and on anything but a read.
import { isIP } from "node:net";

export interface HostPolicy {
  /** Every host allowed ("*" given). */
  readonly any: boolean;
  /** Exact names, lowercase. */
  readonly names: ReadonlySet<string>;
  /** Suffixes from ".example.com" entries: the name and its subdomains. */
  readonly suffixes: readonly string[];
}

/** The policy of `allowed` (names, ".suffix" entries, "*") plus the address the proxy listens on. */
export function hostPolicy(allowed: readonly string[], listenHost: string): HostPolicy {
  const names = new Set<string>();
  const suffixes: string[] = [];
  let any = false;
  for (const entry of [...allowed, listenHost]) {
    // Written as a Host header is ("name:8787", "[fd00::1]:8787"), it names the host; a bare IPv6 address is one.
    const trimmed = entry.trim();
    const name = isIP(trimmed) === 6 ? trimmed.toLowerCase() : hostName(trimmed);
    if (name === "*") any = true;
    else if (name.startsWith(".")) {
      names.add(name.slice(1));
      suffixes.push(name);
    } else if (name !== "") names.add(name);
  }
  return { any, names, suffixes };
}

/** The host name of a Host header value ("name:port", "[v6]:port"), lowercase, without a trailing dot. */
export function hostName(header: string): string {
  const h = header.toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.lastIndexOf(":");
  return stripDot(colon < 0 ? h : h.slice(0, colon));
}

const stripDot = (name: string): string => (name.length > 1 && name.endsWith(".") ? name.slice(0, -1) : name);

const isLocalhost = (name: string): boolean => name === "localhost" || name.endsWith(".localhost");

function listed(policy: HostPolicy, name: string): boolean {
  if (policy.any || policy.names.has(name)) return true;
  for (const suffix of policy.suffixes) if (name.endsWith(suffix)) return true;
  return false;
}

/** Whether a request's Host may be answered: an IP address or localhost (no page can rebind those), or a listed name. */
export function hostAllowed(policy: HostPolicy, header: string | undefined): boolean {
  // Only HTTP/1.0 clients omit it (Node refuses an HTTP/1.1 request without one), and no browser is one.
  if (header === undefined || policy.any) return true;
  const name = hostName(header);
  return isIP(name) !== 0 || isLocalhost(name) || listed(policy, name);
}

/** Whether the raw headers carry Host more than once (RFC 9112 3.2: answered 400). Node keeps the first, where another hop may read the last. */
export function repeatedHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length !== 4 || name.toLowerCase() !== "host") continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/**
 * Whether a browser request from `origin` may reach a route that changes state or reads admin
 * data: a page on this machine (localhost, a loopback address) or on a listed name. "null"
 * (a sandboxed frame, a file) and anything unparsable are foreign.
 */
export function originAllowed(policy: HostPolicy, origin: string): boolean {
  if (policy.any) return true;
  let name: string;
  try {
    name = stripDot(new URL(origin).hostname.toLowerCase());
  } catch {
    return false;
  }
  if (name.startsWith("[")) name = name.slice(1, -1);
  return isLocalhost(name) || isLoopbackIp(name) || listed(policy, name);
}

const isLoopbackIp = (name: string): boolean => (isIP(name) === 4 && name.startsWith("127.")) || name === "::1";
