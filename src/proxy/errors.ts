// Errors in the shape OpenAI clients parse ({ error: { message, type, code, param } }), so the
// official SDK raises a proper APIError with the status and message instead of a parse failure.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "./log.js";
import type { Metrics } from "./metrics.js";
import { discard } from "./upstream.js";
import { errorText } from "../llm/errors.js";

export type ErrorType = "invalid_request_error" | "authentication_error" | "permission_error" | "not_found_error" | "rate_limit_error" | "upstream_error" | "server_error";

export function errorBody(message: string, type: ErrorType, code: string | null = null, param: string | null = null): string {
  return JSON.stringify({ error: { message, type, code, param } });
}

/**
 * An error as the last event of a stream already under way. Anthropic's SDKs raise only an event
 * named `error` (they skip unnamed ones); OpenAI's raise a data event that carries `error`.
 */
export function streamErrorEvent(message: string, code: string, anthropic: boolean): string {
  return anthropic ? `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "api_error", message } })}\n\n` : `data: ${errorBody(message, "upstream_error", code)}\n\n`;
}

/** Sends an OpenAI-style error, unless the response has already started (then it is cut off). */
export function sendError(res: ServerResponse, status: number, message: string, type: ErrorType, code: string | null = null, headers: Record<string, string> = {}, param: string | null = null): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(message, type, code, param);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A reply that may quote a key the client never gave (hiddenKeys), in a `content-encoding` the
 * proxy cannot undo to mask it (zstd before Node 22.15): discarded, counted and refused, as
 * passing it on would show the key. `headers` go with the refusal (the attempts it took).
 */
export function refuseUndecodable(res: ServerResponse, response: IncomingMessage, coding: string, metrics: Metrics, headers: Record<string, string> = {}): void {
  discard(response);
  metrics.inc("ptc_proxy_upstream_errors_total", 'kind="undecodable"');
  sendError(res, 502, `the upstream's reply came in content-encoding ${JSON.stringify(coding)}, which the proxy cannot undo to mask the upstream key in it, though it asked for none (accept-encoding: identity): have the upstream honour that`, "upstream_error", "upstream_undecodable", headers);
}

/**
 * The store failed (the shared database is unreachable): logged, and answered 503 with
 * retry-after, so a balancer retries elsewhere rather than the request going on without its state.
 */
export function sendStoreUnavailable(res: ServerResponse, log: Logger, e: unknown, tenant?: string): void {
  log({ event: "store_error", tenant, error: errorText(e) });
  sendError(res, 503, "the proxy's state store does not answer", "server_error", "store_unavailable", { "retry-after": "1" });
}

// How providers word "the prompt does not fit" (OpenAI, vLLM, llama.cpp, Ollama, Anthropic-compatible servers).
const CONTEXT_PATTERN = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|exceeds? the (?:model's )?(?:context|max)/i;

/** Whether an upstream error body says the prompt exceeded the model's context. */
export function isContextLengthError(status: number, body: string): boolean {
  if (status !== 400 && status !== 413 && status !== 422) return false;
  return CONTEXT_PATTERN.test(body.length > 4096 ? body.slice(0, 4096) : body);
}

/** An upstream error body as the client will see it: kept when it is already JSON, wrapped otherwise. */
export function upstreamErrorBody(status: number, body: string): string {
  const trimmed = body.trimStart();
  if (trimmed.startsWith("{")) {
    try {
      const parsed = JSON.parse(trimmed) as { error?: unknown };
      if (typeof parsed === "object" && parsed !== null && parsed.error !== undefined) return body;
    } catch {
      // Not JSON after all: wrapped below.
    }
  }
  const text = body.trim().slice(0, 500) || "(empty body)";
  return errorBody(`upstream answered HTTP ${status}: ${text}`, "upstream_error", "upstream_error");
}
