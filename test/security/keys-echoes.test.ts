// The adversary for hidden context where it is not a value: the keys of a hidden map (users
// keyed by email, cards by number), the output check's message naming the keys and quoting the
// input of a returned value, a tool that answers keyed by its hidden argument or sends it back
// rewritten (separators dropped, another type, URL-encoded, reversed), and the host's own
// surfaces (the failure reason, the saved run, worker-side tool events). Found by a red-team
// pass; each case failed before its fix.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resumeRun, saveRun } from "../../src/agent/resume.js";
import { runToJson } from "../../src/agent/saved-run.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool, type Tool } from "../../src/agent/tools.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { traceToJson } from "../../src/trace/serialize.js";
import { fragments, leaks } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
const EMAIL = "alice.smith@example.com";
const CARD = "4111 1111 1111 1111";
const CONTEXT = { _creds: { token: TOKEN, email: EMAIL, card: CARD }, _users: { [EMAIL]: { pin: 4321, plan: "pro" }, "bob.jones@example.com": { pin: 9876, plan: "team" } }, region: "eu" };
// Fragments that ordinary text around them holds anyway ("ampl" of example.com in a tool's own data) are not counted.
const FRAGS = new Set([...fragments([TOKEN, EMAIL, CARD.replace(/ /g, ""), "alice.smith", "bob.jones"])].filter((f) => !"example.com".includes(f) && !f.includes(".com")));

interface Seen {
  prompts: string;
  host: string;
}

/** Runs programs as an agent in one history view and collects what models saw and what the host keeps (trace, saved run, failure, events). */
async function run(programs: string[], options: { tools?: Record<string, Tool>; output?: z.ZodType; compressHistory: boolean; isolation?: "none" | "worker" }): Promise<Seen> {
  const llm = scriptedLlm(programs.map(code));
  const agent = SubAgent.create({ prompt: "Look the customer up.", maxTurns: programs.length, ...(options.tools === undefined ? {} : { tools: options.tools }), ...(options.output === undefined ? {} : { output: options.output }) });
  const events: unknown[] = [];
  const step = await SubAgent.run(agent, { llm, context: CONTEXT, compressHistory: options.compressHistory, isolation: options.isolation ?? "none", onEvent: (e) => void events.push(e) });
  const prompts = llm.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
  const events_ = JSON.stringify(events.filter((e) => (e as { type: string }).type !== "program"));
  // Numbers in the host's records are timings and counts: digits of them are no leak of the card.
  const host = [traceToJson(step.trace), JSON.stringify(step.fail ?? null), runToJson(step).replace(/"context":\{.*?\}\}\}/s, ""), events_].join("\n").replace(/":-?\d+(?:\.\d+)?/g, '":0');
  return { prompts, host };
}

// Timings are the one number a run writes that no program chose: 0.037465000000111104 ms holds
// the card's "1111" by chance (it failed one run in a few hundred that way). They are left out.
const TIMINGS = /"(?:\w*Ms|ms)":-?[\d.e+-]+/g;

function expectClean(text: string, where: string): void {
  text = text.replace(TIMINGS, "");
  const found = leaks(text, FRAGS);
  expect(found, `${where}: ${found.map((f) => text.slice(Math.max(0, text.indexOf(f) - 80), text.indexOf(f) + 40)).join(" | ")}`).toEqual([]);
}

const VIEWS = [false, true];

/** `program`, then a turn that prints and one that returns, run in the full and the compressed view. */
async function inBothViews(program: string, tools?: Record<string, Tool>): Promise<Seen[]> {
  const out: Seen[] = [];
  for (const compressHistory of VIEWS) out.push(await run([program, "(println 1)", "(return :done)"], { compressHistory, ...(tools === undefined ? {} : { tools }) }));
  return out;
}

describe("the output check's message shows no hidden key or input", () => {
  const T = "(:token data/_creds)";
  const E = "(:email data/_creds)";
  // Issues are listed under one message; a schema that throws is reported under the other.
  const ISSUES = "the (return ...) value does not match the expected output:";
  const THREW = "the output check failed on the (return ...) value:";
  const CASES: Array<[string, z.ZodType, string, string]> = [
    ["a hidden string as an unknown key", z.strictObject({ n: z.number() }), `(return {:n 1 ${T} 2})`, ISSUES],
    ["a keyword made from a hidden string", z.strictObject({ n: z.number() }), `(return {:n 1 (keyword ${E}) 2})`, ISSUES],
    ["a hidden key on an issue's path", z.object({ n: z.record(z.string(), z.number()) }), `(return {:n {${E} "x"}})`, ISSUES],
    ["a cut of a hidden string on the path", z.object({ m: z.record(z.string(), z.object({ v: z.number() })) }), `(return {:m {(subs ${T} 0 13) {:v "bad"}}})`, ISSUES],
    ["a host's message that quotes the input", z.object({ email: z.string().refine((v) => v.endsWith("@corp.example"), { error: (iss) => `not a corp address: ${String(iss.input)}` }) }), `(return {:email ${E}})`, ISSUES],
    ["keys grouped from hidden values", z.record(z.string(), z.array(z.number())), `(return (group-by :email [{:email ${E} :n 1}]))`, ISSUES],
    // A tool's message sending its argument back rewritten was hidden, the output check's not.
    ["a host's message that quotes the input with other separators", z.object({ card: z.string().refine(() => false, { error: (iss) => `card ${String(iss.input).replace(/ /g, "-")} declined` }) }), "(return {:card (:card data/_creds)})", ISSUES],
    ["a transform that throws quoting the input URL-encoded", z.object({ email: z.string().transform((v) => { throw new Error(`no mailbox ${encodeURIComponent(v)}`); }) }), `(return {:email ${E}})`, THREW],
    // A piece of the input, with no ellipsis to say it was cut: the prefix a host checks, its last characters.
    ["a host's message that quotes a piece of the input", z.object({ token: z.string().refine(() => false, { error: (iss) => `unknown prefix ${String(iss.input).slice(0, 7)}, ends ${String(iss.input).slice(-6)}` }) }), `(return {:token ${T}})`, ISSUES],
    // A check that reads the host's own copy of a secret the program never read, quoting it, as a
    // tool's message may: only the value's marks were searched, and the value held none.
    ["a host's message that quotes hidden context the value does not hold", z.object({ n: z.number().refine(() => false, { error: `expected the count for ${TOKEN}` }) }), "(return {:n 1})", ISSUES],
    ["a transform that throws quoting hidden context the value does not hold", z.object({ n: z.number() }).transform(() => { throw new Error(`vault for ${EMAIL.toUpperCase()} is sealed`); }), "(return {:n 1})", THREW],
  ];
  it.each(CASES)("%s", async (_name, output, program, message) => {
    for (const compressHistory of VIEWS) {
      const seen = await run([program, "(return {:n 1})"], { output, compressHistory });
      expect(seen.prompts).toContain(message);
      expect(seen.prompts).not.toContain(message === ISSUES ? THREW : ISSUES);
      expectClean(seen.prompts, "prompts");
      expectClean(seen.host, "trace and saved run");
    }
  });
});

// Pieces of 1-3 characters are too short to be found by value in any text: a key on an issue's
// path (`:ᚦ: expected number`) and a host's message quoting the input bare (`bad ᚦ`) are looked
// for where they are. Runes, so that any character of them found is a leak.
describe.each([1, 2, 3])("the output check's message shows no piece of %i characters", (n) => {
  it("as a key on an issue's path, or quoted by a host's message", async () => {
    const RUNES = "ᚠᚢᚦᚨᚱᚲᚷᚹ";
    const output = z.object({ m: z.record(z.string(), z.number()), s: z.string().refine((v) => v === "x", { error: (iss) => `bad ${String(iss.input)}` }) });
    const programs = [`(def p (subs data/_runes 2 ${2 + n}))\n(return {:m {(keyword p) "x"} :s p})`, "(return {:m {} :s \"x\"})"];
    for (const compressHistory of VIEWS) {
      const llm = scriptedLlm(programs.map(code));
      const agent = SubAgent.create({ prompt: "Check it.", maxTurns: 2, output });
      const step = await SubAgent.run(agent, { llm, context: { _runes: RUNES }, compressHistory });
      expect(step.ok).toBe(true);
      const fed = llm.requests[1].messages.map((m) => m.content).join("\n");
      expect(fed).toContain("- [:m :<hidden string derived from data/_runes>]: expected number, received string\n- :s: bad <hidden string derived from data/_runes>");
      for (const text of [fed, traceToJson(step.trace)]) expect(text).not.toMatch(/[\u16A0-\u16FF]/);
    }
 
    // A key at the top: the path is followed by the issue's colon (`:ᚦ: expected number`).
    for (const compressHistory of VIEWS) {
      const llm = scriptedLlm([`(return {(keyword (subs data/_runes 2 ${2 + n})) "x"})`, "(return {})"].map(code));
      const agent = SubAgent.create({ prompt: "Check it.", maxTurns: 2, output: z.record(z.string(), z.number()) });
      const step = await SubAgent.run(agent, { llm, context: { _runes: RUNES }, compressHistory });
      expect(step.ok).toBe(true);
      const fed = llm.requests[1].messages.map((m) => m.content).join("\n");
      expect(fed).toContain("- :<hidden string derived from data/_runes>: expected number, received string");
      for (const text of [fed, traceToJson(step.trace)]) expect(text).not.toMatch(/[\u16A0-\u16FF]/);
    }
  });
});

describe.each(["none", "worker"] as const)("a tool's error quoting its short hidden arguments bare (isolation %s)", (isolation) => {
  it("shows them as stand-ins in the prompt, the trace and the events", async () => {
    const charge = tool({
      description: "Charges a card.",
      input: z.object({ cvv: z.string(), code: z.string() }),
      run: ({ cvv, code }) => {
        throw new Error(`declined: cvv ${cvv} (code ${code}) wrong`);
      },
    });
    const programs = ["(println (try (tool/charge {:cvv (:cvv data/_card) :code (:code data/_card)}) (catch e (ex-message e))))", "(return :done)"];
    const events: unknown[] = [];
    const agent = SubAgent.create({ prompt: "Charge the card.", tools: { charge }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _card: { cvv: "737", code: "Q7" } }, isolation, onEvent: (e) => void events.push(e) });
    expect(step.ok).toBe(true);
    expect(step.trace.turns[0].prints).toEqual(["tool/charge failed: declined: cvv <hidden string from data/_card :cvv> (code <hidden string from data/_card :code>) wrong"]);
    for (const text of [step.messages.flat().map((m) => m.content).join("\n"), traceToJson(step.trace), JSON.stringify(events)]) {
      // Numbers in the host's records are timings and token counts: a 737 among their digits is no leak.
      expect(text.replace(/":-?[\d.e+-]+/g, '":0')).not.toMatch(/737|Q7/);
    }
  });
});

// A tool's message was cut at 500 characters before the interpreter hid what it quotes: a quote of
// hidden context (whole, the kind a message is searched for) that the cut left 4 to 7 characters
// of ("… session for K7Z2Q9-…") was no quote any more, and showed. Cut after hiding, as the output
// check's message is. The host's tool quotes the token it holds, given it or not.
describe.each(["none", "worker"] as const)("a long tool message whose cut falls in a quote of hidden context (isolation %s)", (isolation) => {
  const rev = (t: string): string => [...t].reverse().join("");
  it.each([
    ["quoting it", (t: string) => t],
    ["quoting it lower-cased", (t: string) => t.toLowerCase()],
    ["quoting it reversed", rev],
  ])("%s shows a stand-in, wherever the cut falls", async (_what, form) => {
    for (let pad = 472; pad <= 484; pad += 2) {
      const session = tool({ description: "Opens a session.", input: z.object({ user: z.string() }), run: () => Promise.reject(new Error(`${"x".repeat(pad)} session for ${form(TOKEN)} expired`)) });
      const programs = ["(println (try (tool/session {:user (:token data/_creds)}) (catch e (ex-message e))))", '(println (try (tool/session {:user "ann"}) (catch e (ex-message e))))', "(return :done)"];
      const agent = SubAgent.create({ prompt: "Open a session.", tools: { session }, maxTurns: 3 });
      const llm = scriptedLlm(programs.map(code));
      const events: unknown[] = [];
      const step = await SubAgent.run(agent, { llm, context: CONTEXT, isolation, onEvent: (e) => void events.push(e.type === "run-finish" ? null : e) });
      expect(step.ok).toBe(true);
      expect(step.trace.turns[0].prints[0]).toContain("<hidden string");
      expectClean(llm.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n"), `prompts, pad ${pad}`);
      expectClean(traceToJson(step.trace) + JSON.stringify(events), `trace and events, pad ${pad}`);
    }
  });
});

describe("keys of a hidden map stay hidden", () => {
  const PROGRAMS = [
    "(println data/_users)",
    "(println (map :pin (vals data/_users)))",
    "(println (into {} data/_users))",
    "(println (first data/_users))",
    "(println (keys data/_users))",
    "(println (dissoc data/_users :nobody))",
    "(def u (first (vals data/_users)))\n(println (:plan u) (+ (:plan u) 1))",
    "(doseq [[k v] data/_users] (println k (:plan v)))",
  ];
  it.each(PROGRAMS)("%s", async (program) => {
    for (const seen of await inBothViews(program)) {
      expect(seen.prompts).toContain("<hidden");
      expectClean(seen.prompts, "prompts");
      expectClean(seen.host.replace(/"source":"[^"]*"/g, ""), "trace and saved run");
    }
  });

  it("a hidden map's field names still show, and a map with hidden keys keeps every entry", async () => {
    const r = await evaluate("(println data/_creds)\n(println (count data/_users) data/_users)\n(def t (:token data/_creds))\n(println {(subs t 0 6) 1 (subs t 7 13) 2 (subs t 14) 3})", { ctx: CONTEXT, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const [creds, users, cuts] = r.prints.map(showStandIns);
    expect(creds).toMatch(/^\{:token <hidden string from data\/_creds :token> :email <hidden string from data\/_creds :email> :card <hidden string from data\/_creds :card>\}$/);
    expect(users.match(/<hidden keyword from data\/_users(?: \(2\))?> \{:pin <hidden integer from data\/_users … :pin> :plan <hidden string from data\/_users … :plan>\}/g)).toHaveLength(2);
    expect(cuts.match(/<hidden string derived from data\/_creds[^>]*> [123]/g)).toHaveLength(3);
  });

  // Stand-ins of one origin are the same text: a set of them would collapse to one element.
  it("a set of hidden values keeps every element, printed and in the summary's size", async () => {
    const r = await evaluate("(def s (set (map (comp clojure.string/upper-case name) (keys data/_users))))\n(println (count s) s)\n(println (set (keys data/_users)))", { ctx: CONTEXT, isolation: "none" });
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const [derived, keys] = r.prints.map(showStandIns);
    expect(derived).toMatch(/^2 #\{<hidden string derived from data\/_users(?: \(2\))?> <hidden string derived from data\/_users(?: \(2\))?>\}$/);
    expect(keys.match(/<hidden keyword from data\/_users(?: \(2\))?>/g)).toHaveLength(2);
    const programs = ["(def s (set (map (comp clojure.string/upper-case name) (keys data/_users))))", "(return :done)"];
    const agent = SubAgent.create({ prompt: "Find it.", maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: CONTEXT, compressHistory: true });
    expect(step.trace.turns[0].definitions[0]).toMatchObject({ type: "set", size: 2 });
  });

  it("a hidden map holding what cannot cross names no hidden key in its error", async () => {
    const r = await evaluate("(count data/_users)", { ctx: { _users: { [EMAIL]: { cb: () => 1 } } }, isolation: "none" });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).toContain("cannot cross into the program");
      expectClean(r.error.message, "error");
    }
  });
});

describe("a tool that sends a hidden argument back rewritten does not show it", () => {
  const TOOLS = {
    batch: tool({ description: "Plans by email.", input: z.object({ emails: z.array(z.string()) }), run: ({ emails }) => Object.fromEntries(emails.map((e) => [e, { plan: "pro", seats: 3 }])) }),
    check: tool({ description: "Checks a token.", input: z.object({ token: z.string() }), run: ({ token }) => ({ [token]: "valid", compact: token.replace(/-/g, ""), reversed: [...token].reverse().join("") }) }),
    card: tool({ description: "Normalizes a card.", input: z.object({ card: z.string() }), run: ({ card }) => ({ digits: card.replace(/ /g, ""), n: Number(card.replace(/ /g, "")) }) }),
    link: tool({ description: "A link for an email.", input: z.object({ email: z.string() }), run: ({ email }) => ({ url: `https://crm.example/u?e=${encodeURIComponent(email)}` }) }),
    reject: tool({ description: "Rejects a token.", input: z.object({ token: z.string() }), run: ({ token }) => { throw new Error(`bad token: ${[...token].reverse().join("")}`); } }),
    decline: tool({ description: "Charges a card.", input: z.object({ card: z.string() }), run: ({ card }) => { throw new Error(`card ${card.replace(/ /g, "-")} declined`); } }),
    bounce: tool({ description: "Mails an email.", input: z.object({ email: z.string() }), run: ({ email }) => { throw new Error(`no mailbox ${encodeURIComponent(email)} (550)`); } }),
  };
  const PROGRAMS = [
    "(def r (tool/batch {:emails [(:email data/_creds)]}))\n(println r (keys r))",
    "(def r (tool/check {:token (:token data/_creds)}))\n(println r)",
    "(def r (tool/card {:card (:card data/_creds)}))\n(println r)",
    "(def r (tool/link {:email (:email data/_creds)}))\n(println r)",
    "(tool/reject {:token (:token data/_creds)})",
    "(tool/decline {:card (:card data/_creds)})",
    "(tool/bounce {:email (:email data/_creds)})",
  ];
  it.each(PROGRAMS)("%s", async (program) => {
    for (const seen of await inBothViews(program, TOOLS)) expectClean(seen.prompts, "prompts");
  });

  it("a tool's message keeps its own words around an argument it sends back rewritten", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const seen = await run(["(tool/decline {:card (:card data/_creds)})", "(return :done)"], { tools: TOOLS, compressHistory: false, isolation });
      expect(seen.prompts).toContain("tool/decline failed: card <hidden string from data/_creds :card> declined");
      expectClean(seen.host, `host (${isolation})`);
    }
  });

  it("a hidden number a tool's error sends back rewritten is named as in a worker run", async () => {
    const lock = { run: (a: Record<string, unknown>) => { throw new Error(`account ${String(a.acct).replace(/(\d\d)(\d\d\d)(\d\d\d)/, "$1-$2-$3")} locked`); } };
    const errors: Array<Array<string | undefined> | undefined> = [];
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("(try (tool/lock {:acct data/_acct}) (catch e :caught))", { ctx: { _acct: 98765432 }, isolation, tools: { lock } });
      errors.push(r.toolCalls?.map((c) => c.error));
    }
    expect(errors[0]).toEqual(errors[1]);
    expect(errors[0]?.[0]).toMatch(/^account .*hidden integer from data\/_acct.* locked$/);
  });

  // A host's message built from a piece of the argument it was given (a prefix with no ellipsis,
  // a middle, the last characters, one segment, in another case) is about that argument: before,
  // only the whole value or a cut ending in an ellipsis was found, so these quoted 4-11 characters.
  const PIECES: Record<string, (t: string) => string> = {
    prefix: (t) => `bad token ${t.slice(0, 12)}`,
    middle: (t) => `bad token part ${t.slice(4, 14)}`,
    suffix: (t) => `token ending ${t.slice(-6)} expired`,
    segment: (t) => `segment ${t.split("-")[1]} invalid`,
    lower: (t) => `prefix ${t.slice(0, 7).toLowerCase()} unknown`,
    json: (t) => JSON.stringify({ error: "invalid", got: t.slice(2, 15) }),
  };
  it.each(Object.keys(PIECES))("a tool's message quoting a piece of a hidden argument (%s) shows a stand-in for it", async (name) => {
    const piece = { [name]: tool({ description: "Checks a token.", input: z.object({ token: z.string() }), run: ({ token }) => { throw new Error(PIECES[name](token)); } }) };
    for (const isolation of ["none", "worker"] as const) {
      for (const compressHistory of VIEWS) {
        const seen = await run([`(tool/${name} {:token (:token data/_creds)})`, "(return :done)"], { tools: piece, compressHistory, isolation });
        expect(seen.prompts).toMatch(new RegExp(`tool/${name} failed: .*<hidden string from data/_creds :token>`));
        expectClean(seen.prompts, `prompts (${isolation})`);
        expectClean(seen.host.replace(/"source":"[^"]*"/g, ""), `host (${isolation})`);
      }
    }
  });

  // A result that is the start or the end of a hidden argument with no ellipsis (a key's prefix,
  // as APIs list keys; a column that truncates it; its last characters; its letters and digits;
  // reversed): before, only the whole value or a cut ending in … or ... was found in a result, so
  // these showed 9-17 of its characters.
  const RESULT_PIECES: Record<string, (t: string) => unknown> = {
    prefix: (t) => ({ prefix: t.slice(0, 12) }),
    truncated: (t) => ({ token: t.slice(0, 17) }),
    suffix: (t) => ({ tail: t.slice(-9).toLowerCase() }),
    compact: (t) => ({ id: t.replace(/-/g, "").slice(0, 10) }),
    reversed: (t) => ({ check: [...t].reverse().join("").slice(0, 11) }),
    key: (t) => ({ [t.slice(0, 9)]: "valid" }),
  };
  it.each(Object.keys(RESULT_PIECES))("a tool's result that is a piece of a hidden argument (%s) shows a stand-in for it", async (name) => {
    const piece = { [name]: tool({ description: "Checks a token.", input: z.object({ token: z.string() }), run: ({ token }) => RESULT_PIECES[name](token) }) };
    for (const isolation of ["none", "worker"] as const) {
      const seen = await run([`(println (tool/${name} {:token (:token data/_creds)}))`, "(return :done)"], { tools: piece, compressHistory: false, isolation });
      expect(seen.prompts).toMatch(/Output:\n\{.*<hidden (string|keyword) derived from data\/_creds>.*\}/);
      expectClean(seen.prompts, `prompts (${isolation})`);
      expectClean(seen.host.replace(/"source":"[^"]*"/g, ""), `host (${isolation})`);
    }
  });

  // A word that merely begins or ends a hidden argument is no piece of it: a start or an end counts
  // when it holds a digit or two thirds of the value. Any of 8+ letters did, and these showed as stand-ins.
  it.each([
    ["production-eu-west-1", { env: "production" }],
    ["alice.smith@example.com", { domain: "example.com" }],
    ["customer-12345678", { kind: "customer" }],
    ["quarterly-report-confidential.pdf", { type: "confidential.pdf" }],
    // Scripts written without spaces may end a word at any character: these hid once a cut had to be at a separator.
    ["東京都渋谷区神南一丁目二番三号", { ward: "東京都渋谷区神南" }],
    ["北京市海淀区中关村大街二十七号", { district: "北京市海淀区中关村" }],
    ["กรุงเทพมหานครเขตบางรัก", { city: "กรุงเทพมหานคร" }],
  ])("a tool's result that merely begins or ends like a hidden argument (%s) shows as it is", async (secret, answer) => {
    const t = { run: () => answer };
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("(println (tool/t {:x (:x data/_s)}))", { ctx: { _s: { x: secret } }, isolation, tools: { t } });
      expect(r.ok).toBe(true);
      expect(r.prints).toEqual([`{${Object.entries(answer).map(([k, v]) => `:${k} "${v}"`).join(" ")}}`]);
    }
  });

  // A start or end with no digit that is cut inside a run of the value's letters is still a piece
  // of it: a random token's first characters may hold no digit (~1 in 4 of 8 base62 ones).
  it.each([
    ["ghp_RkWmZtQaLpXbNcVd3kF9hT2sYq8wEuJ1oPzA", "ghp_RkWmZtQa"],
    ["hQvLbKmTrZsWpXnYcJdFgHaE", "hQvLbKmTrZsW"],
    ["ak_7Qm2VbNx9KpLrTzWyHsDfGhJk", "KpLrTzWyHsDfGhJk"],
    ["correcthorsebatterystaple", "correcthorsebat"],
  ])("a tool's result that is a start or end of a hidden argument cut inside a word (%s) shows a stand-in", async (secret, piece) => {
    const t = { run: () => ({ hint: piece }) };
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("(println (tool/t {:x (:x data/_s)}))", { ctx: { _s: { x: secret } }, isolation, tools: { t } });
      expect(r.ok).toBe(true);
      expect(r.prints.map(showStandIns)).toEqual(["{:hint <hidden string derived from data/_s>}"]);
    }
  });

  it("a tool's message keeps its words that share no piece with a hidden argument", async () => {
    const own = { own: tool({ description: "Checks a token.", input: z.object({ token: z.string() }), run: ({ token }) => { throw new Error(`token rejected: ends ${token.slice(-4)}`); } }) };
    const seen = await run(["(tool/own {:token (:token data/_creds)})", "(return :done)"], { tools: own, compressHistory: false });
    expect(seen.prompts).toContain("tool/own failed: token rejected: ends <hidden string from data/_creds :token>");
  });

  it("the output check's own words stay beside a word-like hidden value that shares a few letters with them", async () => {
    const llm = scriptedLlm([code('(return {:env data/_env :tier "gold"})')]);
    const agent = SubAgent.create({ prompt: "Report the tier.", maxTurns: 1, output: z.object({ env: z.string(), tier: z.enum(["free", "pro"]) }) });
    const step = await SubAgent.run(agent, { llm, context: { _env: "production" } });
    expect(step.ok).toBe(false);
    expect(JSON.stringify(step.trace)).toContain("Invalid option: expected one of");
  });

  it("the output check's own bound stays beside a hidden number that holds its digits", async () => {
    const llm = scriptedLlm([code("(return {:budget data/_budget :n 5000})")]);
    const agent = SubAgent.create({ prompt: "Pick n.", maxTurns: 1, output: z.object({ budget: z.number(), n: z.number().max(1000) }) });
    const step = await SubAgent.run(agent, { llm, context: { _budget: 10000 } });
    expect(step.ok).toBe(false);
    expect(JSON.stringify(step.trace)).toContain("Too big: expected number to be <=1000");
  });

  it("a host's refusal quoting a piece of a hidden argument shows a stand-in for it", async () => {
    const send = tool({ description: "Sends.", input: z.object({ token: z.string() }), needsApproval: true, run: () => ({ ok: 1 }) });
    for (const isolation of ["none", "worker"] as const) {
      const agent = SubAgent.create({ prompt: "Send it.", tools: { send }, maxTurns: 3 });
      const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(tool/send {:token (:token data/_creds)})")]), context: CONTEXT, isolation });
      const id = step.paused?.approvals[0]?.id ?? "";
      const llm = scriptedLlm([code("(println 1)"), code("(return :done)")]);
      const done = await SubAgent.resume(agent, saveRun(step, agent), { llm, isolation, context: CONTEXT, approvals: { [id]: { approved: false, reason: `token ${TOKEN.slice(0, 12)} is revoked` } } });
      const prompts = llm.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
      expect(prompts).toContain("rejected by the host: token <hidden string from data/_creds :token> is revoked");
      expectClean(prompts, `prompts (${isolation})`);
      expectClean(traceToJson(done.trace), `trace (${isolation})`);
    }
  });

  // A key or a value of another type is an echo whatever its length: a batch answer keyed by the
  // CVVs, codes or pins it was given showed them (`{:737 "ok"}`), since only keys of 4+ characters
  // were looked for, and so did the pieces of a token it was given (`{:K7Z "ok" :2Q9 "ok" ...}`),
  // and a pin sent back as a string.
  const SHORT = {
    batch: { run: (a: Record<string, unknown>) => Object.fromEntries((a.ids as unknown[]).map((id) => [String(id), "ok"])) },
    retype: { run: (a: Record<string, unknown>) => (a.ids as unknown[]).map((id) => (typeof id === "number" ? String(id) : Number(id))) },
    rows: { run: () => [{ id: 1, plan: "pro" }] },
  };
  const SHORT_CONTEXT = { _card: { cvv: "737", pin: 4242, code: "QX", tier: 73 }, _tok: TOKEN, _filters: { sort: "id" } };
  it.each([
    ["(tool/batch {:ids [(:cvv data/_card)]})", '{<hidden keyword derived from data/_card> "ok"}'],
    ["(tool/batch {:ids [(:code data/_card) (:pin data/_card)]})", '{<hidden keyword derived from data/_card> "ok" <hidden keyword derived from data/_card (2)> "ok"}'],
    ["(tool/batch {:ids [(:tier data/_card)]})", '{<hidden keyword derived from data/_card> "ok"}'],
    ["(tool/batch {:ids (mapv (fn [i] (subs data/_tok i (+ i 3))) (range 0 18 3))})", `{${[1, 2, 3, 4, 5, 6].map((n) => `<hidden keyword derived from data/_tok${n === 1 ? "" : ` (${n})`}> "ok"`).join(" ")}}`],
    ["(tool/retype {:ids [(:cvv data/_card) (:pin data/_card)]})", "[<hidden integer derived from data/_card> <hidden string derived from data/_card>]"],
    // The same text, not from hidden context, shows; and a field name equal to a small value of a
    // hidden collection given whole, which the program never looked at.
    ['[(tool/batch {:ids ["737" "QX"]}) (tool/retype {:ids ["737" 4242]})]', '[{:737 "ok" :QX "ok"} [737 "4242"]]'],
    ["(tool/rows {:filters data/_filters})", '[{:id 1 :plan "pro"}]'],
  ])("a tool that answers with short hidden values it was given as keys or as another type: %s", async (call, shown) => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate(`(println ${call})`, { ctx: SHORT_CONTEXT, isolation, tools: SHORT });
      expect(showStandIns(r.prints.join("\n"))).toBe(shown);
    }
  });

  it("a result that merely holds text like a hidden argument's still shows", async () => {
    const seen = await run(['(def r (tool/batch {:emails [(:email data/_creds)]}))\n(println r)\n(println (tool/batch {:emails ["carol@example.com"]}))', "(return :done)"], { tools: TOOLS, compressHistory: false });
    expect(seen.prompts).toContain('{<hidden keyword derived from data/_creds> {:plan "pro" :seats 3}}');
    expect(seen.prompts).toContain('{:carol@example.com {:plan "pro" :seats 3}}');
  });
});

describe("the host's surfaces show no hidden value", () => {
  it("a failure reason computed from hidden context is hidden in the result, the saved run and the trace", async () => {
    for (const compressHistory of VIEWS) {
      const seen = await run(['(fail (str "bad token " (:token data/_creds)))'], { compressHistory });
      expect(seen.host).toContain('"message":"<hidden string derived from data/_creds>"');
      expectClean(seen.host, "host");
    }
  });

  it("an answer computed from hidden context is the host's, and the saved run holds it as the trace shows it", async () => {
    const agent = SubAgent.create({ prompt: "Sign it.", maxTurns: 1 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return {:signed (str "v1:" (:token data/_creds))})')]), context: CONTEXT, isolation: "none" });
    expect(step.ok && step.value).toEqual({ signed: `v1:${TOKEN}` });
    const saved = runToJson(step).replace(/"context":\{.*?\}\}\}/s, "");
    expect(saved).toContain("<hidden string derived from data/_creds>");
    expectClean(saved, "saved run");
  });

  it("a tool's refusal naming a hidden key, or quoting a hidden argument reversed, is hidden in the events of a worker run", async () => {
    const strict = tool({ description: "Strict.", input: z.strictObject({ q: z.string() }), run: () => ({ ok: 1 }) });
    const reject = tool({
      description: "Rejects a token.",
      input: z.object({ token: z.string() }),
      run: ({ token }) => {
        throw new Error(`bad token: ${[...token].reverse().join("")}`);
      },
    });
    const seen = await run(['(tool/strict {:q "x" (:email data/_creds) 1})', "(tool/reject {:token (:token data/_creds)})", "(return :done)"], { tools: { strict, reject }, compressHistory: false, isolation: "worker" });
    expect(seen.host).toContain("bad token: <hidden string");
    expect(seen.host).toContain("invalid arguments");
    expectClean(seen.host.replace(/"source":"[^"]*"/g, ""), "events");
    expectClean(seen.prompts, "prompts");
  });
});

describe("a keyword made from a hidden string that reads as a field name stays hidden", () => {
  // A tenant or user name reads like a field name (`:acme-corp`): it cannot be told from the
  // data's own keys by its spelling, only by where it came from.
  const TENANT = "zyqxvw-kjplomb";
  const frags = fragments([TENANT]);
  const echoKey = tool({ description: "Counts by tenant.", input: z.object({ t: z.string() }), run: ({ t }) => ({ [t]: 3 }) });
  it.each([
    ["kept from an earlier turn", "(def m {(keyword data/_tenant) 3})\n(def s #{(keyword data/_tenant)})\n(def r (tool/echoKey {:t data/_tenant}))\n(def f (let [k (keyword data/_tenant)] (fn [] k)))", "(println m s (first s) (keys r) (f))"],
    ["made inside a builtin", '(println (keywordize-keys {data/_tenant 1}))\n(def k (keywordize-keys {data/_tenant 1 "plan" 2}))', "(println k)"],
  ])("%s", async (_name, first, later) => {
    for (const isolation of ["none", "worker"] as const) {
      for (const compressHistory of VIEWS) {
        const llm = scriptedLlm([first, later, "(return :done)"].map(code));
        const agent = SubAgent.create({ prompt: "Count the tenant's orders.", tools: { echoKey }, maxTurns: 3 });
        const step = await SubAgent.run(agent, { llm, context: { _tenant: TENANT }, compressHistory, isolation });
        expect(step.ok).toBe(true);
        const prompts = llm.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
        expect(prompts).toContain("<hidden keyword");
        expect(leaks(prompts, frags), `${isolation} ${compressHistory}`).toEqual([]);
        expect(leaks(traceToJson(step.trace), frags)).toEqual([]);
      }
    }
  });
  it("a kept regex made from a hidden string is hidden in a later turn's error message", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const seen = await run(['(def rs [(re-pattern (str (:token data/_creds) "-?"))])', "(+ 1 rs)", "(return :done)"], { compressHistory: false, isolation });
      expect(seen.prompts).toContain("got vector [#<hidden string derived from data/_creds>]");
      expectClean(seen.prompts, "prompts");
      expectClean(seen.host.replace(/"source":"[^"]*"/g, ""), "trace and saved run");
    }
  });

  it("a kept keyword made from a hidden string is hidden in a later turn's error message", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const programs = ['(def k (keyword (str (:token data/_creds) "x")))\n(def m {k 1})', "(+ 1 k)", "(try (+ 1 m) (catch e (println (ex-message e))))", "(k 1 2 3)", "(return :done)"];
      const seen = await run(programs, { compressHistory: false, isolation });
      expect(seen.prompts).toContain("got keyword :<hidden string derived from data/_creds>");
      expectClean(seen.prompts, "prompts");
      expectClean(seen.host.replace(/"source":"[^"]*"/g, ""), "trace and saved run");
    }
  });

  it("a saved run restores which of its keywords were made from hidden text", async () => {
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Count the tenant's orders.", maxTurns });
    const saved = await SubAgent.run(make(2), { llm: scriptedLlm(["(def m {(keyword data/_tenant) 3 :plan 4})", "(println 1)"].map(code)), context: { _tenant: TENANT }, isolation: "none" });
    const state = runStateFromJson(runStateToJson(saveRun(saved, make(2))));
    expect(state.memory.find((d) => d.name === "m")?.hidden?.keywords).toEqual([TENANT]);
    const live = scriptedLlm([code("(println m)"), code("(return :done)")]);
    expect((await resumeRun(make(4), state, { llm: live, context: { _tenant: TENANT } })).ok).toBe(true);
    const prompts = live.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
    // The data's own field name still shows.
    expect(prompts).toMatch(/\{<hidden keyword derived from data\/_tenant> <[^>]+> :plan <[^>]+>\}/);
    expect(leaks(prompts, frags)).toEqual([]);
  });
});
