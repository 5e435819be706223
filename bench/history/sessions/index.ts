// The benchmark's sessions: data exploration (one of them defining without printing), tool-heavy
// work and error recovery, 8 to 25 turns.
import type { Session } from "../session.js";
import { codeSearch } from "./code-search.js";
import { catalogCrawl } from "./crawl.js";
import { inventoryReconcile } from "./inventory.js";
import { logTriage } from "./logs.js";
import { ordersFanout } from "./orders.js";
import { policyQa } from "./policies.js";
import { recoverySession } from "./recovery.js";
import { restockExploration } from "./restock.js";
import { salesExploration } from "./sales.js";
import { sensorAnalysis } from "./sensors.js";
import { ticketTriage } from "./tickets.js";

export const sessions: readonly Session[] = [salesExploration, ticketTriage, sensorAnalysis, restockExploration, logTriage, codeSearch, ordersFanout, policyQa, catalogCrawl, recoverySession, inventoryReconcile];
