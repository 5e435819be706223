// Tool-heavy question answering over a policy corpus: search with refined queries, read
// long documents, print the relevant excerpts, and answer with citations.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { reply, type Session } from "../session.js";

const docs: Record<string, { title: string; body: string }> = {
  "HR-12": {
    title: "Remote work policy",
    body: "Employees may work remotely up to three days per week with their manager's approval. Working from another country requires approval from HR and is limited to 30 days per calendar year, because of tax and social security rules. Equipment for home offices is reimbursed up to 500 EUR once every three years. Remote workers must be reachable during core hours, 10:00 to 15:00 local time.",
  },
  "HR-07": {
    title: "Travel and expenses",
    body: "Business travel must be booked through the travel portal. Economy class is required for flights under six hours; business class may be approved for longer flights. Hotel costs are reimbursed up to 180 EUR per night in capital cities and 130 EUR elsewhere. Meals are covered by a per diem of 45 EUR. Receipts must be submitted within 30 days of the trip.",
  },
  "SEC-03": {
    title: "Device security",
    body: "Company laptops must use full-disk encryption and automatic screen locking after five minutes. Personal devices may access email only through the managed mobile app. When working abroad, employees must use the company VPN at all times and must not store customer data on local disks. Lost devices must be reported to security within 24 hours.",
  },
  "HR-15": {
    title: "Leave policy",
    body: "Full-time employees receive 28 days of paid leave per year. Unused leave of up to five days can be carried over to the first quarter of the next year. Parental leave follows the statutory rules of the country of employment, topped up to full salary for the first eight weeks.",
  },
  "FIN-02": {
    title: "Corporate cards",
    body: "Corporate cards may be used for business expenses only. Monthly statements must be reconciled within ten days. Cash withdrawals are not allowed except when travelling to countries where cards are not widely accepted, up to 200 EUR per trip.",
  },
};

const tools = {
  "search-policies": tool({
    description: "Full-text search over company policies: ids and titles of matching documents with a one-line snippet.",
    input: z.object({ query: z.string() }),
    run: ({ query }) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      return Object.entries(docs)
        .filter(([, d]) => words.some((w) => d.body.toLowerCase().includes(w) || d.title.toLowerCase().includes(w)))
        .map(([id, d]) => ({ id, title: d.title, snippet: d.body.slice(0, 80) }));
    },
  }),
  "get-policy": tool({
    description: "The full text of a policy document by id.",
    input: z.object({ id: z.string() }),
    run: ({ id }) => {
      const d = docs[id];
      if (d === undefined) throw new Error(`no policy ${id}`);
      return `${id} ${d.title}\n\n${d.body}`;
    },
  }),
};

export const policyQa: Session = {
  name: "policy-qa",
  kind: "tool-heavy",
  prompt: "An employee wants to work from Portugal for six weeks this year with their company laptop. What rules apply? Return the answer as a list of rules, each with the policy id it comes from.",
  tools,
  output: z.object({ rules: z.array(z.object({ rule: z.string(), policy: z.string() })) }),
  context: {},
  replies: [
    reply(
      "I'll search the policies for remote work abroad, starting with a broad query and printing ids, titles and snippets.",
      `(def hits-abroad (tool/search-policies {:query "abroad another country"}))
(doseq [h hits-abroad] (println (:id h) "-" (:title h) "|" (:snippet h)))`,
    ),
    reply(
      "HR-12 (remote work) and SEC-03 (device security) look relevant. I'll read HR-12 in full.",
      `(def hr-12 (tool/get-policy {:id "HR-12"}))
(println hr-12)`,
    ),
    reply(
      "HR-12 limits work from another country to 30 days per calendar year with HR approval; six weeks is 42 days, so it exceeds the limit. Now the device rules in SEC-03.",
      `(def sec-03 (tool/get-policy {:id "SEC-03"}))
(println sec-03)`,
    ),
    reply(
      "SEC-03 requires the VPN at all times abroad and forbids storing customer data locally. I'll also search for tax or social security rules, which HR-12 mentions as the reason for the limit.",
      `(def hits-tax (tool/search-policies {:query "tax social security"}))
(doseq [h hits-tax] (println (:id h) "-" (:title h)))`,
    ),
    reply(
      "Only HR-12 mentions tax. Let me check whether leave could cover the days beyond 30, by reading the leave policy.",
      `(def hr-15 (tool/get-policy {:id "HR-15"}))
(println hr-15)`,
    ),
    reply(
      "Leave is 28 days a year, so the extra 12 days could be taken as leave instead of remote work. Equipment: HR-12 covers home office reimbursement, not relevant here. I'll search for laptop rules in other documents to be complete.",
      `(def hits-laptop (tool/search-policies {:query "laptop device encryption"}))
(doseq [h hits-laptop] (println (:id h) "-" (:title h)))`,
    ),
    reply(
      "Only SEC-03 covers laptops. I'll assemble the rules with their sources and print them for a final check.",
      `(def rules [{:rule "Working from another country needs HR approval and is limited to 30 days per calendar year; six weeks (42 days) exceeds it" :policy "HR-12"}
            {:rule "Remote work needs the manager's approval and reachability during core hours 10:00-15:00 local time" :policy "HR-12"}
            {:rule "Abroad, the company VPN must be used at all times and customer data must not be stored on local disks" :policy "SEC-03"}
            {:rule "The laptop must keep full-disk encryption and screen locking; a lost device must be reported within 24 hours" :policy "SEC-03"}
            {:rule "Days beyond the 30-day limit could be taken as paid leave (28 days per year)" :policy "HR-15"}])
(doseq [r rules] (println (:policy r) (:rule r)))`,
    ),
    reply("The answer covers the limit, approvals, device security and the leave option.", "(return {:rules rules})"),
  ],
};
