// The viewer's server: one page, built before it starts from the files given on the command
// line, served at `/` on a loopback address. The browser names no paths: every other URL is a
// 404. Requests whose Host is not the address served are refused (a web page elsewhere cannot
// reach the viewer through a rebound DNS name).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ViewerServer {
  url: string;
  close(): Promise<void>;
}

/** Loopback addresses only: the viewer shows traces, which may hold private data. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

function hostOf(header: string | undefined): string {
  if (header === undefined) return "";
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(header) ?? /^([^:]+)(?::\d+)?$/.exec(header);
  return m ? m[1].toLowerCase() : "";
}

export function serveViewer(page: string, csp: string, options: { host: string; port: number }): Promise<ViewerServer> {
  const body = Buffer.from(page, "utf8");
  const headers = {
    "Content-Security-Policy": `${csp}; frame-ancestors 'none'`,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const text = (status: number, message: string) => {
      res.writeHead(status, { ...headers, "Content-Type": "text/plain; charset=utf-8" });
      res.end(message);
    };
    if (!isLoopback(hostOf(req.headers.host))) return text(403, "ptc view answers only requests addressed to a loopback host\n");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      return text(405, "method not allowed\n");
    }
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/" && path !== "/index.html") return text(404, "not found: ptc view serves one page, at /\n");
    res.writeHead(200, { ...headers, "Content-Type": "text/html; charset=utf-8", "Content-Length": body.length });
    res.end(req.method === "HEAD" ? undefined : body);
  };
  return new Promise((resolve, reject) => {
    const server = createServer(handle);
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(":") ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}/`,
        // A browser holds its keep-alive connection open: end it, or close would wait for it.
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
