// The streaming side of the LLM seam. A client that can stream tells `LlmRequest.onText` each
// piece of the reply as it arrives; the offline clients (scripted, replayed) cut their whole
// reply into word-sized pieces, so a streamed run behaves the same offline as live.
import { webPageError } from "./retry.js";

/** The reply's text in pieces of one word with the spaces before it (lines stay whole where they are short). */
function textPieces(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? (text === "" ? [] : [text]);
}

/** Tells `onText` the whole reply piece by piece: the offline clients' streaming path. */
export function streamWhole(text: string, onText: ((delta: string, attempt: number) => void) | undefined): void {
  if (onText === undefined) return;
  for (const piece of textPieces(text)) onText(piece, 1);
}

/**
 * Whether a server asked for a stream answered with the whole reply as JSON (a server or gateway
 * that does not stream): read as server-sent events it holds none, so it would read as a stream
 * cut before its first event, and every retry would pay for the reply again.
 */
export function answeredWhole(contentType: string | null | undefined): boolean {
  return /[/+]json\b/i.test(contentType ?? "");
}

/**
 * Whether a server asked for a stream answered with a web page: a base URL that points at a web
 * site, not the API (a web app's port, /v1 left off), answers 200 with its page, which read as
 * server-sent events holds none, a stream cut before its first event that every retry repeats.
 */
export function answeredPage(contentType: string | null | undefined): boolean {
  return /^\s*text\/html\b/i.test(contentType ?? "");
}

/**
 * An unstreamed request's reply, `parse`d, where the server's `response` is a chat reply; a web
 * page (`body` as the SDK read it: its text) is thrown as such, as for a streamed request,
 * rather than as a reply that is no completion quoting its markup.
 */
export function wholeReply<T>(body: unknown, response: Response, name: string, parse: (body: unknown) => T): T {
  if (answeredPage(response.headers.get("content-type"))) throw webPageError(name, typeof body === "string" ? body : undefined);
  return parse(body);
}

/**
 * A streamed request's reply when the response is no event stream (the HTTP clients' one check):
 * a whole JSON reply is parsed and told to `onText` in one piece, a web page is thrown as such;
 * undefined when the response is a stream to read.
 */
export async function unstreamedReply<T extends { content: string }>(response: Response, name: string, parse: (body: unknown) => T, onText: (delta: string) => void): Promise<T | undefined> {
  const type = response.headers.get("content-type");
  if (answeredPage(type)) throw webPageError(name, await response.text());
  if (!answeredWhole(type)) return undefined;
  const whole = parse(await response.json());
  onText(whole.content);
  return whole;
}

/** The longest tail of one piece of the body that a [DONE] line split across two pieces can start in. */
const DONE_CARRY = "\ndata: [DONE]".length;

/**
 * The streamed `response` passed on as it is, and whether a `data: [DONE]` line went by in it: the
 * SDK's stream swallows it, and only it tells a whole reply from a cut one where the server leaves
 * every finish_reason null. Only line starts count: JSON in an event escapes its line breaks.
 * The body ends at the piece that holds it: nothing may follow, and a server that holds the
 * connection open after it would keep the reply waiting for the attempt's timeout.
 */
export function watchForDone(response: Response): { response: Response; done: () => boolean } {
  let seen = false;
  let tail = "\n";
  const decoder = new TextDecoder();
  const watcher = new TransformStream<Uint8Array, Uint8Array>({
    transform(piece, out) {
      if (!seen) {
        const text = tail + decoder.decode(piece, { stream: true });
        seen = /[\r\n]data: ?\[DONE\]/.test(text);
        tail = text.slice(-DONE_CARRY);
      }
      out.enqueue(piece);
      if (seen) out.terminate();
    },
  });
  const body = response.body === null ? null : response.body.pipeThrough(watcher);
  return { response: new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }), done: () => seen };
}
