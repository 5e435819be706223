// No host object is reachable from a program: JS globals, prototypes, constructors and
// Function are not names, not keys, not methods. Each attempt fails with our own error.
import { describe, expect, it } from "vitest";
import { types } from "node:util";
import { evaluate, print, type EvaluateOptions } from "../../src/lisp/evaluate.js";
import { LispError } from "../../src/lisp/errors.js";
import { edn, failure } from "../support/run.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const HOST_NAMES = ["constructor", "__proto__", "prototype", "toString", "valueOf", "hasOwnProperty", "globalThis", "process", "require", "eval", "Function", "Object", "window", "this", "js/process", "js/globalThis"];

describe("security: host objects", () => {
  for (const name of HOST_NAMES) {
    it(`the symbol ${name} does not resolve to anything of the host`, async () => {
      const e = await failure(name);
      expect(["unbound_var", "invalid_form"]).toContain(e.error.kind);
    });
  }

  it("namespaced lookups of prototype members are unknown", async () => {
    for (const src of ["Math/constructor", "(Math/constructor)", "Double/__proto__", "clojure.core/constructor", "(clojure.string/constructor \"x\")", "str/__proto__"]) {
      const e = await failure(src);
      expect(e.error.kind, src).toBe("unbound_var");
    }
  });

  it("interop syntax cannot reach constructors", async () => {
    for (const src of ['(.constructor "")', '(. "" constructor)', '(.-constructor "")', "(new Object)", '(js/eval "1")']) {
      const e = await failure(src);
      expect(["unbound_var", "invalid_form"], src).toContain(e.error.kind);
    }
  });

  it("data/ keys that are prototype members are not in the context", async () => {
    for (const k of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const e = await failure(`data/${k}`, { ctx: { a: 1 } });
      expect(e.error.kind).toBe("unbound_var");
    }
  });

  it("tool names that are prototype members are unknown tools", async () => {
    const e = await failure("(tool/constructor {})", { tools: { search: () => [] } });
    expect(e.error.kind).toBe("unknown_tool");
  });

  it("special-form lookups are not fooled by prototype names", async () => {
    expect(await edn("(def constructor 1) (def toString 2) (+ constructor toString)")).toBe("3");
  });

  it("a tool result's functions, class instances and binary data are refused, naming where they were", async () => {
    class Secret {
      hidden = "field";
      method(): string {
        return "nope";
      }
    }
    const cases: Array<[unknown, string]> = [
      [{ f: () => "host function" }, ".f is a function"],
      [{ obj: new Secret() }, ".obj is Secret instance (not plain data)"],
      [[1, { bytes: new Uint8Array(2) }], "[1].bytes is binary data (Uint8Array)"],
      [{ s: Symbol("x") }, ".s is a symbol"],
      [Object.defineProperty({}, "boom", { enumerable: true, get: () => { throw new Error("no"); } }), ".boom is a getter that throws"],
    ];
    for (const [value, where] of cases) {
      const r = await evaluate("(tool/leak {})", { tools: { leak: () => value } });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.kind).toBe("tool_error");
        expect(r.error.message).toContain(`the result of tool/leak${where}, which cannot cross into the program`);
      }
    }
    const ctx = await evaluate("data/x", { ctx: { x: { when: new Date(0), nested: [{ f: Math.max }] } } });
    expect(!ctx.ok && ctx.error.message).toContain("data/x.nested[0].f is a function");
  });

  it("print refuses a host object that is not plain data at the top as it does inside, in our words", async () => {
    class Order {
      id = 1;
    }
    const trap = new Proxy({}, { getPrototypeOf: () => { throw new Error("host trap text"); } });
    for (const [value, what] of [[Buffer.from("hi"), "binary data (Buffer)"], [new Order(), "Order instance"], [/x/, "RegExp instance"], [trap, "an object that cannot be read"]] as const) {
      let thrown: unknown;
      try {
        print(value);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(LispError);
      expect((thrown as LispError).message).toContain(`host data is ${what}`);
    }
    // Values of the language print as they are, plain data after conversion.
    const r = await evaluate("[:a #{1} {:b 2.0}]");
    expect(print(r.ok ? r.lisp : null)).toBe("[:a #{1} {:b 2.0}]");
    expect(print({ when: new Date(0), xs: new Set([1]) })).toBe('{:when "1970-01-01T00:00:00.000Z" :xs #{1}}');
    const reduced = await evaluate("(reduced 1)");
    expect(print(reduced.ok ? reduced.lisp : null)).toMatch(/1/);
  });

  // Listing a Proxy context's keys runs its traps: a throw there escaped evaluate (which never
  // throws) with the trap's own message, and ended an agent run with it.
  it("a context that is a Proxy whose keys cannot be listed is refused in our words, in every mode and by an agent", async () => {
    const traps: ProxyHandler<Record<string, unknown>>[] = [{ ownKeys: () => { throw new Error("trap says sk-secret"); } }, { getOwnPropertyDescriptor: () => { throw new Error("trap says sk-secret"); } }];
    for (const handler of traps) {
      for (const isolation of ["none", "worker"] as const) {
        const r = await evaluate("1", { ctx: new Proxy({ a: 1 }, handler), isolation });
        expect(!r.ok && [r.error.kind, r.error.message]).toEqual(["value_error", "ctx must be an object of key → data, got one whose keys cannot be listed (listing them threw)"]);
      }
      const step = await SubAgent.run(SubAgent.create({ prompt: "p", maxTurns: 1 }), { llm: scriptedLlm(["(return 1)"]), context: new Proxy({ a: 1 }, handler) });
      expect(!step.ok && [step.fail.reason, step.fail.message]).toEqual(["invalid_input", "context must be a plain object of key → data, got one whose keys cannot be listed (listing them threw)"]);
    }
    // A Proxy whose keys can be listed is read as before, each value through its get trap.
    const lazy = new Proxy({}, { ownKeys: () => ["a", "b"], getOwnPropertyDescriptor: () => ({ value: 0, enumerable: true, configurable: true }), get: (_t, k) => (k === "a" ? 1 : 2) });
    expect(await edn("(+ data/a data/b)", { ctx: lazy })).toBe("3");
  });

  it("errors never carry host stack traces", async () => {
    const r = await evaluate("(defn f [x] (+ x :k)) (f 1)");
    expect(r.ok).toBe(false);
    const text = JSON.stringify(r);
    expect(text).not.toMatch(/\bat [\w.<>]+ \(|node:internal|\.ts:\d+|\.js:\d+/);
  });

  it("a tool that throws a host Error surfaces only its message", async () => {
    const r = await evaluate("(tool/boom {})", {
      tools: {
        boom: () => {
          throw new TypeError("database unavailable");
        },
      },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.kind).toBe("tool_error");
      expect(r.error.message).toContain("database unavailable");
      expect(JSON.stringify(r)).not.toMatch(/TypeError|\.js:\d+/);
    }
  });
});

// evaluate never throws: its options are host code too, and a throw from one (a getter, a
// Proxy, a clock, a Map's iterator) rejected evaluate's promise with the host's Error.
describe("security: options that throw", () => {
  const boom = (): never => {
    throw new Error("host boom");
  };
  class ThrowingMemory extends Map<string, never> {
    override *[Symbol.iterator](): MapIterator<[string, never]> {
      yield boom();
    }
  }
  // An option that cannot be read is named, without the host's message.
  const unread = (name: string): [string, string] => ["value_error", `options.${name} could not be read (reading it threw)`];
  // Host text may hold a secret, so none of these quote it (as 60300e9 made limits, tools and
  // isolation): a clock is called, not read, so it stops the run as a clock reading NaN does; a
  // signal that cannot be read is not one.
  const cases: Array<[string, () => EvaluateOptions, [string, string]]> = [
    ["a getter for ctx", () => Object.defineProperty({}, "ctx", { enumerable: true, get: boom }), unread("ctx")],
    ["options that are a throwing Proxy", () => new Proxy({}, { get: boom }), unread("ctx")],
    ["a clock that throws", () => ({ clock: boom }), ["internal_error", "the host's clock threw: the time limit cannot be kept"]],
    ["memory whose iteration throws", () => ({ memory: new ThrowingMemory() }), unread("memory")],
    ["a signal that is a throwing Proxy", () => ({ signal: new Proxy(new AbortController().signal, { get: boom }) }), ["value_error", "signal must be an AbortSignal"]],
  ];
  for (const [what, options, expected] of cases) {
    it(`${what} gives a failed result, in process and in a worker`, async () => {
      for (const isolation of ["none", "worker"] as const) {
        const given = options();
        // A throwing Proxy cannot take the mode: it runs as it is.
        const r = await evaluate("1", types.isProxy(given) ? given : Object.defineProperty(given, "isolation", { value: isolation, enumerable: true }));
        expect(!r.ok && [r.error.kind, r.error.message]).toEqual(expected);
      }
    });
  }
});
