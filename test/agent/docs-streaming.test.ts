// The docs/agent.md examples of Streaming and OpenTelemetry, run as written: the OTLP set-ups
// (Jaeger, Phoenix, Langfuse) against a fake OpenAI-compatible server and a fake OTLP/HTTP
// collector on 127.0.0.1 (only the package name and the hosts' URLs are swapped).
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { docExamples } from "../support/doc-examples.js";
import { localServer } from "../support/local-server.js";

const docs = docExamples("docs/agent.md");

const PROGRAM = "```clojure\n(println \"adding\")\n(return (+ data/a data/b))\n```";
let url = "";
const exports: Array<{ path: string | undefined; headers: IncomingMessage["headers"]; spans: Array<{ name: string; attributes: unknown[] }> }> = [];

localServer(
  (req, res, text) => {
    if (req.url?.endsWith("/v1/traces")) {
      const body = JSON.parse(text) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string; attributes: unknown[] }> }> }> };
      exports.push({ path: req.url, headers: req.headers, spans: body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({ id: "c1", object: "chat.completion", created: 0, model: "qwen3-coder", choices: [{ index: 0, message: { role: "assistant", content: PROGRAM }, finish_reason: "stop" }], usage: { prompt_tokens: 50, completion_tokens: 9 } }),
    );
  },
  {
    listening: (origin) => (url = origin),
    reset: () => (exports.length = 0),
  },
);

describe("docs/agent.md: Streaming", () => {
  it("streams the reply, the printed line and the answer", async () => {
    const { logged, written } = await docs.run("streaming", docs.example("## Streaming"));
    expect(written).toContain("Adding them.\n```clojure\n(println");
    expect(logged).toEqual([["| sum: 5"], [5]]);
  });
});

describe("docs/agent.md: OpenTelemetry set-ups", () => {
  const hosts = ["http://localhost:11434", "http://localhost:4318", "http://localhost:6006", "https://cloud.langfuse.com"];
  const cases = [
    ["Jaeger", "Jaeger (", "/v1/traces"],
    ["Phoenix", "Phoenix (", "/v1/traces"],
    ["Langfuse", "Langfuse (", "/api/public/otel/v1/traces"],
  ] as const;
  for (const [name, heading, path] of cases) {
    it(`${name}: the run's spans reach the collector over OTLP/HTTP`, async () => {
      process.env.LANGFUSE_PUBLIC_KEY = "pk-lf-test";
      process.env.LANGFUSE_SECRET_KEY = "sk-lf-test";
      exports.length = 0;
      let code = docs.example(heading);
      for (const h of hosts) code = code.replaceAll(h, url);
      await docs.run(name, code);
      expect(exports.length).toBeGreaterThan(0);
      expect(exports[0].path).toBe(path);
      const names = exports.flatMap((e) => e.spans.map((s) => s.name)).sort();
      expect(names).toEqual(["chat qwen3-coder", "invoke_agent", "ptc.evaluate", "ptc.turn"]);
      if (name === "Langfuse") expect(exports[0].headers.authorization).toBe(`Basic ${Buffer.from("pk-lf-test:sk-lf-test").toString("base64")}`);
    });
  }
});
