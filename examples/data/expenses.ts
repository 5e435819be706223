// Expense claims for the analytics example: Q1 2026, three currencies, three statuses.

export interface Expense {
  id: string;
  employee: string;
  department: string;
  category: string;
  amount: number;
  currency: "USD" | "EUR" | "GBP";
  date: string;
  status: "approved" | "pending" | "rejected";
}

export const expenses: readonly Expense[] = [
  { id: "EXP-1001", employee: "Farid Haddad", department: "Support", category: "meals", amount: 83.17, currency: "EUR", date: "2026-01-03", status: "approved" },
  { id: "EXP-1002", employee: "Farid Haddad", department: "Support", category: "training", amount: 258, currency: "USD", date: "2026-03-07", status: "approved" },
  { id: "EXP-1003", employee: "Grace Kim", department: "Marketing", category: "equipment", amount: 179.19, currency: "EUR", date: "2026-01-18", status: "approved" },
  { id: "EXP-1004", employee: "Ben Okafor", department: "Engineering", category: "meals", amount: 120.9, currency: "EUR", date: "2026-03-02", status: "approved" },
  { id: "EXP-1005", employee: "Ana Souza", department: "Sales", category: "meals", amount: 27.45, currency: "EUR", date: "2026-01-10", status: "approved" },
  { id: "EXP-1006", employee: "Ben Okafor", department: "Engineering", category: "training", amount: 508.48, currency: "USD", date: "2026-03-06", status: "approved" },
  { id: "EXP-1007", employee: "Farid Haddad", department: "Support", category: "travel", amount: 834.68, currency: "USD", date: "2026-01-19", status: "approved" },
  { id: "EXP-1008", employee: "Hugo Weber", department: "Engineering", category: "office", amount: 84.44, currency: "EUR", date: "2026-02-15", status: "pending" },
  { id: "EXP-1009", employee: "Farid Haddad", department: "Support", category: "software", amount: 171.6, currency: "USD", date: "2026-01-23", status: "approved" },
  { id: "EXP-1010", employee: "Eva Lindqvist", department: "Sales", category: "training", amount: 695.12, currency: "EUR", date: "2026-02-24", status: "approved" },
  { id: "EXP-1011", employee: "Ben Okafor", department: "Engineering", category: "travel", amount: 789.92, currency: "USD", date: "2026-01-25", status: "approved" },
  { id: "EXP-1012", employee: "Hugo Weber", department: "Engineering", category: "equipment", amount: 135.67, currency: "EUR", date: "2026-03-03", status: "approved" },
  { id: "EXP-1013", employee: "Farid Haddad", department: "Support", category: "office", amount: 59.02, currency: "EUR", date: "2026-02-19", status: "approved" },
  { id: "EXP-1014", employee: "Ben Okafor", department: "Engineering", category: "software", amount: 300.24, currency: "USD", date: "2026-03-03", status: "approved" },
  { id: "EXP-1015", employee: "Hugo Weber", department: "Engineering", category: "software", amount: 438.48, currency: "USD", date: "2026-03-12", status: "pending" },
  { id: "EXP-1016", employee: "Farid Haddad", department: "Support", category: "meals", amount: 117.75, currency: "USD", date: "2026-02-02", status: "approved" },
  { id: "EXP-1017", employee: "Chloe Martin", department: "Marketing", category: "office", amount: 44.67, currency: "EUR", date: "2026-02-28", status: "approved" },
  { id: "EXP-1018", employee: "Chloe Martin", department: "Marketing", category: "equipment", amount: 650.33, currency: "EUR", date: "2026-02-05", status: "rejected" },
  { id: "EXP-1019", employee: "Eva Lindqvist", department: "Sales", category: "office", amount: 68.14, currency: "EUR", date: "2026-02-22", status: "approved" },
  { id: "EXP-1020", employee: "Chloe Martin", department: "Marketing", category: "travel", amount: 370.27, currency: "USD", date: "2026-01-22", status: "approved" },
  { id: "EXP-1021", employee: "Hugo Weber", department: "Engineering", category: "training", amount: 382.34, currency: "USD", date: "2026-02-01", status: "approved" },
  { id: "EXP-1022", employee: "Farid Haddad", department: "Support", category: "training", amount: 766.34, currency: "EUR", date: "2026-01-23", status: "approved" },
  { id: "EXP-1023", employee: "Hugo Weber", department: "Engineering", category: "office", amount: 121.7, currency: "EUR", date: "2026-02-13", status: "approved" },
  { id: "EXP-1024", employee: "Ben Okafor", department: "Engineering", category: "equipment", amount: 980.69, currency: "USD", date: "2026-01-07", status: "approved" },
  { id: "EXP-1025", employee: "Hugo Weber", department: "Engineering", category: "meals", amount: 37.59, currency: "USD", date: "2026-03-02", status: "approved" },
  { id: "EXP-1026", employee: "Chloe Martin", department: "Marketing", category: "training", amount: 301.46, currency: "USD", date: "2026-02-20", status: "approved" },
  { id: "EXP-1027", employee: "Dev Patel", department: "Engineering", category: "training", amount: 576.23, currency: "USD", date: "2026-03-09", status: "approved" },
  { id: "EXP-1028", employee: "Hugo Weber", department: "Engineering", category: "travel", amount: 294.19, currency: "EUR", date: "2026-02-15", status: "pending" },
  { id: "EXP-1029", employee: "Eva Lindqvist", department: "Sales", category: "travel", amount: 330.15, currency: "GBP", date: "2026-03-11", status: "approved" },
  { id: "EXP-1030", employee: "Hugo Weber", department: "Engineering", category: "office", amount: 32.6, currency: "EUR", date: "2026-01-07", status: "approved" },
  { id: "EXP-1031", employee: "Chloe Martin", department: "Marketing", category: "office", amount: 86.04, currency: "EUR", date: "2026-01-25", status: "approved" },
  { id: "EXP-1032", employee: "Ben Okafor", department: "Engineering", category: "office", amount: 128.36, currency: "USD", date: "2026-03-12", status: "approved" },
  { id: "EXP-1033", employee: "Dev Patel", department: "Engineering", category: "training", amount: 741.57, currency: "GBP", date: "2026-03-11", status: "approved" },
  { id: "EXP-1034", employee: "Dev Patel", department: "Engineering", category: "meals", amount: 150.93, currency: "USD", date: "2026-03-26", status: "approved" },
  { id: "EXP-1035", employee: "Hugo Weber", department: "Engineering", category: "software", amount: 446.67, currency: "USD", date: "2026-01-26", status: "pending" },
  { id: "EXP-1036", employee: "Eva Lindqvist", department: "Sales", category: "meals", amount: 130.8, currency: "GBP", date: "2026-02-15", status: "approved" },
  { id: "EXP-1037", employee: "Farid Haddad", department: "Support", category: "travel", amount: 425.58, currency: "USD", date: "2026-01-16", status: "approved" },
  { id: "EXP-1038", employee: "Dev Patel", department: "Engineering", category: "equipment", amount: 966.17, currency: "USD", date: "2026-03-27", status: "pending" },
  { id: "EXP-1039", employee: "Farid Haddad", department: "Support", category: "office", amount: 21.87, currency: "EUR", date: "2026-03-04", status: "approved" },
  { id: "EXP-1040", employee: "Hugo Weber", department: "Engineering", category: "meals", amount: 89.43, currency: "USD", date: "2026-03-11", status: "approved" },
];

/** USD per unit of each currency, as the finance service quotes them. */
export const usdRates: Readonly<Record<Expense["currency"], number>> = { USD: 1, EUR: 1.08, GBP: 1.27 };
