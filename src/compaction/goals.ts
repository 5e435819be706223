// Goal detectors (seed 004): does a user message start a new goal? An LLM detector (one short
// call per user message, MindTheGoal-style NEW/CONTINUE) and an offline heuristic (low word
// overlap with the current goal, or an explicit switch phrase).
import { errorText, LlmError } from "../llm/errors.js";
import { messageText } from "../llm/messages.js";
import type { ChatMessage } from "../llm/types.js";
import { cutMiddle, transcript } from "./messages.js";
import { fill, template } from "../llm/templates.js";
import { boundedCall } from "./summarizers/llm.js";
import { counted } from "./tokens.js";
import type { CompactionContext } from "./types.js";

export interface GoalDecision {
  readonly newGoal: boolean;
  /** Why the detector could not decide (its call failed): newGoal is then false. */
  readonly failed?: string;
  readonly llmCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface GoalDetector {
  readonly name: string;
  readonly usesLlm: boolean;
  /**
   * Whether the user message at `index` starts a new goal. `goalStart` is where the current
   * goal began; `messages` is the whole stored conversation.
   */
  isNewGoal(messages: readonly ChatMessage[], index: number, goalStart: number, context: CompactionContext): Promise<GoalDecision>;
}

const STOP = new Set(
  "a an and are as at be but by can could do for from have i i'd i'm in is it its me my need no not of on or please so that the then there this to too up us want was we what when where which will with would you your yes ok okay thanks thank hi hello also now just like get".split(" "),
);

function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []) if (w.length > 2 && !STOP.has(w)) out.add(w.replace(/'s$/, ""));
  return out;
}

const SWITCH = /\b(now i (?:need|want|would like)|i also need|i(?:'d| would) also like|also (?:need|want|looking)|another (?:thing|question)|new (?:question|task|topic)|next,? (?:i|can|could)|by the way|one more thing|switching to|different (?:question|topic))\b/i;
const ACK = /^\s*(?:yes|no|ok(?:ay)?|sure|thanks?(?: you)?|great|perfect|that'?s (?:all|it|great|fine))\b[\s.!,]*$/i;

export interface HeuristicOptions {
  /** Below this share of the message's content words seen in the current goal, the message starts a new goal. Default 0.15. */
  readonly overlap?: number;
  /** Messages with fewer content words start a goal only with a switch phrase ("now I need"). Default 3. */
  readonly minWords?: number;
}

/** The offline detector: a switch phrase, or a message of enough words sharing almost none with the current goal. */
export function heuristicGoalDetector(options: HeuristicOptions = {}): GoalDetector {
  const threshold = options.overlap ?? 0.15;
  const minWords = options.minWords ?? 3;
  return {
    name: "heuristic",
    usesLlm: false,
    isNewGoal(messages, index, goalStart) {
      const text = messageText(messages[index]);
      const none = { llmCalls: 0, inputTokens: 0, outputTokens: 0 };
      if (ACK.test(text)) return Promise.resolve({ newGoal: false, ...none });
      const mine = words(text);
      const switching = SWITCH.test(text);
      if (mine.size === 0 || (mine.size < minWords && !switching)) return Promise.resolve({ newGoal: false, ...none });
      const seen = new Set<string>();
      for (let i = goalStart; i < index; i++) if (messages[i].role === "user" || messages[i].role === "assistant") for (const w of words(messageText(messages[i]))) seen.add(w);
      let shared = 0;
      for (const w of mine) if (seen.has(w)) shared++;
      const ratio = shared / mine.size;
      return Promise.resolve({ newGoal: (ratio < threshold && mine.size >= minWords) || (switching && ratio < 0.5), ...none });
    },
  };
}

// Words that name what a request is about, by domain (travel, bookings, services, media,
// payments: the task-dialogue domains), matched whole and case-insensitively.
const DOMAINS: ReadonlyArray<readonly [string, RegExp]> = [
  ["hotel", /\b(?:hotels?|guest ?houses?|place to stay|somewhere to stay|lodging|accommodations?|rooms? for|b&b|motel)\b/i],
  ["restaurant", /\b(?:restaurants?|places? to (?:eat|dine)|somewhere to eat|something to eat|food|cuisine|dine|dinner|lunch|breakfast|brunch|eatery|table for)\b/i],
  ["taxi", /\b(?:taxi|taxis|cabs?|ride ?share|rideshare|shared ride|a ride|uber|lyft)\b/i],
  ["train", /\b(?:trains?|railway|rail)\b/i],
  ["bus", /\b(?:bus|buses|coach)\b/i],
  ["flight", /\b(?:flights?|fly|flying|airlines?|plane)\b/i],
  ["car", /\b(?:rental cars?|rent(?:ing)? a (?:car|vehicle)|car rental|hire a car|car to rent|car for rent|renting a vehicle|reserve a (?:car|vehicle))\b/i],
  ["messaging", /\b(?:share (?:the|their|its|this|my)? ?(?:location|address)|send (?:the|their|this) (?:location|address)|sharing (?:their|the) (?:location|address))\b/i],
  ["attraction", /\b(?:attractions?|museums?|colleges?|galler(?:y|ies)|parks?|theatres?|cinemas?|nightclubs?|architecture|churche?s?|swimming pool|boat|sightseeing|tourist|places? to (?:go|visit)|things? to do|entertainment)\b/i],
  ["hospital", /\b(?:hospital|clinic)\b/i],
  ["police", /\b(?:police)\b/i],
  ["event", /\b(?:events?|concerts?|shows?|games?|match|festival|gigs?)\b/i],
  ["movie", /\b(?:movies?|films?|cinema showtimes?)\b/i],
  ["music", /\b(?:songs?|music|albums?|tracks?|playlist|artist)\b/i],
  ["payment", /\b(?:payments?|transfer|send money|pay (?:back|someone|my)|venmo|bucks to|request money)\b/i],
  ["bank", /\b(?:bank|balance|checking account|savings account)\b/i],
  ["weather", /\b(?:weather|forecast|rain|temperature|climate)\b/i],
  ["home", /\b(?:apartments?|house to rent|homes?|property|properties)\b/i],
  ["service", /\b(?:dentists?|doctors?|salons?|hair ?(?:cut|dresser|stylist)|stylists?|therapists?|psychiatrists?|psychologists?|appointment|physician|barber)\b/i],
  ["alarm", /\b(?:alarms?|wake me)\b/i],
  ["calendar", /\b(?:calendar|schedule|reminder)\b/i],
];

function domainsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const [name, re] of DOMAINS) if (re.test(text)) out.add(name);
  return out;
}

/** Domains of a tool call's service name ("Restaurants_2_ReserveRestaurant" → restaurant). */
function callDomains(m: ChatMessage): Set<string> {
  const out = new Set<string>();
  for (const c of m.tool_calls ?? []) for (const d of domainsOf(c.function.name.replace(/_/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2"))) out.add(d);
  return out;
}

/**
 * The offline domain detector: a user message that names a domain (hotel, taxi, weather…) the
 * current goal's messages and tool calls have not named starts a new goal; a message naming no
 * domain, or only ones the goal already has, continues it. Thanks-and-closing turns that name
 * nothing never start a goal.
 */
export function domainGoalDetector(): GoalDetector {
  return {
    name: "domain",
    usesLlm: false,
    isNewGoal(messages, index, goalStart) {
      const none = { llmCalls: 0, inputTokens: 0, outputTokens: 0 };
      const mine = domainsOf(messageText(messages[index]));
      if (mine.size === 0) return Promise.resolve({ newGoal: false, ...none });
      const current = new Set<string>();
      for (let i = goalStart; i < index; i++) {
        const m = messages[i];
        if (m.role === "user") for (const d of domainsOf(messageText(m))) current.add(d);
        for (const d of callDomains(m)) current.add(d);
      }
      // "A taxi from the restaurant to the hotel" is about the taxi: any domain the goal has not seen yet opens a new one.
      let fresh = false;
      for (const d of mine) if (!current.has(d)) fresh = true;
      return Promise.resolve({ newGoal: current.size > 0 && fresh, ...none });
    },
  };
}

export interface LlmDetectorOptions {
  readonly model?: string;
  /** Messages before the new one shown to the detector. Default 10. */
  readonly recent?: number;
  /** Most milliseconds one call may take, like a summary call's (then the goal continues). Default 120,000. */
  readonly timeoutMs?: number;
}

/** Most milliseconds one detector call takes by default (summaryTimeoutMs' default). */
const DETECTOR_TIMEOUT_MS = 120_000;

/** Characters of the new user message the LLM detector is shown at most (its start and its end). */
const NEW_MESSAGE_CHARS = 2000;

/** The LLM detector: asks context.llm NEW or CONTINUE; on an error or an unclear answer the goal continues (compacting too late is the safe mistake). */
export function llmGoalDetector(options: LlmDetectorOptions = {}): GoalDetector {
  const recent = options.recent ?? 10;
  return {
    name: "llm",
    usesLlm: true,
    async isNewGoal(messages, index, _goalStart, context) {
      const llm = context.llm;
      if (llm === undefined) throw new Error("compaction: the llm goal detector needs context.llm");
      const prompt = fill(template("compaction-goal"), {
        recent: transcript(messages.slice(Math.max(0, index - recent), index).filter((m) => m.role !== "system"), 500) || "(none)",
        // Cut like the summarizer's transcript: a pasted log would otherwise go whole into every check.
        message: cutMiddle(messageText(messages[index]), NEW_MESSAGE_CHARS),
      });
      try {
        // Bounded as a summary call is: a client that never answers must not hold compact() for ever.
        const r = await boundedCall((signal) => llm.complete({ messages: [{ role: "user", content: prompt }], maxOutputTokens: 5, ...(options.model === undefined ? {} : { model: options.model }), signal }), options.timeoutMs ?? DETECTOR_TIMEOUT_MS, context.signal, "goal detector");
        return { newGoal: /^\W*new\b/i.test(r.content), llmCalls: 1, inputTokens: counted(r.usage?.inputTokens, prompt), outputTokens: counted(r.usage?.outputTokens, r.content) };
      } catch (e) {
        if (context.signal?.aborted === true) throw e;
        // Charged as a failed summary call is: a reply the provider billed but that held no text at
        // its reported usage, a call with no usage (refused, timed out) at nothing.
        const paid = e instanceof LlmError ? e.details.usage : undefined;
        const spent = paid === undefined ? { llmCalls: 0, inputTokens: 0, outputTokens: 0 } : { llmCalls: 1, inputTokens: counted(paid.inputTokens, prompt), outputTokens: counted(paid.outputTokens, "") };
        return { newGoal: false, failed: errorText(e), ...spent };
      }
    },
  };
}
