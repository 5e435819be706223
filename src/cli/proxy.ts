// `ptc proxy`: runs the compaction proxy until SIGINT or SIGTERM.
import { existsSync } from "node:fs";
import { MAX_TIMER_MS } from "../lisp/index.js";
import { redactUrl } from "../proxy/config.js";
import { jsonLogger } from "../proxy/log.js";
import { defaultStateDir } from "../proxy/paths.js";
import { ProxyStartError, startProxy } from "../proxy/server.js";
import { parseOptions, usageFailure, UsageError, wholeNumber, type Io } from "./eval.js";
import { type ReadLimit, readText, TextInputError } from "../json/text-input.js";
import { forTerminal } from "./output.js";

const USAGE = `usage: ptc proxy --upstream URL [--port 8787] [--host 127.0.0.1] [--config FILE] [--state-dir DIR | --db FILE|URL] [--admin-token-file FILE] [--drain-timeout MS] [--allowed-host NAME]...

An OpenAI-compatible server that forwards to URL (an OpenAI-compatible base URL, e.g.
http://127.0.0.1:11434/v1) and compacts each conversation before it would overflow the model's
context. Point any OpenAI client at http://HOST:PORT/v1 instead of the upstream.

  --upstream URL       where requests go (or "upstream" in the config file)
  --port N             default 8787 (0: any free port)
  --host H             default 127.0.0.1; anything else exposes the clients' keys to the network
  --allowed-host NAME  a Host name to answer besides IP addresses and localhost (repeatable; ".example.com":
                       it and its subdomains; "*": any), e.g. the name a load balancer forwards; others
                       get 403, as would a page rebinding its own name to this address
  --config FILE        JSON settings (docs/proxy.md), at most 16 MiB; rewritten by admin updates, reloaded when edited
  --state-dir DIR      where state is kept, created 0700 (default $XDG_STATE_HOME/ptc or ~/.local/state/ptc)
  --db FILE            SQLite file for conversation state instead (":memory:" keeps none), created 0600
  --db postgres://...  PostgreSQL shared by replicas (docs/proxy.md "Replicas"); the password
                       is best in PGPASSWORD or ~/.pgpass, not in the URL (ps shows it)
  --admin-token-file F enables /ext/context_compaction/* with the token in F (or PTC_PROXY_ADMIN_TOKEN[_FILE]);
                       without a token they are off
  --admin-token T      the same, but visible to other users in ps
  --drain-timeout MS   on SIGTERM/SIGINT, how long in-flight requests may take to finish (default 30000)

Logs are JSON lines on stderr. Stop with Ctrl-C or SIGTERM: in-flight requests finish first
(a second signal stops at once).
`;

/** A token is a line: a file past this is no token file, and one without an end (/dev/zero) is read no further. */
const ADMIN_TOKEN_LIMIT: ReadLimit = { bytes: 64 * 1024, what: "be an admin token" };

/** Runs the proxy until `stop` resolves (by default on SIGINT or SIGTERM). */
export async function runProxyCommand(args: string[], io: Io, stop?: Promise<void>): Promise<number> {
  let values;
  try {
    ({ values } = parseOptions({
      args,
      options: {
        upstream: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "allowed-host": { type: "string", multiple: true },
        config: { type: "string" },
        db: { type: "string" },
        "admin-token": { type: "string" },
        "drain-timeout": { type: "string" },
        "state-dir": { type: "string" },
        "admin-token-file": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
    if (values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    // Without an upstream every chat request would fail: refuse at once (a config file may name one).
    if (values.upstream === undefined && values.config === undefined) throw new UsageError("no upstream: give --upstream URL (or a --config file that names one)");
    // Else the proxy ran on the defaults, logging a missing config file named "".
    if (values.config === "") throw new UsageError("--config: the file name is empty");
    // The state lives in one place: the other flag would be ignored unseen.
    if (values.db !== undefined && values["state-dir"] !== undefined) throw new UsageError("give --state-dir or --db, not both");
    // Else the file was ignored without a word, and its token refused.
    if (values["admin-token"] !== undefined && values["admin-token-file"] !== undefined) throw new UsageError("give --admin-token or --admin-token-file, not both");
  } catch (e) {
    return usageFailure("proxy", e, io, USAGE);
  }
  // Digits only: Number("") is 0, any free port, which no client of a chosen port finds.
  const port = values.port === undefined ? 8787 : wholeNumber(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    io.stderr.write(forTerminal(`ptc proxy: --port must be a port number, got ${values.port}\n`));
    return 2;
  }
  // Digits only, as --port: Number("") is 0, which cut in-flight requests at once.
  const drainTimeout = values["drain-timeout"] === undefined ? undefined : wholeNumber(values["drain-timeout"]);
  // Past the longest timer Node keeps, setTimeout fires after 1 ms: in-flight requests were cut at once.
  if (drainTimeout !== undefined && !(Number.isInteger(drainTimeout) && drainTimeout >= 0 && drainTimeout <= MAX_TIMER_MS)) {
    io.stderr.write(forTerminal(`ptc proxy: --drain-timeout must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${JSON.stringify(values["drain-timeout"])}\n`));
    return 2;
  }
  if (values.upstream !== undefined && !/^https?:\/\/[^/]/.test(values.upstream)) {
    // Credentials in it (user:key@host) are not echoed: a mistyped scheme is no reason to print a key.
    io.stderr.write(forTerminal(`ptc proxy: --upstream must be an http(s) URL, got ${redactUrl(values.upstream)}\n`));
    return 2;
  }
  let adminToken = values["admin-token"] ?? process.env.PTC_PROXY_ADMIN_TOKEN;
  const tokenFile = values["admin-token-file"] ?? process.env.PTC_PROXY_ADMIN_TOKEN_FILE;
  // Else the admin routes would be off without a word (--admin-token "$TOKEN" with the variable unset).
  if (values["admin-token"] === "") {
    io.stderr.write("ptc proxy: --admin-token is empty\n");
    return 2;
  }
  if (values["admin-token"] !== undefined) io.stderr.write("ptc proxy: warning: --admin-token is visible to other users in the process list; prefer --admin-token-file or PTC_PROXY_ADMIN_TOKEN\n");
  else if (tokenFile !== undefined) {
    try {
      // Bounded and strictly UTF-8, as every input file: a token file without an end (/dev/zero) was read until the process died.
      adminToken = readText(tokenFile, tokenFile, ADMIN_TOKEN_LIMIT).trim();
    } catch (e) {
      io.stderr.write(forTerminal(`ptc proxy: cannot read the admin token file${e instanceof TextInputError ? "" : ` ${tokenFile}`}: ${(e as Error).message}\n`));
      return 2;
    }
    // Else the admin routes would be off without a word (a token written from an unset variable).
    if (adminToken === "") {
      io.stderr.write(forTerminal(`ptc proxy: the admin token file ${tokenFile} is empty\n`));
      return 2;
    }
  }
  let proxy;
  try {
    proxy = await startProxy({
      ...(values.upstream === undefined ? {} : { upstream: values.upstream }),
      port,
      host: values.host ?? "127.0.0.1",
      allowedHosts: values["allowed-host"] ?? [],
      ...(values.config === undefined ? {} : { configFile: values.config }),
      ...(values.db === undefined ? { stateDir: values["state-dir"] ?? defaultStateDir(process.env) } : { db: values.db }),
      adminToken,
      logger: jsonLogger((line) => io.stderr.write(line)),
    });
  } catch (e) {
    const { code, syscall } = e as NodeJS.ErrnoException;
    // The server's listen (or its address lookup) failing is said as ptc view says it, not as the host's "Error: listen EADDRNOTAVAIL: ...".
    const listening = code !== undefined && code !== "EADDRINUSE" && (syscall === "listen" || syscall === "getaddrinfo");
    io.stderr.write(`ptc proxy: ${listening ? `cannot listen on ${values.host ?? "127.0.0.1"}:${port} (${code})` : e instanceof ProxyStartError || code === "EADDRINUSE" ? (e as Error).message : String(e)}\n`);
    return 2;
  }
  if (proxy.context.config.current.upstream === undefined) {
    await proxy.close();
    // A mistyped path is said as such, not as a file that names no upstream.
    const why = values.config !== undefined && !existsSync(values.config) ? `the config file ${values.config} does not exist; give --upstream URL or the path of a file that names one` : `${values.config} names none; give --upstream URL or add "upstream" to it`;
    return usageFailure("proxy", new UsageError(`no upstream: ${why}`), io, USAGE);
  }
  io.stdout.write(`ptc proxy: listening on ${proxy.url}/v1 -> ${redactUrl(proxy.context.config.current.upstream) ?? "(no upstream)"}\n`);
  await (stop ??
    new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    }));
  // A second signal stops at once, cutting what is still running.
  const now = () => void proxy.close();
  process.once("SIGINT", now);
  process.once("SIGTERM", now);
  await proxy.drain(drainTimeout);
  process.off("SIGINT", now);
  process.off("SIGTERM", now);
  return 0;
}
