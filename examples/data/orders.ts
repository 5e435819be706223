// Orders as an upstream API returns them: totals are formatted strings ("$1,234.50"), which
// is what trips the agent up in the error-recovery example.

export interface Order {
  id: number;
  customer: string;
  status: "shipped" | "pending" | "cancelled";
  /** Formatted amount in USD, e.g. "$1,234.50". */
  total: string;
  /** ISO date. */
  placed: string;
}

export const orders: readonly Order[] = [
  { id: 5001, customer: "Umbrella Ltd", status: "shipped", total: "$2,368.65", placed: "2026-03-28" },
  { id: 5002, customer: "Umbrella Ltd", status: "pending", total: "$3,384.23", placed: "2026-02-06" },
  { id: 5003, customer: "Globex", status: "shipped", total: "$1,897.83", placed: "2026-02-04" },
  { id: 5004, customer: "Umbrella Ltd", status: "pending", total: "$4,125.92", placed: "2026-01-20" },
  { id: 5005, customer: "Stark Industries", status: "shipped", total: "$102.40", placed: "2026-02-20" },
  { id: 5006, customer: "Globex", status: "shipped", total: "$831.27", placed: "2026-01-02" },
  { id: 5007, customer: "Umbrella Ltd", status: "shipped", total: "$1,969.97", placed: "2026-01-25" },
  { id: 5008, customer: "Initech", status: "shipped", total: "$1,011.97", placed: "2026-02-17" },
  { id: 5009, customer: "Wayne Enterprises", status: "shipped", total: "$393.55", placed: "2026-01-22" },
  { id: 5010, customer: "Acme Corp", status: "pending", total: "$4,182.08", placed: "2026-03-18" },
  { id: 5011, customer: "Stark Industries", status: "shipped", total: "$3,193.24", placed: "2026-02-11" },
  { id: 5012, customer: "Acme Corp", status: "shipped", total: "$2,382.67", placed: "2026-01-03" },
  { id: 5013, customer: "Acme Corp", status: "shipped", total: "$1,250.16", placed: "2026-01-28" },
  { id: 5014, customer: "Acme Corp", status: "shipped", total: "$912.42", placed: "2026-01-07" },
  { id: 5015, customer: "Acme Corp", status: "shipped", total: "$1,693.29", placed: "2026-03-23" },
  { id: 5016, customer: "Initech", status: "shipped", total: "$2,847.62", placed: "2026-02-25" },
  { id: 5017, customer: "Umbrella Ltd", status: "cancelled", total: "$103.02", placed: "2026-02-11" },
  { id: 5018, customer: "Acme Corp", status: "shipped", total: "$1,064.97", placed: "2026-01-05" },
  { id: 5019, customer: "Globex", status: "pending", total: "$3,355.61", placed: "2026-01-15" },
  { id: 5020, customer: "Wayne Enterprises", status: "cancelled", total: "$2,156.88", placed: "2026-02-15" },
  { id: 5021, customer: "Acme Corp", status: "shipped", total: "$2,717.85", placed: "2026-02-14" },
  { id: 5022, customer: "Stark Industries", status: "shipped", total: "$41.96", placed: "2026-03-07" },
  { id: 5023, customer: "Stark Industries", status: "pending", total: "$819.20", placed: "2026-01-07" },
  { id: 5024, customer: "Globex", status: "shipped", total: "$4,155.50", placed: "2026-01-02" },
  { id: 5025, customer: "Initech", status: "cancelled", total: "$3,254.39", placed: "2026-02-01" },
  { id: 5026, customer: "Acme Corp", status: "shipped", total: "$345.34", placed: "2026-02-13" },
  { id: 5027, customer: "Initech", status: "shipped", total: "$2,541.34", placed: "2026-02-01" },
  { id: 5028, customer: "Umbrella Ltd", status: "cancelled", total: "$4,030.00", placed: "2026-03-05" },
  { id: 5029, customer: "Wayne Enterprises", status: "shipped", total: "$1,646.16", placed: "2026-02-28" },
  { id: 5030, customer: "Globex", status: "pending", total: "$3,442.06", placed: "2026-02-08" },
];
