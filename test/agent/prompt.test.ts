import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { contextLines } from "../../src/agent/prompt/context.js";
import { isDocumented, isJavaInterop, languageReference, referenceName } from "../../src/agent/prompt/reference.js";
import { shapeOf } from "../../src/agent/prompt/shape.js";
import { outputSection, staticPrompt, systemPrompt, toolsSection } from "../../src/agent/prompt/system.js";
import { expandMission, placeholders, taskMessage } from "../../src/agent/prompt/task.js";
import { fill, template, type TemplateName } from "../../src/llm/templates.js";
import { tool } from "../../src/agent/tools.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { AgentDefinitionError } from "../../src/agent/errors.js";
import { STANDARD_CLOJURE, STANDARD_FORMS } from "../../src/lisp/core/standard.js";
import { DOCUMENTED_SPECIAL_FORMS } from "../../src/lisp/analyzer/specials/index.js";
import { allBuiltins } from "../../src/lisp/core/registry.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { ContextReader, toLisp } from "../../src/lisp/interop.js";
import { keyword, LMap, LSet } from "../../src/lisp/index.js";
import { recordKeys } from "../../src/trace/record.js";
import { resolveLimits } from "../../src/lisp/limits.js";
import { virtualClock } from "../support/run.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const search = tool({
  description: "Searches product reviews.",
  input: z.object({ category: z.string().describe("a product category"), limit: z.number().int().optional() }),
  output: z.array(z.object({ product: z.string(), rating: z.number() })),
  maxCalls: 3,
  run: () => [],
});

describe("language reference", () => {
  const reference = languageReference();
  const lines = new Set(reference.split("\n"));

  it("lists every documented builtin: standard ones by name, PTC-Lisp's own with parameters and doc", () => {
    const builtins = allBuiltins().filter(isDocumented);
    expect(builtins.length).toBeGreaterThan(100);
    const standardLines = [...lines].filter((l) => /^[A-Z][\w ]+: /.test(l));
    for (const d of builtins) {
      if (isJavaInterop(d)) {
        // Java interop is named on its own line: a model knows what Java's methods do.
        const java = [...lines].find((l) => l.startsWith("Java interop"));
        expect(java?.split(" "), `missing ${d.name}`).toContain(referenceName(d));
      } else if (STANDARD_CLOJURE.has(d.name)) {
        const listed = standardLines.some((l) => l.split(" ").some((w) => w.split("/").includes(d.name) || w === referenceName(d) || w.startsWith(referenceName(d) + "/")));
        expect(listed, `missing ${d.name}`).toBe(true);
      } else {
        // Neighbours with the same parameters and doc share a line: `floor ceil round trunc [x] - ...`.
        const line = [...lines].find((l) => {
          const at = l.indexOf(` ${d.params}`);
          return at > 0 && l.slice(0, at).split(" ").includes(referenceName(d));
        });
        expect(line, `missing ${d.name}`).toBeDefined();
        expect(line).toContain(d.doc.split("\n")[0]);
      }
    }
  });

  it("lists every documented special form: standard ones by name, the others with syntax and doc", () => {
    for (const [name, form] of Object.entries(DOCUMENTED_SPECIAL_FORMS)) {
      if (STANDARD_FORMS.has(name)) expect(reference).toContain(` ${name === "#fn" ? "#(" : name}`);
      else expect(reference).toContain(`${form.syntax} - `);
    }
  });

  it("shows namespace-only builtins qualified and leaves compiler internals out", () => {
    const qualifiedOnly = allBuiltins().find((d) => d.unqualified === false);
    if (qualifiedOnly !== undefined) expect(referenceName(qualifiedOnly)).toMatch(/\//);
    expect(reference).not.toMatch(/^%/m);
  });

  // The language section said clojure.string functions "work unqualified", but seven of them
  // (str/blank?, str/capitalize, str/reverse, ...) exist only qualified: `(blank? s)` fails.
  it("says namespaced functions work as the reference writes them, and each does", async () => {
    const text = staticPrompt(true, "compressed");
    const namespaced = allBuiltins().filter((d) => isDocumented(d) && ["clojure.string", "clojure.set", "clojure.walk"].includes(d.ns?.[0] ?? ""));
    expect(namespaced.some((d) => d.unqualified === false)).toBe(true);
    expect(text).not.toContain("functions work unqualified");
    for (const d of namespaced) {
      const r = await evaluate(`(fn? ${referenceName(d)})`);
      expect(r.ok ? r.value : r.error.message, referenceName(d)).toBe(true);
    }
  });

  it("is the same text every time (cached by registry size)", () => {
    expect(languageReference()).toBe(reference);
  });
});

describe("system prompt", () => {
  const agent = { tools: { "search-reviews": search }, output: z.object({ products: z.array(z.string()).describe("names of in-stock products") }), maxTurns: 5 };

  it("assembles role, language, mistakes and turn rules first, then tools and output", () => {
    const s = systemPrompt(agent);
    const order = ["# Role", "# PTC-Lisp", "## Special forms", "# Common mistakes", "# Working over several turns", "# Tools", "# Expected output"].map((h) => s.indexOf(h));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(s).not.toContain("{{");
    expect(s).not.toContain("<!--");
  });

  it("starts with the agent-independent static part, so providers can cache it across agents", () => {
    const other = systemPrompt({ tools: {}, maxTurns: 3 });
    const prefix = staticPrompt(true);
    expect(systemPrompt(agent).startsWith(prefix)).toBe(true);
    expect(other.startsWith(prefix)).toBe(true);
    expect(systemPrompt({ tools: {}, maxTurns: 1 }).startsWith(staticPrompt(false))).toBe(true);
    expect(staticPrompt(false)).toContain("# One turn");
  });

  it("is byte-identical for the same agent", () => {
    expect(systemPrompt(agent)).toBe(systemPrompt({ ...agent }));
  });

  it("describes each tool: signature with argument and result shapes, description, field docs, call cap", () => {
    expect(toolsSection({ "search-reviews": search })).toBe(
      [
        "tool/search-reviews {:category string, :limit int (optional)} -> [{:product string, :rating number}]",
        "  Searches product reviews.",
        "  :category - a product category",
        "  At most 3 calls per run.",
      ].join("\n"),
    );
    expect(toolsSection({})).toContain("No tools");
  });

  it("states the expected output with its shape, field docs and an example", () => {
    const text = outputSection(agent.output);
    expect(text).toContain("{:products [string]}");
    expect(text).toContain(":products - names of in-stock products");
    expect(text).toContain('For example: (return {:products ["..."]})');
    expect(outputSection(undefined)).toContain("any value is accepted");
  });
});

describe("shapeOf", () => {
  it.each([
    [z.string(), "string"],
    [z.number().int(), "int"],
    [z.boolean().nullable(), "boolean | nil"],
    [z.enum(["low", "high"]), '"low" | "high"'],
    [z.array(z.object({ id: z.number() })), "[{:id number}]"],
    [z.record(z.string(), z.number()), "{string number}"],
    [z.tuple([z.string(), z.number()]), "[string number]"],
    [z.union([z.string(), z.number()]), "string | number"],
    [z.literal("x"), '"x"'],
    [z.object({}), "{}"],
    [z.unknown(), "any"],
  ])("renders %# as %s", (schema, text) => {
    expect(shapeOf(schema).text).toBe(text);
  });

  it("names recursion instead of expanding it forever", () => {
    const node: z.ZodType = z.lazy(() => z.object({ value: z.number(), children: z.array(node) }));
    expect(shapeOf(node).text).toMatch(/^\{:value number, :children \[\w+\]\}$/);
  });

  it("collects described fields with their paths, and the schema's own description", () => {
    const s = shapeOf(z.object({ items: z.array(z.object({ sku: z.string().describe("stock unit") })) }).describe("the order"));
    expect(s.fields).toEqual(["[:items * :sku] - stock unit"]);
    expect(s.description).toBe("the order");
  });

  it("gives an example that satisfies the schema when read back as data", async () => {
    const schema = z.object({ name: z.string(), n: z.number().int(), tags: z.array(z.string()), kind: z.enum(["a", "b"]), note: z.string().optional() });
    const r = await evaluate(shapeOf(schema).example);
    expect(r.ok).toBe(true);
    if (r.ok) expect(schema.safeParse(r.value).success).toBe(true);
  });
});

/** The context as a run with this nesting limit reads it. */
const reader = (maxNestingDepth: number): ContextReader => new ContextReader(resolveLimits({ maxNestingDepth }));

describe("task message and context", () => {
  const sample = { sampleItems: 3, sampleChars: 80 };

  // A 1M-character key was written whole into the prompt (data/kkkk..., 1,000,005 characters of
  // line), though no program can name it (sources are capped at 200,000 characters); a long
  // unnamable key was quoted whole too. Both are now one short line.
  it("describes a key no program can be long enough to name in one short line", () => {
    const long = "k".repeat(1_000_000);
    const lines = contextLines({ [long]: 1, ["a b ".repeat(1000)]: 2, ok: 3 }, sample, reader(256));
    expect(lines).toEqual([
      `; context key "${"k".repeat(40)}…" (1000000 characters) cannot be read: data/ and the key are longer than a program may be (200000 characters)`,
      `; context key "${"a b ".repeat(10)}…" (4000 characters) cannot be read: it is not a valid name after data/`,
      "data/ok ; integer, sample: 3",
    ]);
    const fits = "k".repeat(200_000 - 5);
    expect(contextLines({ [fits]: 1 }, sample, reader(256))[0]).toBe(`data/${fits} ; integer, sample: 1`);
  });

  it("shows each visible context key with its type, size and a sample", () => {
    const lines = contextLines({ products: [{ name: "Laptop", price: 1200 }, { name: "Mouse", price: 25 }], limit: 5, query: "laptops" }, sample, reader(256));
    expect(lines).toEqual([
      'data/products ; vector[2], sample: [{:name "Laptop" :price 1200} {:name "Mouse" :price 25}]',
      "data/limit ; integer, sample: 5",
      'data/query ; string[7], sample: "laptops"',
    ]);
  });

  it("never shows keys starting with _ (their values neither)", () => {
    const text = taskMessage({ mission: "Do it.", context: { visible: 1, _secret: "hunter2-token", _key: [1] }, maxTurns: 3, sample, reader: reader(256) });
    expect(text).toContain("data/visible");
    expect(text).not.toContain("_secret");
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("_key");
  });

  it("bounds samples of large values", () => {
    const [line] = contextLines({ big: Array.from({ length: 1000 }, (_, i) => ({ id: i, text: "x".repeat(100) })) }, sample, reader(256));
    expect(line.length).toBeLessThan(200);
    expect(line).toContain("vector[1000]");
  });

  it("says (none) without data, and the turn count", () => {
    const text = taskMessage({ mission: "Say hi.", context: {}, maxTurns: 4, sample, reader: reader(256) });
    expect(text).toBe("# Input data\n\n(none)\n\n# Mission\n\nSay hi.\n\nTurn 1 of 4.");
    expect(taskMessage({ mission: "x", context: {}, maxTurns: 1, sample, reader: reader(256) })).toContain("only turn");
    expect(taskMessage({ mission: "x", context: {}, maxTurns: 2, toolsWithdrawn: true, sample, reader: reader(256) })).toContain("Turn 1 of 2. Next turn is your last and tools will be withdrawn then");
  });

  it("fills {{placeholders}} from the context: strings as text, other values as EDN", () => {
    expect(placeholders("Find {{category}} under {{ max }} ({{category}})")).toEqual(["category", "max"]);
    expect(expandMission("Find {{category}} under {{ max }} in {{tags}}", { category: "laptops", max: 500, tags: ["a"] })).toEqual({ ok: true, text: 'Find laptops under 500 in ["a"]' });
  });

  // Each read of these values takes a virtual millisecond: the prompt's data section and the
  // mission's placeholders can stop near the time limit only if they read the run's clock.
  function slowValue(clock: ReturnType<typeof virtualClock>, n: number): { value: Record<string, number>; reads: () => number } {
    let reads = 0;
    const value: Record<string, number> = {};
    for (let i = 0; i < n; i++) Object.defineProperty(value, `k${i}`, { enumerable: true, get: () => (clock.advance(1), ++reads) });
    return { value, reads: () => reads };
  }

  it("reads the context for the prompt within the run's limits and clock, and says which limit stopped it", () => {
    const clock = virtualClock(0);
    const slow = slowValue(clock, 3000);
    const timed = new ContextReader(resolveLimits({ timeoutMs: 100 }), clock.now);
    expect(() => taskMessage({ mission: "x", context: { slow: slow.value }, maxTurns: 2, sample, reader: timed })).toThrow("reading data/slow took longer than the time limit of 100 ms (timeoutMs)");
    expect(slow.reads()).toBeLessThanOrEqual(200);
    // The run's size limits, not the defaults: a value a program could not read is refused here.
    const small = new ContextReader(resolveLimits({ maxBoundaryValues: 100 }));
    expect(() => contextLines({ xs: Array.from({ length: 500 }, (_, i) => i) }, sample, small)).toThrow("(maxBoundaryValues)");
  });

  it("fills a placeholder within the same clock", () => {
    const clock = virtualClock(0);
    const slow = slowValue(clock, 3000);
    const r = expandMission("Look at {{slow}}", { slow: slow.value }, new ContextReader(resolveLimits({ timeoutMs: 100 }), clock.now));
    expect(!r.ok && r.message).toContain("took longer than the time limit of 100 ms (timeoutMs)");
    expect(slow.reads()).toBeLessThanOrEqual(200);
  });

  // Each use of a placeholder writes its value again: 600 uses of a 1M-character string built a
  // 600M-character mission, past what V8 can hold, and the run ended with internal_error
  // "Invalid string length". The filled mission is text crossing out, within maxBoundaryChars.
  it("refuses a mission whose filled placeholders are over maxBoundaryChars, counting each use", async () => {
    const reader = (): ContextReader => new ContextReader(resolveLimits({ maxBoundaryChars: 1000 }));
    expect(expandMission("Read {{x}}", { x: "a".repeat(600) }, reader())).toEqual({ ok: true, text: "Read " + "a".repeat(600) });
    const twice = expandMission("Read {{x}}, then {{x}} again", { x: "a".repeat(600) }, reader());
    expect(twice).toEqual({ ok: false, message: "the prompt with its {{placeholders}} filled is 1218 characters, over the limit of 1000 (maxBoundaryChars)" });
    // A run refuses it before any LLM call, under its own limits.
    const llm = scriptedLlm(["(return 1)"]);
    const agent = SubAgent.create({ prompt: "{{x}} {{x}}", maxTurns: 1, limits: { maxBoundaryChars: 1000 } });
    const step = await SubAgent.run(agent, { llm, context: { x: "x".repeat(600) } });
    expect(!step.ok && [step.fail.reason, step.fail.message]).toEqual(["invalid_input", "the prompt with its {{placeholders}} filled is 1201 characters, over the limit of 1000 (maxBoundaryChars)"]);
    expect(llm.requests).toHaveLength(0);
  });

  it("refuses a placeholder that is missing or names a hidden key", () => {
    const missing = expandMission("Find {{category}}", {});
    expect(!missing.ok && missing.message).toContain('no key "category"');
    const hidden = expandMission("Use {{_token}}", { _token: "secret" });
    expect(hidden.ok).toBe(false);
    expect(!hidden.ok && hidden.message).toContain("hidden from prompts");
    expect(!hidden.ok && hidden.message).not.toContain("secret\"");
    // A dotted path is suggested as PTC-Lisp reads it: data/_creds.crm names a key of its own.
    const dotted = expandMission("Use {{_creds.crm.token}}", { _creds: { crm: { token: "secret" } } });
    expect(!dotted.ok && dotted.message).toContain("read it in the program as (get-in data/_creds [:crm :token])");
    const spelled = expandMission("Use {{_creds.crm}}", { "_creds.crm": "secret" });
    expect(!spelled.ok && spelled.message).toContain("read it in the program as data/_creds.crm");
  });
});

describe("templates", () => {
  it("fills placeholders and throws for one without a value", () => {
    expect(fill("a {{x}} b", { x: "1" })).toBe("a 1 b");
    expect(fill("$& {{x}}", { x: "$1" })).toBe("$& $1");
    expect(() => fill("{{y}}", {})).toThrow("{{y}}");
    // One pass: a value holding a placeholder is not expanded again.
    expect(fill("{{a}} {{b}}", { a: "{{b}}", b: "x" })).toBe("{{b}} x");
  });

  it("loads every file of prompts/ through the one template loader, the compaction prompts included", () => {
    const names = readdirSync(new URL("../../prompts/", import.meta.url)).map((f) => f.replace(/\.md$/, "") as TemplateName);
    expect(names).toContain("compaction-goal");
    for (const name of names) {
      const text = template(name);
      expect(text.length, name).toBeGreaterThan(20);
      expect(text.startsWith("<!--"), name).toBe(false);
    }
  });
});

describe("common mistakes section", () => {
  const text = readFileSync(new URL("../../prompts/mistakes.md", import.meta.url), "utf8");
  // Each pair: what the section says fails, and what it says to write instead.
  const pairs: Array<[string, string]> = [
    ["(1 2 3)", "[1 2 3]"],
    ["'(a b)", "[:a :b]"],
    ['(search "x")', '(tool/search {:query "x"})'],
    ['(call "search" ...)', '(tool/search {:query "x"})'],
    ["(get data :products)", "data/products"],
    ["(def count 3)", "(def n-items 3)"],
    ["(range)", "(range 10)"],
    ["(println (count xs) (take 3 xs))", "(println (count xs) (take 3 xs))"],
  ];
  const tools = { search: { run: () => [], params: ["query"] } };

  it.each(pairs)("says %s fails and %s works, and the runtime agrees", async (wrong, right) => {
    expect(text).toContain("`" + wrong + "`");
    expect(text).toContain("`" + right + "`");
    const ctx = { products: [1, 2] };
    if (wrong !== right) {
      const bad = await evaluate(wrong.replace("...", "{}"), { tools, ctx });
      expect(bad.ok).toBe(false);
    }
    const good = await evaluate(`(def xs [1 2 3 4]) ${right}`, { tools, ctx });
    expect(good.ok).toBe(true);
  });

  it("says atoms and iterate are unavailable, and they are", async () => {
    expect(text).toContain("`atom`");
    expect(text).toContain("`iterate`");
    for (const src of ["(atom 1)", "(swap! a inc)", "(iterate inc 1)"]) expect((await evaluate(src)).ok).toBe(false);
  });
});

describe("shapes of tool results", () => {
  it("shows what the program receives (zod output), and what it must write (zod input)", () => {
    const schema = z.object({ n: z.string().transform((s) => s.length).pipe(z.number()) });
    expect(shapeOf(schema).text).toBe("{:n string}");
    expect(shapeOf(schema, "output").text).toBe("{:n number}");
  });
});

describe("the task's data section (issue 20)", () => {
  it("lists every record key, even those a cut sample hides", () => {
    const sales = [
      { id: 1, region: "north-north-east", rep: "a long representative name", product: "widget deluxe edition", revenue: 120 },
      { id: 2, region: "south", rep: "b", product: "gadget", revenue: 80, refunded: true },
    ];
    const [line] = contextLines({ sales }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toContain("keys: :id :region :rep :product :revenue :refunded");
    const [plain] = contextLines({ n: [1, 2, 3] }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(plain).not.toContain("keys:");
  });

  // A red-team pass found the keys missing wherever the records were not the top vector's maps,
  // a key first seen after 500 records, and keys past 40 left out unsaid.
  it("lists the keys of records however the data holds them, and says how many it leaves out", () => {
    const row = (i: number) => ({ id: i, region: `region-${i % 7} with a long name`, customer: `customer ${i}`, revenue: i * 10 });
    const lines = (context: Record<string, unknown>): string => contextLines(context, { sampleItems: 3, sampleChars: 80 }, reader(32)).join("\n");
    expect(lines({ report: { meta: { source: "crm export of the quarter" }, rows: [row(1), { ...row(2), refund: 5 }] } })).toContain("keys of :rows: :id :region :customer :revenue :refund");
    expect(lines({ byId: { a1: row(1), b2: { ...row(2), refund: 5 } } })).toContain("values' keys: :id :region :customer :revenue :refund");
    expect(lines({ pages: [[row(1), row(2)], [{ ...row(3), refund: 5 }]] })).toContain("keys: :id :region :customer :revenue :refund");
    expect(lines({ sales: [...Array.from({ length: 600 }, (_, i) => row(i)), { ...row(600), refund: 5 }] })).toContain("keys: :id :region :customer :revenue :refund");
    const wide = (n: number) => [Object.fromEntries(Array.from({ length: n }, (_, i) => [`field${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}`, i]))];
    const w45 = lines({ wide: wide(45) });
    expect(w45.match(/:field/g)?.length).toBeGreaterThanOrEqual(45);
    expect(w45).not.toContain("more)");
    expect(lines({ wide: wide(70) })).toContain("(+10 more)");
  });

  // An API response holds its rows a level further down ({:data {:orders [...]}}): the sample cut
  // the first order short, and no keys were listed, so `:status` and `:revenue` were nowhere.
  it("lists the keys of records nested under maps, by their path", () => {
    const row = (i: number) => ({ id: i, customer: `customer number ${i} with a long name`, address: `${i} Long Street`, status: "held", revenue: i * 10 });
    const [line] = contextLines({ resp: { meta: { page: 1 }, data: { orders: [row(1), { ...row(2), discount: 0.1 }] } } }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toContain("keys of [:data :orders]: :id :customer :address :status :revenue :discount");
  });

  // A record whose fields all hold maps (an API response, a profile) listed only its values' keys:
  // `{:user {...} :account ...}, values' keys: :name :email :plan :seats :card :last4`, and `:billing`,
  // past the cut, was in no line of the prompt (`(:billing resp)` was the model's guess).
  it("lists the own keys of a record whose fields are all maps, beside their keys", () => {
    const profile = { user: { name: "Alice Wonderland the third", email: "alice@example.com" }, account: { plan: "pro", seats: 12 }, billing: { card: "visa", last4: "4242" } };
    const [line] = contextLines({ profile }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toContain(", keys: :user :account :billing, values' keys: :name :email :plan :seats :card :last4");
  });

  // Records inside records were in no list: an order's line items (`:unit_price` past the cut of
  // `{:sku "SKU-0" :qty 1 :un...}`), a result's author, a GraphQL connection's nodes
  // (`keys of [:data :orders :edges]: :node`, and `:total` nowhere).
  it("lists the keys of records nested in records, by their path (* for every element)", () => {
    const lines = (context: Record<string, unknown>): string => contextLines(context, { sampleItems: 3, sampleChars: 80 }, reader(32)).join("\n");
    const orders = Array.from({ length: 5 }, (_, i) => ({ id: i, customer: `customer-with-a-long-name-${i}`, items: [{ sku: `SKU-${i}`, qty: i + 1, unit_price: 9.5 }] }));
    expect(lines({ orders })).toContain("keys of [* :items]: :sku :qty :unit_price");
    // A vector of 12,000 of them: the nested lists are looked for in the first 10,000.
    expect(lines({ orders: Array.from({ length: 12_000 }, (_, i) => orders[i % 5]) })).toContain("keys of [* :items]: :sku :qty :unit_price");
    const results = Array.from({ length: 5 }, (_, i) => ({ id: i, title: `A fairly long title number ${i}`, score: i / 3, author: { handle: `@u${i}`, karma: i * 10 } }));
    expect(lines({ resp: { meta: { page: 1, total: 300 }, results } })).toContain("keys of :results: :id :title :score :author, keys of [:results * :author]: :handle :karma");
    const edges = Array.from({ length: 4 }, (_, i) => ({ node: { id: i, total: i * 10, lineItems: [{ sku: "A", qty: 1 }] } }));
    expect(lines({ gql: { data: { orders: { edges } } } })).toContain("keys of [:data :orders :edges]: :node, keys of [:data :orders :edges * :node]: :id :total :lineItems, keys of [:data :orders :edges * :node :lineItems]: :sku :qty");
    // A record's field holding a record: its keys by the field's name.
    const account = { id: 7, owner: { name: "Alice Wonderland the third", email: "alice@example.com", phone: "+1 555 0100" }, plan: "pro" };
    expect(lines({ account })).toContain("keys of :owner: :name :email :phone");
  });

  // A nil among the records (a JSON null, a lookup that missed) made the vector no record list:
  // `[{:id 1 :name "..." :email "..." ...} nil {:i...}]`, and `:tier` and `:credit_limit` nowhere.
  it("lists the keys of records among nils", () => {
    const row = (i: number) => ({ id: i, name: `customer-with-a-long-name-${i}`, email: `c${i}@example.com`, tier: "gold", credit_limit: 1000 * i });
    const [line] = contextLines({ found: [row(1), null, row(2), row(3)] }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toContain("keys: :id :name :email :tier :credit_limit");
    const [nested] = contextLines({ orders: [{ id: 1, lines: [null, { sku: "A", qty: 1, unit_price: 2.5 }] }] }, { sampleItems: 3, sampleChars: 40 }, reader(32));
    expect(nested).toContain("keys of [* :lines]: :sku :qty :unit_price");
    const [none] = contextLines({ xs: [null, null] }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(none).not.toContain("keys");
  });

  // A set of records (`(set rows)`, deduplicated records) listed none: `#{{:id 0 :name "..." ...} {:id 1...}}`.
  it("lists the keys of a set of records, and of sets of records under a map's keys", () => {
    const row = (i: number) => ({ id: i, name: `customer-with-a-long-name-${i}`, email: `c${i}@example.com`, tier: "gold", credit_limit: 1000 * i });
    const set = LSet([toLisp(row(1)), toLisp(row(2))]);
    expect(recordKeys(set, "#{{:id 1 ...}}")).toBe(", keys: :id :name :email :tier :credit_limit");
    expect(recordKeys(LMap([[keyword("uniq"), set]]), "{:uniq #{...}}")).toBe(", keys of :uniq: :id :name :email :tier :credit_limit");
  });

  // JSON keys become keywords whatever they hold: a CSV export's "Order ID" printed as `:Order ID`,
  // which reads as the key :Order with the value ID (and `(:Order row)` is nil).
  it("writes a key the reader cannot read as a keyword as the call that makes it", () => {
    const rows = [{ "Order ID": "A1", "first name": "Al", "": 1, région: 2 }, { "Order ID": "A2", total: 5 }];
    const [line] = contextLines({ rows }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toContain('sample: [{(keyword "Order ID") "A1" (keyword "first name") "Al"');
    expect(line).toContain(':région');
    expect(line).not.toContain(":Order ID");
    expect(line).toContain('keys: (keyword "Order ID") (keyword "first name") (keyword "") :région :total');
  });

  // A dictionary of record lists (JSON objects come in with keyword keys) listed the keys of every
  // entry's vector apart: 300 entries made one data line of 6,669 characters, unbounded in the entries.
  it("merges the keys of many record lists into one bounded list", () => {
    const byRegion = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`r${i}`, [{ [`k${i}`]: 1, total: i }]]));
    const [line] = contextLines({ byRegion }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line.length).toBeLessThan(2000);
    expect(line).toMatch(/, keys in its vectors: :(k\d+|total) /);
    expect(line).toMatch(/\(\+\d+ more\)/);
    expect(line.match(/keys of/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
  // A record's own records past four paths (an order's customer, shipping and its address, billing,
  // items, payment) were merged as for a dictionary of record lists: `keys in its vectors: :name
  // :email :method :address :city :zip ... :status :provider`, which of :city and :status sits where
  // (the mission's "ship to Oslo and are paid") in no line, and read as keys of the orders themselves.
  it("names the paths of a record's own records while together they stay within the key bound", () => {
    const orders = Array.from({ length: 40 }, (_, i) => ({ id: i, customer: { name: `customer-with-a-long-name-${i}`, email: `c${i}@example.com` }, shipping: { method: "ground", address: { city: "Oslo", zip: "0150" } }, billing: { card_last4: "4242", country: "NO" }, items: [{ sku: `S${i}`, qty: 1 }], payment: { status: "paid", provider: "stripe" } }));
    const [line] = contextLines({ orders }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toContain(", keys of [* :shipping :address]: :city :zip");
    expect(line).toContain(", keys of [* :payment]: :status :provider");
    expect(line).not.toContain("keys in its vectors");
  });
  // Only the first 10,000 records were looked at: a log's :error first seen at row 12,000 was in no
  // line, and the keys listed read as all of them.
  it("names a record key first seen past row 10,000", () => {
    const rows = Array.from({ length: 12_000 }, (_, i) => (i === 11_000 ? { id: i, level: "error", msg: "m", error: "boom" } : { id: i, level: "info", msg: "m" }));
    const [line] = contextLines({ rows }, { sampleItems: 3, sampleChars: 80 }, reader(32));
    expect(line).toMatch(/, keys: :id :level :msg :error$/);
  });

  // 150 keys list 60 and count the rest, and past 8 a map's keys come in hash order: the key the
  // mission asked about was among the 90 counted, unnamed. Named by the mission, it is listed first.
  it.each([
    ["Sum field_120 over the rows.", ":field_120", true],
    ["Sum :field_120.", ":field_120", true],
    ["Sum field_1200 and my_field_120.", ":field_120", false],
  ])("lists the record keys the mission names first when not all fit (%s)", (mission, key, first) => {
    const wide = Array.from({ length: 3 }, () => Object.fromEntries(Array.from({ length: 150 }, (_, k) => [`field_${k}`, k])));
    const [line] = contextLines({ wide }, { sampleItems: 3, sampleChars: 80 }, reader(32), mission);
    expect(line).toContain("(+90 more)");
    expect(line.includes(`keys: ${key} `)).toBe(first);
  });
});

describe("schemas no program can satisfy", () => {
  // The program's data is numbers, strings, booleans, nil, vectors and string-keyed maps; these
  // zod types showed as "any" in the prompt and every run ended max_turns_exceeded.
  const create = (output: z.ZodType) => SubAgent.create({ prompt: "p", output });
  it.each([
    ["date", z.object({ when: z.date() }), /\[:when\] expects a Date/],
    ["bigint", z.bigint(), /the schema itself expects a BigInt/],
    ["map", z.object({ rows: z.array(z.object({ m: z.map(z.string(), z.number()) })) }), /\[:rows \* :m\] expects a Map/],
    ["set", z.record(z.string(), z.set(z.number())), /\[\*\] expects a Set/],
    ["symbol", z.tuple([z.string(), z.symbol()]), /\[1\] expects a Symbol/],
    ["function", z.object({ f: z.function() }), /\[:f\] expects a function/],
    ["optional date", z.object({ when: z.date().optional() }), /\[:when\] expects a Date/],
  ])("refuses %s at create with the schema path", (_, schema, message) => {
    expect(() => create(schema)).toThrow(AgentDefinitionError);
    expect(() => create(schema)).toThrow(message);
  });
  it.each([
    ["coerced date", z.object({ when: z.coerce.date() })],
    ["preprocessed date", z.object({ when: z.preprocess((x) => new Date(String(x)), z.date()) })],
    ["date or string", z.union([z.date(), z.string()])],
    ["transformed string", z.string().transform((s) => new Date(s))],
  ])("accepts %s, which a program can satisfy", (_, schema) => {
    expect(() => create(schema)).not.toThrow();
  });
  it("refuses a tool whose input could never be written", () => {
    expect(() => tool({ description: "d", input: z.object({ at: z.date() }), run: () => 1 })).toThrow(/input schema: \[:at\] expects a Date/);
  });
});
