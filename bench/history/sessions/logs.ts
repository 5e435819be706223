// Tool-heavy incident triage: the model lists services, pulls logs hour by hour, counts
// errors with regular expressions, narrows down to one service and one hour, checks the
// deploy history, and returns the likely cause.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { pick, random, reply, type Session } from "../session.js";

const services = ["api-gateway", "checkout", "payments", "search", "inventory"];
const messages = {
  info: ["request served", "cache hit", "health check ok", "connection pool resized", "job finished"],
  warn: ["slow query (1200 ms)", "retrying upstream call", "queue depth above 500"],
  error: ["upstream timeout after 5000 ms", "connection refused: db-primary:5432", "NullPointerException in CartService.total", "payment provider returned 502"],
};

/** Log lines of one service for one hour; payments breaks at 14:00 after a deploy. */
function logLines(service: string, hour: number): string[] {
  const rand = random(service.length * 100 + hour);
  const broken = service === "payments" && hour >= 14;
  return Array.from({ length: 24 }, (_, i) => {
    const roll = rand();
    const level = broken ? (roll < 0.45 ? "ERROR" : roll < 0.6 ? "WARN" : "INFO") : roll < 0.04 ? "ERROR" : roll < 0.12 ? "WARN" : "INFO";
    const text = broken && level === "ERROR" ? (rand() < 0.8 ? "payment provider returned 502" : "upstream timeout after 5000 ms") : pick(rand, messages[level.toLowerCase() as keyof typeof messages]);
    return `2026-03-02T${String(hour).padStart(2, "0")}:${String(i * 2).padStart(2, "0")}:11Z ${level} ${service} ${text}`;
  });
}

const deploys: Record<string, Array<{ at: string; version: string; author: string; note: string }>> = {
  payments: [
    { at: "2026-03-01T09:12Z", version: "4.18.0", author: "kim", note: "refactor retry policy" },
    { at: "2026-03-02T13:55Z", version: "4.19.0", author: "lee", note: "switch to provider API v2" },
  ],
  checkout: [{ at: "2026-02-27T16:40Z", version: "2.7.3", author: "sam", note: "fix coupon rounding" }],
  "api-gateway": [{ at: "2026-02-20T10:00Z", version: "1.31.0", author: "ali", note: "raise rate limits" }],
};

const tools = {
  "list-services": tool({ description: "Names of the production services.", run: () => services }),
  "fetch-logs": tool({
    description: "Log lines of a service for one hour of 2026-03-02 (0-23), oldest first.",
    input: z.object({ service: z.string(), hour: z.number().int() }),
    run: ({ service, hour }) => {
      if (!services.includes(service)) throw new Error(`unknown service ${service}`);
      return logLines(service, hour);
    },
  }),
  deploys: tool({
    description: "Deploy history of a service, oldest first.",
    input: z.object({ service: z.string() }),
    run: ({ service }) => deploys[service] ?? [],
  }),
};

export const logTriage: Session = {
  name: "log-triage",
  kind: "tool-heavy",
  prompt: "Error rates went up on 2026-03-02 in the afternoon. Find the service and the hour where the errors started, the most frequent error message, and the deploy that most likely caused it.",
  tools,
  output: z.object({ service: z.string(), hour: z.number(), error: z.string(), version: z.string() }),
  context: {},
  replies: [
    reply("First I need to know which services exist.", `(def services (tool/list-services))\n(println services)`),
    reply(
      "I'll pull one afternoon hour of logs for one service to see the line format before fetching everything.",
      `(def sample-lines (tool/fetch-logs {:service "api-gateway" :hour 13}))
(println (count sample-lines) "lines")
(doseq [l (take 4 sample-lines)] (println l))`,
    ),
    reply(
      "Lines look like `timestamp LEVEL service message`. I'll write a parser and an error counter, then test them on the sample.",
      `(defn parse-line "timestamp, level, service and message of a log line" [line]
  (let [[_ ts level service msg] (re-matches #"(\\S+) (\\S+) (\\S+) (.*)" line)]
    {:ts ts :level level :service service :msg msg}))
(defn error-count "Number of ERROR lines" [lines] (count (filter #(= "ERROR" (:level (parse-line %))) lines)))
(println (parse-line (first sample-lines)))
(println "errors in sample:" (error-count sample-lines))`,
    ),
    reply(
      "Now the error counts for every service at 12:00, before the reported increase, as a baseline.",
      `(def baseline "ERROR lines per service at 12:00" (into {} (pmap (fn [s] [s (error-count (tool/fetch-logs {:service s :hour 12}))]) services)))
(println baseline)`,
    ),
    reply(
      "And the same at 15:00, in the middle of the afternoon.",
      `(def at-15 "ERROR lines per service at 15:00" (into {} (pmap (fn [s] [s (error-count (tool/fetch-logs {:service s :hour 15}))]) services)))
(println at-15)`,
    ),
    reply(
      "Payments jumped from almost nothing to about half its lines. I'll get its hourly error counts from 10:00 to 18:00 to find when it started.",
      `(def payments-by-hour "payments ERROR lines per hour, 10-18" (into (sorted-map) (pmap (fn [h] [h (error-count (tool/fetch-logs {:service "payments" :hour h}))]) (range 10 19))))
(doseq [[h n] payments-by-hour] (println h n))`,
    ),
    reply(
      "The errors start at 14:00. Let me look at the first lines of that hour in full.",
      `(def payments-14 (tool/fetch-logs {:service "payments" :hour 14}))
(doseq [l (take 8 payments-14)] (println l))`,
    ),
    reply(
      "I want the distribution of error messages in the bad hours, not just the first lines.",
      `(def bad-lines (mapcat #(tool/fetch-logs {:service "payments" :hour %}) [14 15 16]))
(def error-messages "Frequency of ERROR messages in payments, 14-16" (frequencies (map :msg (filter #(= "ERROR" (:level %)) (map parse-line bad-lines)))))
(doseq [[m n] (sort-by val > error-messages)] (println n m))`,
    ),
    reply(
      "Do other services show the same message? Checkout calls payments, so it might surface there as well.",
      `(def checkout-15 (map parse-line (tool/fetch-logs {:service "checkout" :hour 15})))
(println (frequencies (map :level checkout-15)))
(doseq [e (filter #(= "ERROR" (:level %)) checkout-15)] (println (:ts e) (:msg e)))`,
    ),
    reply(
      "Checkout looks normal. Let me confirm payments was healthy in the morning too, so 14:00 really is the start.",
      `(def payments-morning (into (sorted-map) (pmap (fn [h] [h (error-count (tool/fetch-logs {:service "payments" :hour h}))]) (range 6 10))))
(println payments-morning)`,
    ),
    reply(
      "The morning is clean. Now the deploy history of payments.",
      `(def payments-deploys (tool/deploys {:service "payments"}))
(doseq [d payments-deploys] (println d))`,
    ),
    reply(
      "Version 4.19.0 went out at 13:55, five minutes before the errors began. For completeness I'll check the other services' deploys.",
      `(def other-deploys (into {} (pmap (fn [s] [s (tool/deploys {:service s})]) (remove #{"payments"} services))))
(doseq [[s ds] other-deploys] (println s (mapv :at ds)))`,
    ),
    reply(
      "No other deploy on 2026-03-02. I'll fix the findings.",
      `(def start-hour (key (first (filter #(pos? (- (val %) 3)) payments-by-hour))))
(def top-error (key (apply max-key val error-messages)))
(def culprit (last (filter #(<= (compare (:at %) "2026-03-02T14") 0) payments-deploys)))
(println start-hour top-error (:version culprit))`,
    ),
    reply("Everything points to the payments deploy 4.19.0.", `(return {:service "payments" :hour start-hour :error top-error :version (:version culprit)})`),
  ],
};
