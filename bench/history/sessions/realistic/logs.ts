// log-triage with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { logTriage } from "../logs.js";

export const logTriageRealistic: Session = {
  ...logTriage,
  replies: [
    reply(
      "To find where the errors started I first need to know which services exist, since the log tool works per service and per hour. I'll list the services and keep them in a definition for the fan-outs later.",
      `;; Step 1: the services to investigate
(def services
  "Production services"
  (tool/list-services))

(println (count services) "services:" services)`,
    ),
    reply(
      "There are five services: api-gateway, checkout, payments, search and inventory. Before fetching many hours of logs I want to know the line format, so I'll fetch a single afternoon hour (13:00) for api-gateway, print how many lines it has and show the first few lines.",
      `;; Step 2: one hour of logs to learn the format
(def sample-lines
  (tool/fetch-logs {:service "api-gateway" :hour 13}))

(println (count sample-lines) "lines")
(doseq [line (take 4 sample-lines)]
  (println line))`,
    ),
    reply(
      "Each hour has 24 lines in the form `timestamp LEVEL service message`. I'll write a parser that splits a line into those four fields with a regular expression, and an error counter that counts the ERROR lines of a batch. I'll test both on the sample before using them at scale.",
      `;; Step 3: parsing helpers
(defn parse-line
  "timestamp, level, service and message of a log line"
  [line]
  (let [[_ ts level service msg] (re-matches #"(\\S+) (\\S+) (\\S+) (.*)" line)]
    {:ts ts :level level :service service :msg msg}))

(defn error-count
  "Number of ERROR lines"
  [lines]
  (count (filter #(= "ERROR" (:level (parse-line %))) lines)))

(println (parse-line (first sample-lines)))
(println "levels in sample:" (frequencies (map (comp :level parse-line) sample-lines)))
(println "errors in sample:" (error-count sample-lines))`,
    ),
    reply(
      "The parser works and the sample hour has a single ERROR line. To see an increase I need a baseline, so I'll count the ERROR lines of every service at 12:00, before the reported afternoon increase, fetching the five services in parallel with pmap.",
      `;; Step 4: baseline error counts at 12:00
(def baseline
  "ERROR lines per service at 12:00"
  (into {}
        (pmap (fn [s] [s (error-count (tool/fetch-logs {:service s :hour 12}))])
              services)))

(println "baseline 12:00:" baseline)
(println "total:" (reduce + (vals baseline)))`,
    ),
    reply(
      "At 12:00 every service has between 0 and 3 errors out of 24 lines, which looks like normal background noise. Now I'll take the same measurement at 15:00, in the middle of the afternoon, and compare it with the baseline service by service.",
      `;; Step 5: error counts at 15:00, compared with the baseline
(def at-15
  "ERROR lines per service at 15:00"
  (into {}
        (pmap (fn [s] [s (error-count (tool/fetch-logs {:service s :hour 15}))])
              services)))

(doseq [s services]
  (println s "12:00" (get baseline s) "15:00" (get at-15 s)))`,
    ),
    reply(
      "Payments went from 1 error at 12:00 to 7 at 15:00, while the other services stayed flat or improved. Payments is the suspect. To find when its errors started, I'll count its ERROR lines for every hour from 10:00 to 18:00 and print them in order.",
      `;; Step 6: payments error counts per hour
(def payments-by-hour
  "payments ERROR lines per hour, 10-18"
  (into (sorted-map)
        (pmap (fn [h] [h (error-count (tool/fetch-logs {:service "payments" :hour h}))])
              (range 10 19))))

(doseq [[h n] payments-by-hour]
  (println (str h ":00") n))`,
    ),
    reply(
      "The count is 0 or 1 per hour until 13:00 and jumps to 9 at 14:00, staying between 7 and 13 afterwards. So the errors start at 14:00. I'll fetch that hour for payments and print its first eight lines in full, to see what the first errors say.",
      `;; Step 7: the first lines of payments at 14:00
(def payments-14
  (tool/fetch-logs {:service "payments" :hour 14}))

(doseq [line (take 8 payments-14)]
  (println line))`,
    ),
    reply(
      "The errors at 14:00 are mostly \"payment provider returned 502\". The first lines are only a sample, so I'll compute the full distribution of ERROR messages over the three bad hours 14–16, sorted by frequency, to find the most frequent one reliably.",
      `;; Step 8: error messages in the bad hours
(def bad-lines
  (mapcat #(tool/fetch-logs {:service "payments" :hour %}) [14 15 16]))

(def error-messages
  "Frequency of ERROR messages in payments, 14-16"
  (->> bad-lines
       (map parse-line)
       (filter #(= "ERROR" (:level %)))
       (map :msg)
       frequencies))

(doseq [[msg n] (sort-by val > error-messages)]
  (println n msg))`,
    ),
    reply(
      "\"payment provider returned 502\" is by far the most frequent error (22 times), followed by upstream timeouts (7). Checkout calls payments, so if the failure propagated it would show up there too. I'll parse checkout's logs at 15:00 and print its level distribution and any errors.",
      `;; Step 9: does checkout show the same problem?
(def checkout-15
  (map parse-line (tool/fetch-logs {:service "checkout" :hour 15})))

(println "levels:" (frequencies (map :level checkout-15)))
(doseq [e (filter #(= "ERROR" (:level %)) checkout-15)]
  (println (:ts e) (:msg e)))`,
    ),
    reply(
      "Checkout has only INFO and WARN lines at 15:00, so the failure is contained in payments. To be sure 14:00 is really the start and not a recurrence, I'll check the payments error counts for the morning hours 6 to 9 as well.",
      `;; Step 10: payments in the morning
(def payments-morning
  "payments ERROR lines per hour, 6-9"
  (into (sorted-map)
        (pmap (fn [h] [h (error-count (tool/fetch-logs {:service "payments" :hour h}))])
              (range 6 10))))

(println "morning:" payments-morning)
(println "max before 14:00:" (apply max (concat (vals payments-morning) (map val (filter #(< (key %) 14) payments-by-hour)))))`,
    ),
    reply(
      "The morning hours have at most 2 errors, so 14:00 is a clear change point. The next question is what changed around then, and deploys are the usual cause. I'll fetch the deploy history of payments and print each deploy.",
      `;; Step 11: payments deploys
(def payments-deploys
  "Deploy history of payments"
  (tool/deploys {:service "payments"}))

(doseq [d payments-deploys]
  (println (:at d) (:version d) (:author d) "-" (:note d)))`,
    ),
    reply(
      "Version 4.19.0 (\"switch to provider API v2\", by lee) was deployed at 13:55, five minutes before the errors began, and a switch to a new provider API fits the 502s from the payment provider. For completeness I'll check whether any other service deployed that day, fetching their histories in parallel.",
      `;; Step 12: deploys of the other services
(def other-deploys
  "service -> deploy history, payments excluded"
  (into {}
        (pmap (fn [s] [s (tool/deploys {:service s})])
              (remove #{"payments"} services))))

(doseq [[s ds] other-deploys]
  (println s (mapv :at ds)))`,
    ),
    reply(
      "No other service deployed on 2026-03-02, so the payments deploy is the only candidate. I'll derive the findings from the data rather than typing them: the first hour whose error count clearly exceeds the background, the most frequent error message, and the last deploy before 14:00.",
      `;; Step 13: the findings
(def start-hour
  "First hour with clearly elevated errors"
  (key (first (filter #(pos? (- (val %) 3)) payments-by-hour))))

(def top-error
  "Most frequent error message in the bad hours"
  (key (apply max-key val error-messages)))

(def culprit
  "Last payments deploy before 14:00"
  (last (filter #(<= (compare (:at %) "2026-03-02T14") 0) payments-deploys)))

(println start-hour top-error (:version culprit))`,
    ),
    reply(
      "Everything points to the payments deploy 4.19.0 at 13:55: errors start at 14:00 and are dominated by \"payment provider returned 502\". Returning the answer.",
      `;; Final answer
(return {:service "payments"
         :hour start-hour
         :error top-error
         :version (:version culprit)})`,
    ),
  ],
};
