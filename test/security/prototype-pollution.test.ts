// Keys such as "__proto__" are ordinary map keys everywhere: in literals, from host data,
// through assoc, and on the way back to the host. Object.prototype is never touched.
import { afterEach, describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { showStandInsIn } from "../../src/lisp/marks.js";
import { edn } from "../support/run.js";

afterEach(() => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
});

describe("security: prototype pollution", () => {
  it('a map literal keyed by "__proto__" works like any other key', async () => {
    expect(await edn('(get {"__proto__" 1 "b" 2} "__proto__")')).toBe("1");
    expect(await edn('(count {"__proto__" 1})')).toBe("1");
  });

  it("keyword keys named __proto__ and constructor work", async () => {
    expect(await edn("(:__proto__ {:__proto__ {:polluted true}})")).toBe("{:polluted true}");
    expect(await edn("(:constructor {:constructor 5})")).toBe("5");
    expect(await edn("(:constructor {})")).toBe("nil");
  });

  it("host data with an own __proto__ key (from JSON.parse) keeps it as data", async () => {
    const ctx = JSON.parse('{"payload": {"__proto__": {"polluted": true}, "ok": 1}}') as Record<string, unknown>;
    const r = await evaluate("(:polluted (:__proto__ data/payload))", { ctx });
    expect(r.ok && r.value).toBe(true);
  });

  it("values returned to the host keep __proto__ as an own data property", async () => {
    const r = await evaluate('{"__proto__" {"polluted" true} :constructor 1}');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const v = r.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.hasOwn(v, "__proto__")).toBe(true);
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(v)).toBe('{"__proto__":{"polluted":true},"constructor":1}');
  });

  it("tool arguments keyed by __proto__ reach the tool as an own property", async () => {
    let seen: Record<string, unknown> | undefined;
    const r = await evaluate('(tool/echo {"__proto__" {:polluted true}})', {
      tools: {
        echo: (args) => {
          seen = args;
          return "ok";
        },
      },
    });
    expect(r.ok).toBe(true);
    expect(seen && Object.hasOwn(seen, "__proto__")).toBe(true);
    expect((seen as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("a recorded call's arguments keyed by __proto__ keep the key when their stand-ins are shown", async () => {
    const r = await evaluate('(tool/echo {"__proto__" data/_k "b" data/_k})', { ctx: { _k: "secret" }, tools: { echo: () => "ok" } });
    const shown = showStandInsIn(r.toolCalls[0].args) as Record<string, unknown>;
    expect(Object.hasOwn(shown, "__proto__")).toBe(true);
    expect(JSON.stringify(shown)).toBe('{"__proto__":"<hidden string from data/_k>","b":"<hidden string from data/_k>"}');
  });

  it("definitions named like prototype members live in memory like any name", async () => {
    const r = await evaluate("(def __proto__ 1) (def constructor 2) (+ __proto__ constructor)");
    expect(r.ok && r.value).toBe(3);
    if (r.ok) expect([...r.memory.keys()].sort()).toEqual(["__proto__", "constructor"]);
  });
});
