// Exploration with iteration on one function: the model writes a keyword classifier for
// support tickets and redefines it several times, checking its accuracy against the
// labelled sample each time (superseded definitions in the compressed view).
import { z } from "zod";
import { pick, random, reply, type Session } from "../session.js";

const rand = random(11);
const templates: Record<string, string[]> = {
  billing: ["I was charged twice for my subscription", "Refund for the last invoice please", "The invoice shows the wrong VAT number", "Why did my card get declined at renewal?"],
  bug: ["The export button crashes the app", "Error 500 when saving a report", "Charts do not load since the update", "The app freezes when I upload a CSV"],
  account: ["I cannot reset my password", "Please change the email on my account", "How do I add a second admin?", "Two-factor codes never arrive"],
  feature: ["Could you add dark mode?", "We need an API for bulk imports", "Please support SSO with Okta", "Would love keyboard shortcuts in the editor"],
};
const labels = Object.keys(templates);
const tickets = Array.from({ length: 80 }, (_, i) => {
  const label = pick(rand, labels);
  return { id: i + 1, subject: pick(rand, templates[label]), priority: pick(rand, ["low", "normal", "high"]), label: i < 40 ? label : null, "true-label": label };
});

export const ticketTriage: Session = {
  name: "ticket-triage",
  kind: "exploration",
  prompt: "Build a keyword classifier for the support tickets (billing, bug, account, feature) using the 40 labelled tickets, then classify the 40 unlabelled ones and return the counts per category and the ids of unlabelled high-priority bugs.",
  tools: {},
  output: z.object({ counts: z.record(z.string(), z.number()), "urgent-bugs": z.array(z.number()) }),
  context: { tickets: tickets.map(({ "true-label": _, ...t }) => t) },
  replies: [
    reply(
      "I'll start by splitting the tickets into labelled and unlabelled ones and looking at a few labelled examples per category.",
      `(def labelled "Tickets with a label" (filterv :label data/tickets))
(def unlabelled "Tickets without a label" (filterv (comp nil? :label) data/tickets))
(println (count labelled) "labelled," (count unlabelled) "unlabelled")
(println (frequencies (map :label labelled)))`,
    ),
    reply(
      "Let me print two subjects per label so I can pick keywords.",
      `(doseq [[l ts] (group-by :label labelled)] (println l "|" (join " | " (map :subject (take 2 ts)))))`,
    ),
    reply(
      "A first classifier: check a few keywords per category in order, falling back to bug. Then measure accuracy on the labelled set.",
      `(defn classify "Category of a ticket by keywords (v1)" [t]
  (let [s (lower-case (:subject t))]
    (cond (re-find #"charge|refund|invoice" s) "billing"
          (re-find #"password|email|admin" s) "account"
          (re-find #"add|support|would" s) "feature"
          :else "bug")))
(defn accuracy "Share of labelled tickets classified correctly" [f] (/ (count (filter #(= (f %) (:label %)) labelled)) (count labelled)))
(println "accuracy v1:" (accuracy classify))`,
    ),
    reply(
      "Let me see which labelled tickets v1 gets wrong.",
      `(def misses (filterv #(not= (classify %) (:label %)) labelled))
(doseq [t misses] (println (:label t) "->" (classify t) "|" (:subject t)))`,
    ),
    reply(
      "The misses are declined cards (billing), two-factor codes (account) and 'we need an API' (feature). I'll extend the keyword lists.",
      `(defn classify "Category of a ticket by keywords (v2)" [t]
  (let [s (lower-case (:subject t))]
    (cond (re-find #"charge|refund|invoice|card|vat" s) "billing"
          (re-find #"password|email|admin|two-factor|codes" s) "account"
          (re-find #"add|support|would|need an api|shortcuts" s) "feature"
          :else "bug")))
(println "accuracy v2:" (accuracy classify))`,
    ),
    reply(
      "Better. Let me list what is still wrong.",
      `(def misses (filterv #(not= (classify %) (:label %)) labelled))
(println (count misses) "misses")
(doseq [t misses] (println (:label t) "->" (classify t) "|" (:subject t)))`,
    ),
    reply(
      "Some tickets are still misclassified. Before changing the rules again, I'll check how a few typical subjects are classified one by one, to see which rule catches them.",
      `(doseq [s ["The export button crashes the app" "Please support SSO with Okta" "The app freezes when I upload a CSV" "Could you add dark mode?"]]
  (println (classify {:subject s}) "|" s))`,
    ),
    reply(
      "The rules behave as intended on these. I'll make the bug rule explicit instead of a fallback, so unknown subjects become \"other\" and I can see them.",
      `(defn classify "Category of a ticket by keywords (v3, explicit bug rule)" [t]
  (let [s (lower-case (:subject t))]
    (cond (re-find #"charge|refund|invoice|card|vat" s) "billing"
          (re-find #"password|email|admin|two-factor|codes" s) "account"
          (re-find #"crash|error|freez|load|500" s) "bug"
          (re-find #"add|support|would|need an api|shortcuts" s) "feature"
          :else "other")))
(println "accuracy v3:" (accuracy classify))
(println (frequencies (map classify data/tickets)))`,
    ),
    reply(
      "No ticket lands in other and the labelled accuracy is perfect. Let me classify the unlabelled tickets and look at the distribution.",
      `(def predicted "Unlabelled ticket id -> predicted category" (into {} (map (juxt :id classify) unlabelled)))
(println (frequencies (vals predicted)))`,
    ),
    reply(
      "Spot check: print five unlabelled tickets with their predicted category.",
      `(doseq [t (take 5 unlabelled)] (println (:id t) (get predicted (:id t)) "|" (:subject t)))`,
    ),
    reply(
      "The predictions look right. Now the high-priority bugs among the unlabelled tickets.",
      `(def urgent-bugs "Unlabelled high-priority tickets classified as bugs" (vec (sort (map :id (filter #(and (= "high" (:priority %)) (= "bug" (get predicted (:id %)))) unlabelled)))))
(println urgent-bugs)`,
    ),
    reply(
      "As a last refinement, I'll make the classifier tolerate missing subjects, in case the data has some, and confirm nothing changes.",
      `(defn classify "Category of a ticket by keywords (v4, nil-safe)" [t]
  (let [s (lower-case (or (:subject t) ""))]
    (cond (re-find #"charge|refund|invoice|card|vat" s) "billing"
          (re-find #"password|email|admin|two-factor|codes" s) "account"
          (re-find #"crash|error|freez|load|500" s) "bug"
          (re-find #"add|support|would|need an api|shortcuts" s) "feature"
          :else "other")))
(println "accuracy v4:" (accuracy classify) "changed:" (count (filter #(not= (classify %) (get predicted (:id %))) unlabelled)))`,
    ),
    reply(
      "Nothing changed. Final counts for the unlabelled tickets:",
      `(def counts "Predicted category counts, unlabelled tickets" (frequencies (vals predicted)))
(println counts)`,
    ),
    reply("Returning the result.", `(return {:counts counts :urgent-bugs urgent-bugs})`),
  ],
};
