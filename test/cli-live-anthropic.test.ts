// `ptc demo --live` picks Anthropic when ANTHROPIC_API_KEY is set: a fake Messages API on
// 127.0.0.1 answers with the example's script and checks what the demo sends.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { findExample, type Example } from "../examples/index.js";
import { runDemoCommand } from "../src/cli/demo.js";
import { capture } from "./support/capture.js";
import { localServer } from "./support/local-server.js";

const reviews = findExample("reviews") as Example;

interface Body { model: string; system?: Array<{ cache_control?: unknown }>; messages: Array<{ role: string; content: Array<{ cache_control?: unknown }> }> }

describe("ptc demo --live with ANTHROPIC_API_KEY", () => {
  let origin = "";
  let next = 0;
  const bodies: Body[] = [];
  const auth: Array<string | undefined> = [];
  localServer(
    (req, res, text) => {
      bodies.push(JSON.parse(text) as Body);
      auth.push(req.headers.authorization);
      const reply = reviews.replies[next++] ?? '(fail "script over")';
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ id: `m${next}`, type: "message", role: "assistant", model: "claude-fake", content: [{ type: "text", text: reply }], stop_reason: "end_turn", usage: { input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 400 * (next - 1), cache_creation_input_tokens: 500 } }),
      );
    },
    {
      listening: (o) => (origin = o),
      reset: () => {
        next = 0;
        bodies.length = 0;
        auth.length = 0;
      },
    },
  );
  afterEach(() => vi.unstubAllEnvs());

  it("asks Anthropic's API with cache breakpoints and reports its cached tokens", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-local");
    vi.stubEnv("ANTHROPIC_BASE_URL", origin);
    vi.stubEnv("ANTHROPIC_MODEL", "");
    const { code, out } = await capture((io) => runDemoCommand(["reviews", "--live", "--model", "claude-fake"], io));
    expect(code).toBe(0);
    expect(out).toContain("LLM: anthropic:claude-fake (live)");
    expect(bodies).toHaveLength(3);
    expect(auth.every((a) => a === "Bearer sk-ant-local")).toBe(true);
    expect(bodies[2].messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(bodies[2].system?.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(bodies[2].messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    // 3 x (100 + 500 written) + (0 + 400 + 800) read = 3,000 in, 1,200 of them cached.
    expect(out).toContain("Tokens: 3,000 in (1,200 cached) / 150 out over 3 LLM requests\n");
    expect(out).toContain("Matches the expected answer.");
  });

  it("lays the compressed history out for Anthropic's breakpoint cache (the client's cacheModel reaches the run), recording or not", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-local");
    vi.stubEnv("ANTHROPIC_BASE_URL", origin);
    vi.stubEnv("ANTHROPIC_MODEL", "claude-fake");
    const dir = mkdtempSync(join(tmpdir(), "ptc-anthropic-"));
    try {
      for (const extra of [[], ["--record", join(dir, "rec.jsonl")]]) {
        next = 0;
        const trace = join(dir, "run.json");
        const { code } = await capture((io) => runDemoCommand(["reviews", "--live", "--compress", "--trace-out", trace, ...extra], io));
        expect(code).toBe(0);
        const saved = JSON.parse(readFileSync(trace, "utf8")) as { trace: { settings?: { view?: { cacheModel?: string } } } };
        expect(saved.trace.settings?.view?.cacheModel, extra.join(" ")).toBe("breakpoint");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says to set ANTHROPIC_MODEL when the key is there but no model", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-local");
    vi.stubEnv("ANTHROPIC_MODEL", "");
    const { code, err } = await capture((io) => runDemoCommand(["--live"], io));
    expect(code).toBe(2);
    expect(err).toMatch(/anthropicLlm: no model given/);
    expect(err).toMatch(/Set ANTHROPIC_MODEL/);
    expect(err).not.toContain("sk-ant-local");
  });
});
