// The docs/agent.md examples for anthropicLlm and aiSdkLlm, run as written against fake servers
// on 127.0.0.1 (only the package name and the local server's URL are swapped).
import { afterEach, describe, expect, it, vi } from "vitest";
import { docExamples } from "../support/doc-examples.js";
import { localServer } from "../support/local-server.js";

const docs = docExamples("docs/agent.md");
/** The first ts block after the heading. */
const example = (heading: string): string => docs.example(`\n${heading}\n`);
const runExample = async (name: string, code: string): Promise<unknown[][]> => (await docs.run(name, code)).logged;

const PROGRAM = "```clojure\n(return (+ data/a data/b))\n```";
let url = "";
const requests: Array<{ path: string | undefined; body: Record<string, unknown> }> = [];

localServer(
  (req, res, text) => {
    requests.push({ path: req.url, body: JSON.parse(text) as Record<string, unknown> });
    const body =
      req.url === "/v1/messages"
        ? { id: "m1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: PROGRAM }], stop_reason: "end_turn", usage: { input_tokens: 40, output_tokens: 12, cache_read_input_tokens: 900, cache_creation_input_tokens: 0 } }
        : { id: "c1", object: "chat.completion", created: 0, model: "qwen3-coder", choices: [{ index: 0, message: { role: "assistant", content: PROGRAM }, finish_reason: "stop" }], usage: { prompt_tokens: 50, completion_tokens: 12 } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  },
  {
    listening: (origin) => (url = origin),
    reset: () => (requests.length = 0),
  },
);
afterEach(() => vi.unstubAllEnvs());

describe("docs/agent.md examples", () => {
  it("Anthropic: runs the agent over the Messages API and prints the value and the cached tokens", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-doc");
    vi.stubEnv("ANTHROPIC_BASE_URL", url);
    const logged = await runExample("anthropic", example("### Anthropic"));
    expect(logged).toEqual([[5, 900]]);
    expect(requests).toHaveLength(1);
    expect(requests[0].path).toBe("/v1/messages");
    expect(requests[0].body).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 4096 });
  });

  it("Any AI SDK model: runs the agent through an AI SDK provider and prints the value", async () => {
    const code = example("### Any AI SDK model").replace("http://localhost:11434/v1", `${url}/v1`);
    const logged = await runExample("ai-sdk", code);
    expect(logged).toEqual([[5]]);
    expect(requests).toHaveLength(1);
    expect(requests[0].path).toBe("/v1/chat/completions");
    expect(requests[0].body).toMatchObject({ model: "qwen3-coder" });
  });
});
