// policy-qa with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { policyQa } from "../policies.js";

export const policyQaRealistic: Session = {
  ...policyQa,
  replies: [
    reply(
      "The question combines several topics: working from another country, the duration (six weeks), and using the company laptop abroad. I'll start with a broad search for working abroad and print the id, title and snippet of each hit, so I can decide which documents to read in full.",
      `;; Step 1: which policies mention working abroad?
(def hits-abroad
  (tool/search-policies {:query "abroad another country"}))

(println (count hits-abroad) "hits")
(doseq [h hits-abroad]
  (println (:id h) "-" (:title h) "|" (:snippet h)))`,
    ),
    reply(
      "Three policies match: HR-12 (remote work), SEC-03 (device security) and HR-15 (leave). HR-12 is the most directly relevant to working from Portugal, so I'll read it in full first and look for limits on working from another country and the approvals required.",
      `;; Step 2: the remote work policy in full
(def hr-12
  "HR-12 Remote work policy, full text"
  (tool/get-policy {:id "HR-12"}))

(println hr-12)`,
    ),
    reply(
      "HR-12 says that working from another country requires HR approval and is limited to 30 days per calendar year, because of tax and social security rules; six weeks is 42 days, so the plan exceeds the limit by 12 days. It also requires the manager's approval and reachability during core hours 10:00–15:00. Since the employee wants to take the company laptop, I'll read the device security policy SEC-03 next.",
      `;; Step 3: the device security policy
(def sec-03
  "SEC-03 Device security, full text"
  (tool/get-policy {:id "SEC-03"}))

(println sec-03)`,
    ),
    reply(
      "SEC-03 requires full-disk encryption and screen locking, the company VPN at all times when working abroad, no customer data on local disks, and reporting a lost device within 24 hours. HR-12 cites tax and social security as the reason for the 30-day limit, so I'll search for those terms to see whether another policy adds rules.",
      `;; Step 4: any tax or social security rules elsewhere?
(def hits-tax
  (tool/search-policies {:query "tax social security"}))

(doseq [h hits-tax]
  (println (:id h) "-" (:title h)))`,
    ),
    reply(
      "Only HR-12 mentions tax and social security, so there are no additional rules there. The 12 days beyond the limit might be covered differently, for example as leave, so I'll read the leave policy HR-15 to see how many days are available and whether leave can be combined.",
      `;; Step 5: the leave policy
(def hr-15
  "HR-15 Leave policy, full text"
  (tool/get-policy {:id "HR-15"}))

(println hr-15)`,
    ),
    reply(
      "HR-15 grants 28 days of paid leave per year, so the 12 extra days could be taken as leave instead of remote work. HR-12's equipment reimbursement concerns home offices, which is not relevant here. To be complete on the laptop side, I'll search for laptop, device and encryption rules in other documents.",
      `;; Step 6: other laptop rules?
(def hits-laptop
  (tool/search-policies {:query "laptop device encryption"}))

(doseq [h hits-laptop]
  (println (:id h) "-" (:title h)))
(println "new documents:" (remove #{"HR-12" "SEC-03" "HR-15"} (map :id hits-laptop)))`,
    ),
    reply(
      "Only SEC-03 covers laptops, so I have all the relevant rules. I'll assemble them as a list of maps, each with the rule stated for this situation and the id of the policy it comes from, and print them for a final review before returning.",
      `;; Step 7: the rules that apply
(def rules
  "Rules for working six weeks from Portugal with the company laptop"
  [{:rule "Working from another country needs HR approval and is limited to 30 days per calendar year; six weeks (42 days) exceeds it" :policy "HR-12"}
   {:rule "Remote work needs the manager's approval and reachability during core hours 10:00-15:00 local time" :policy "HR-12"}
   {:rule "Abroad, the company VPN must be used at all times and customer data must not be stored on local disks" :policy "SEC-03"}
   {:rule "The laptop must keep full-disk encryption and screen locking; a lost device must be reported within 24 hours" :policy "SEC-03"}
   {:rule "Days beyond the 30-day limit could be taken as paid leave (28 days per year)" :policy "HR-15"}])

(doseq [r rules]
  (println (:policy r) (:rule r)))
(println (count rules) "rules from" (count (distinct (map :policy rules))) "policies")`,
    ),
    reply(
      "The answer covers the 30-day limit and the approvals, the device security requirements abroad, and the option of using paid leave for the remaining days. Returning the rules.",
      `;; Final answer
(return {:rules rules})`,
    ),
  ],
};
