// The same eleven sessions with replies of realistic length: each turn does the same work
// (same definitions, tool calls and outcome, the same failing turns) but the reply is
// written the way GPT-4-class models write in such loops — a paragraph of reasoning that
// recaps the last output and states the plan, then a commented, formatted program that
// prints with labels and now and then restates a helper defined earlier.
import type { Session } from "../../session.js";
import { codeSearchRealistic } from "./code-search.js";
import { catalogCrawlRealistic } from "./crawl.js";
import { inventoryReconcileRealistic } from "./inventory.js";
import { logTriageRealistic } from "./logs.js";
import { ordersFanoutRealistic } from "./orders.js";
import { policyQaRealistic } from "./policies.js";
import { recoverySessionRealistic } from "./recovery.js";
import { restockExplorationRealistic } from "./restock.js";
import { salesExplorationRealistic } from "./sales.js";
import { sensorAnalysisRealistic } from "./sensors.js";
import { ticketTriageRealistic } from "./tickets.js";

export const realisticSessions: readonly Session[] = [
  salesExplorationRealistic,
  ticketTriageRealistic,
  sensorAnalysisRealistic,
  restockExplorationRealistic,
  logTriageRealistic,
  codeSearchRealistic,
  ordersFanoutRealistic,
  policyQaRealistic,
  catalogCrawlRealistic,
  recoverySessionRealistic,
  inventoryReconcileRealistic,
];
