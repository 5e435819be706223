// A tool-heavy fan-out: list the services, then check every tier-1 service's health in one
// `pmap`, so the slow health calls run concurrently instead of one turn (or one JSON tool
// call) each.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { defineExample } from "./types.js";

interface Service {
  name: string;
  team: string;
  tier: 1 | 2 | 3;
}

interface Health {
  service: string;
  status: "ok" | "degraded" | "down";
  p95Ms: number;
  /** Share of failed requests over the last 15 minutes, 0..1. */
  errorRate: number;
}

const services: readonly Service[] = [
  { name: "checkout", team: "payments", tier: 1 },
  { name: "payments-gateway", team: "payments", tier: 1 },
  { name: "auth", team: "identity", tier: 1 },
  { name: "catalog", team: "shop", tier: 1 },
  { name: "search", team: "shop", tier: 1 },
  { name: "cart", team: "shop", tier: 1 },
  { name: "inventory", team: "supply", tier: 1 },
  { name: "recommendations", team: "ml", tier: 2 },
  { name: "reviews", team: "shop", tier: 2 },
  { name: "email", team: "growth", tier: 2 },
  { name: "analytics", team: "data", tier: 3 },
  { name: "reports", team: "data", tier: 3 },
];

const health: Readonly<Record<string, Omit<Health, "service">>> = {
  checkout: { status: "ok", p95Ms: 310, errorRate: 0.004 },
  "payments-gateway": { status: "degraded", p95Ms: 1240, errorRate: 0.031 },
  auth: { status: "ok", p95Ms: 95, errorRate: 0.001 },
  catalog: { status: "ok", p95Ms: 180, errorRate: 0.017 },
  search: { status: "ok", p95Ms: 1480, errorRate: 0.006 },
  cart: { status: "ok", p95Ms: 140, errorRate: 0.002 },
  inventory: { status: "down", p95Ms: 0, errorRate: 1 },
  recommendations: { status: "degraded", p95Ms: 2200, errorRate: 0.08 },
  reviews: { status: "ok", p95Ms: 220, errorRate: 0.003 },
  email: { status: "ok", p95Ms: 400, errorRate: 0 },
  analytics: { status: "down", p95Ms: 0, errorRate: 1 },
  reports: { status: "ok", p95Ms: 900, errorRate: 0.01 },
};

/** Simulated network latency of one health check. */
const CHECK_MS = 40;

const listServices = tool({
  description: "Every service in the platform with its owning team and tier (1 = customer facing).",
  output: z.array(z.object({ name: z.string(), team: z.string(), tier: z.number().int() })),
  run: () => services.map((s) => ({ ...s })),
});

const serviceHealth = tool({
  description: `Live health of one service: status (ok, degraded, down), p95 latency in ms, and error rate (0..1) over 15 minutes. Takes about ${CHECK_MS} ms per call.`,
  input: z.object({ service: z.string().describe("Service name") }),
  output: z.object({ service: z.string(), status: z.enum(["ok", "degraded", "down"]), p95Ms: z.number(), errorRate: z.number() }),
  run: async ({ service }, signal) => {
    await sleep(CHECK_MS, undefined, { signal });
    const h = health[service];
    if (!h) throw new Error(`unknown service ${service}`);
    return { service, ...h };
  },
});

/** The answer, computed directly from the data. */
function answer() {
  const tier1 = services.filter((s) => s.tier === 1).map((s) => ({ service: s.name, ...health[s.name] }));
  const unhealthy = tier1.filter((h) => h.status !== "ok" || h.errorRate > 0.01).sort((a, b) => b.errorRate - a.errorRate);
  const slowest = [...tier1].sort((a, b) => b.p95Ms - a.p95Ms)[0];
  return { unhealthy: unhealthy.map((h) => h.service), slowest: slowest.service };
}

export const fanout = defineExample({
  name: "fanout",
  title: "Parallel health checks with pmap",
  summary: "List the services, then fan out one health call per tier-1 service in a single pmap (the calls run concurrently) and summarise.",
  prompt:
    "Check the health of every tier-1 service. Return :unhealthy, the names of the tier-1 services that are not ok or whose error rate is above 1%, " +
    "worst error rate first, and :slowest, the tier-1 service with the highest p95 latency.",
  tools: { "list-services": listServices, "service-health": serviceHealth },
  output: z.object({ unhealthy: z.array(z.string()), slowest: z.string() }),
  maxTurns: 4,
  context: {},
  replies: [
    `I'll list the services first to find the tier-1 ones.

\`\`\`clojure
(def services (tool/list-services))
(def tier1 "Names of the tier-1 services" (->> services (filter #(= 1 (:tier %))) (mapv :name)))
(println "Services by tier:" (frequencies (map :tier services)))
(println "Tier 1:" tier1)
\`\`\``,
    `Seven tier-1 services. Each health check is a slow call, so I'll run them all in parallel with pmap and print a table.

\`\`\`clojure
(def health "Health of each tier-1 service" (pmap #(tool/service-health {:service %}) tier1))
(doseq [h (sort-by :errorRate > health)]
  (println (:service h) (:status h) "p95" (:p95Ms h) "ms, errors" (/ (round (* 1000 (:errorRate h))) 10.0) "%"))
\`\`\``,
    `inventory is down, payments-gateway is degraded, and catalog is ok but above 1% errors. The slowest by p95 is search.

\`\`\`clojure
(return {:unhealthy (->> health
                         (filter #(or (not= "ok" (:status %)) (> (:errorRate %) 0.01)))
                         (sort-by :errorRate >)
                         (mapv :service))
         :slowest (:service (apply max-key :p95Ms health))})
\`\`\``,
  ],
  expected: answer(),
});
