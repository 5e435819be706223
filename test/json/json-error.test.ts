// JSON.parse's complaint read as a line and column, never quoting the text: the one reader every
// JSON input uses (contexts, traces, saved runs, transcripts, config files).
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/json/depth.js";
import { jsonSyntaxError } from "../../src/json/json-error.js";

const complaint = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (e) {
    return jsonSyntaxError(text, e);
  }
  throw new Error("parsed");
};

describe("jsonSyntaxError", () => {
  it("places each form of JSON.parse's complaint by line and column", () => {
    expect(complaint('{\n  "a": 1\n  "b": 2\n}')).toBe("Expected ',' or '}' after property value at line 3, column 3");
    expect(complaint('{\n  "a": [\n')).toBe("Unexpected end of JSON input at line 3, column 1");
    expect(complaint("")).toBe("Unexpected end of JSON input at line 1, column 1");
    // An unexpected token: V8 quotes the text around it, cut at either end or both.
    const secret = "sk-live-Q7vX2mP9rT4w";
    expect(complaint(`{\n  "k": {\n    "apiKey": ${secret} }\n}\n`)).toBe("Unexpected token 's' at line 3, column 15");
    expect(complaint(`{"apiKey": ${secret}, "other": "a long enough value"}`)).toBe("Unexpected token 's' at line 1, column 12");
    expect(complaint(`{"padding": "a long enough value", "apiKey": ${secret.slice(0, 9)}}`)).toBe("Unexpected token 's' at line 1, column 46");
    // Text after a whole value (two JSONL records on one line, joined by a lone CR or nothing): placed too, not left as a character position.
    expect(complaint('{"id":"c"}\r{"id":"d"}')).toBe("Unexpected non-whitespace character after the JSON value at line 1, column 12");
    expect(complaint('{\n  "a": 1\n} x')).toBe("Unexpected non-whitespace character after the JSON value at line 3, column 3");
    // Quoted whole (a short text): no place to tell, and still nothing of the text.
    expect(complaint(`{"a":${secret.slice(0, 8)}}`)).toBe("Unexpected token 's'");
  });

  it("reads newer Node's message, which adds its own line and column to the position", () => {
    const text = '{\n  "a" 1\n}';
    expect(jsonSyntaxError(text, new SyntaxError("Expected ':' after property name in JSON at position 8 (line 2 column 7)"))).toBe("Expected ':' after property name at line 2, column 7");
  });

  it("says a text nested too deeply to parse is that, where it passes the limit, not a syntax error", () => {
    // A reviver makes JSON.parse recurse: some thousands of levels overflow the stack.
    const text = `{\n  "a": ${"[".repeat(20_000)}${"]".repeat(20_000)}\n}`;
    let message = "";
    try {
      JSON.parse(text, (_k, v: unknown) => v);
    } catch (e) {
      message = jsonSyntaxError(text, e);
    }
    // The object is the first level: the bracket opening level 513 is the 512th.
    expect(message).toBe(`nested more than ${MAX_JSON_DEPTH} levels deep at line 2, column ${7 + MAX_JSON_DEPTH}`);
  });
});
