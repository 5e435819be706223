// ticket-triage with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { ticketTriage } from "../tickets.js";

export const ticketTriageRealistic: Session = {
  ...ticketTriage,
  replies: [
    reply(
      "The task has two parts: build a keyword classifier from the labelled tickets, then apply it to the unlabelled ones. First I'll split the tickets into labelled and unlabelled sets and look at the label distribution, so I know how balanced the training data is. I'll also print the keys of one ticket to confirm the field names.",
      `;; Step 1: split the tickets
(def labelled
  "Tickets with a label"
  (filterv :label data/tickets))

(def unlabelled
  "Tickets without a label"
  (filterv (comp nil? :label) data/tickets))

(println "keys:" (keys (first data/tickets)))
(println (count labelled) "labelled," (count unlabelled) "unlabelled")
(println "labels:" (frequencies (map :label labelled)))
(println "priorities:" (frequencies (map :priority data/tickets)))`,
    ),
    reply(
      "There are 40 labelled and 40 unlabelled tickets; billing is the largest class (16) and feature the smallest (6). To choose keywords I need to see real subjects, so I'll print up to three distinct subjects per label. Using distinct avoids printing the same template twice, which would waste output.",
      `;; Step 2: example subjects per label
(doseq [[label ts] (sort-by key (group-by :label labelled))]
  (println label "|" (clojure.string/join " | " (take 3 (distinct (map :subject ts))))))`,
    ),
    reply(
      "The subjects are short and keyword-rich: billing mentions refunds, invoices and charges; account mentions passwords, email and admins; feature requests use phrases like \"add\", \"support\" or \"would love\"; bugs mention crashes and errors. I'll write a first classifier as an ordered cond over lower-cased subjects, with bug as the fallback, plus an accuracy function that scores any classifier on the labelled set.",
      `;; Step 3: first keyword classifier
(defn classify
  "Category of a ticket by keywords (v1)"
  [t]
  (let [s (clojure.string/lower-case (:subject t))]
    (cond
      (re-find #"charge|refund|invoice" s) "billing"
      (re-find #"password|email|admin" s) "account"
      (re-find #"add|support|would" s) "feature"
      :else "bug")))

(defn accuracy
  "Share of labelled tickets classified correctly"
  [f]
  (/ (count (filter #(= (f %) (:label %)) labelled))
     (count labelled)))

(println "accuracy v1:" (accuracy classify))`,
    ),
    reply(
      "Version 1 reaches 92.5% accuracy on the labelled tickets, which means three tickets are misclassified. Rather than guessing, I'll list each miss with its true label, the predicted label and the subject, so I can see exactly which keywords are missing.",
      `;; Step 4: inspect the misclassified tickets
(def misses
  "Labelled tickets that v1 gets wrong"
  (filterv #(not= (classify %) (:label %)) labelled))

(println (count misses) "misses")
(doseq [t misses]
  (println (:label t) "->" (classify t) "|" (:subject t)))`,
    ),
    reply(
      "All three misses fall through to the bug fallback: \"Why did my card get declined at renewal?\" is billing, and \"Two-factor codes never arrive\" is account. I'll extend the billing keywords with card and vat, the account keywords with two-factor and codes, and the feature keywords with a couple of phrases I saw earlier, then re-measure the accuracy.",
      `;; Step 5: extended keywords (v2)
(defn classify
  "Category of a ticket by keywords (v2)"
  [t]
  (let [s (clojure.string/lower-case (:subject t))]
    (cond
      (re-find #"charge|refund|invoice|card|vat" s) "billing"
      (re-find #"password|email|admin|two-factor|codes" s) "account"
      (re-find #"add|support|would|need an api|shortcuts" s) "feature"
      :else "bug")))

(println "accuracy v2:" (accuracy classify))`,
    ),
    reply(
      "Version 2 classifies every labelled ticket correctly. I'll recompute the list of misses with the new classifier to confirm it is empty, and print the predicted distribution over the labelled tickets next to the true one, as a second check that no class is absorbing another.",
      `;; Step 6: confirm there are no misses left
(def misses
  "Labelled tickets that the current classifier gets wrong"
  (filterv #(not= (classify %) (:label %)) labelled))

(println (count misses) "misses")
(println "predicted:" (frequencies (map classify labelled)))
(println "true:     " (frequencies (map :label labelled)))`,
    ),
    reply(
      "No misses remain and the predicted distribution matches the true one. Because bug is still only a fallback, I want to check a few typical subjects one by one to see which rule catches each of them. This tells me whether the bug class is recognised positively or only by elimination.",
      `;; Step 7: trace the rules on sample subjects
(def samples
  ["The export button crashes the app"
   "Please support SSO with Okta"
   "The app freezes when I upload a CSV"
   "Could you add dark mode?"])

(doseq [s samples]
  (println (classify {:subject s}) "|" s))`,
    ),
    reply(
      "The rules behave as intended on these examples, but bugs are still recognised only by elimination, so an unexpected subject would silently become a bug. I'll add an explicit bug rule (crash, error, freeze, load, 500) and return \"other\" for anything unmatched, then check the accuracy again and the distribution over all tickets, looking for any \"other\".",
      `;; Step 8: explicit bug rule (v3)
(defn classify
  "Category of a ticket by keywords (v3, explicit bug rule)"
  [t]
  (let [s (clojure.string/lower-case (:subject t))]
    (cond
      (re-find #"charge|refund|invoice|card|vat" s) "billing"
      (re-find #"password|email|admin|two-factor|codes" s) "account"
      (re-find #"crash|error|freez|load|500" s) "bug"
      (re-find #"add|support|would|need an api|shortcuts" s) "feature"
      :else "other")))

(println "accuracy v3:" (accuracy classify))
(println "all tickets:" (frequencies (map classify data/tickets)))`,
    ),
    reply(
      "Accuracy stays at 100% and no ticket falls into \"other\", so every subject is matched by a positive rule. Now I'll classify the unlabelled tickets and keep the predictions in a map from ticket id to category, which I'll need for both the counts and the urgent bugs.",
      `;; Step 9: classify the unlabelled tickets
(def predicted
  "Unlabelled ticket id -> predicted category"
  (into {} (map (juxt :id classify) unlabelled)))

(println "predicted:" (count predicted) "tickets")
(println (frequencies (vals predicted)))`,
    ),
    reply(
      "The unlabelled tickets split into 15 billing, 9 bug, 10 account and 6 feature. Before trusting these numbers I'll spot-check a few predictions by printing the id, the predicted category and the subject for the first five unlabelled tickets.",
      `;; Step 10: spot check
(doseq [t (take 5 unlabelled)]
  (println (:id t) (get predicted (:id t)) "|" (:subject t)))`,
    ),
    reply(
      "The spot check looks right: charges and invoices are billing, errors and freezes are bugs. Next, the second part of the answer: the ids of unlabelled tickets that are high priority and predicted as bugs. I'll sort them so the result is stable.",
      `;; Step 11: urgent bugs among the unlabelled tickets
(def urgent-bugs
  "Unlabelled high-priority tickets classified as bugs"
  (->> unlabelled
       (filter #(and (= "high" (:priority %))
                     (= "bug" (get predicted (:id %)))))
       (map :id)
       sort
       vec))

(println "urgent bugs:" urgent-bugs)
(println "high priority unlabelled:" (count (filter #(= "high" (:priority %)) unlabelled)))`,
    ),
    reply(
      "There are four urgent bugs: 43, 44, 65 and 67. As a last robustness step I'll make the classifier tolerate a missing subject, since real data often has empty fields, and confirm that this change does not alter any prediction on the unlabelled set.",
      `;; Step 12: nil-safe classifier (v4)
(defn classify
  "Category of a ticket by keywords (v4, nil-safe)"
  [t]
  (let [s (clojure.string/lower-case (or (:subject t) ""))]
    (cond
      (re-find #"charge|refund|invoice|card|vat" s) "billing"
      (re-find #"password|email|admin|two-factor|codes" s) "account"
      (re-find #"crash|error|freez|load|500" s) "bug"
      (re-find #"add|support|would|need an api|shortcuts" s) "feature"
      :else "other")))

(def changed (filter #(not= (classify %) (get predicted (:id %))) unlabelled))
(println "accuracy v4:" (accuracy classify) "changed:" (count changed))
(println "empty subject ->" (classify {:subject nil}))`,
    ),
    reply(
      "Nothing changed and an empty subject now maps to \"other\" instead of failing. I'll compute the final counts per category for the unlabelled tickets from the stored predictions and print them once more before returning.",
      `;; Step 13: final counts
(def counts
  "Predicted category counts, unlabelled tickets"
  (frequencies (vals predicted)))

(println counts)
(println "sum:" (reduce + (vals counts)))`,
    ),
    reply(
      "The counts add up to the 40 unlabelled tickets, and I have the urgent bug ids. Returning both in the expected shape.",
      `;; Final answer
(return {:counts counts
         :urgent-bugs urgent-bugs})`,
    ),
  ],
};
