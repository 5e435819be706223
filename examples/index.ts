// Every example scenario, in the order `ptc demo --list` shows them. The first is the default.
import { budgetAlert } from "./budget-alert.js";
import { codeSearch } from "./code-search.js";
import { expenseAnalytics } from "./expenses.js";
import { exploration } from "./exploration.js";
import { fanout } from "./fanout.js";
import { policySearch } from "./policy-search.js";
import { recovery } from "./recovery.js";
import { restock } from "./restock.js";
import { reviews } from "./reviews.js";
import type { Example } from "./types.js";

export type { Example } from "./types.js";

export const examples: readonly Example[] = [reviews, policySearch, expenseAnalytics, recovery, fanout, exploration, restock, codeSearch, budgetAlert];

/** The example called `name`, or undefined. */
export const findExample = (name: string): Example | undefined => examples.find((e) => e.name === name);
