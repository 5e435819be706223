// A long data exploration (28 turns): hourly readings of eight sensors over two days.
// The model profiles each sensor in turn, compares them, hunts for anomalies, and builds
// up a report — the kind of session where history grows the most.
import { z } from "zod";
import { random, reply, type Session } from "../session.js";

const rand = random(5);
const sensorIds = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"];
const readings = sensorIds.flatMap((sensor, si) =>
  Array.from({ length: 48 }, (_, hour) => {
    const base = 18 + si * 0.7 + 4 * Math.sin(((hour % 24) - 6) * (Math.PI / 12));
    const fault = sensor === "s6" && hour >= 30 && hour < 34;
    return {
      sensor,
      hour,
      temp: fault ? 85 + Math.round(rand() * 10) : Math.round((base + (rand() - 0.5) * 1.5) * 10) / 10,
      humidity: Math.round(40 + 15 * rand()),
      ok: !(sensor === "s3" && hour % 17 === 5),
    };
  }),
);

const profile = (sensor: string): string =>
  reply(
    `Next, sensor ${sensor}: I'll profile its temperature the same way as the others (min, max, mean, and the hours of its extremes), using the helper I defined, so the sensors can be compared later.`,
    `(def ${sensor}-profile "Temperature profile of ${sensor}" (profile-of "${sensor}"))
(println "${sensor}" ${sensor}-profile)`,
  );

export const sensorAnalysis: Session = {
  name: "sensor-analysis",
  kind: "exploration",
  prompt: "Analyse two days of hourly sensor readings: profile every sensor, find sensors with faulty readings or gaps, and return for each sensor its mean temperature and a status of ok, gaps or faulty.",
  tools: {},
  output: z.record(z.string(), z.object({ mean: z.number(), status: z.enum(["ok", "gaps", "faulty"]) })),
  context: { readings },
  replies: [
    reply(
      "I'll begin with the overall shape of the data: number of readings, the keys of a reading, and how many readings each sensor has.",
      `(println (count data/readings) "readings")
(println (first data/readings))
(println (frequencies (map :sensor data/readings)))`,
    ),
    reply(
      "Every sensor has 48 hourly readings. There is an ok flag; let me count readings with ok false per sensor before looking at temperatures.",
      `(def not-ok "Readings flagged not ok" (filterv (complement :ok) data/readings))
(println (count not-ok) "not ok")
(println (frequencies (map :sensor not-ok)))`,
    ),
    reply(
      "Only s3 has readings flagged not ok. I'll write a profile helper for one sensor: min, max, mean and the hours of the extremes.",
      `(defn readings-of "Readings of one sensor, by hour" [sensor] (sort-by :hour (filter #(= sensor (:sensor %)) data/readings)))
(defn profile-of "min, max, mean temperature of a sensor and the hours of min and max" [sensor]
  (let [rs (readings-of sensor) temps (map :temp rs)]
    {:min (apply min temps) :max (apply max temps) :mean (/ (round (* 10 (/ (reduce + temps) (count temps)))) 10.0)
     :min-hour (:hour (apply min-key :temp rs)) :max-hour (:hour (apply max-key :temp rs))}))
(println (profile-of "s1"))`,
    ),
    profile("s1"),
    profile("s2"),
    profile("s3"),
    profile("s4"),
    profile("s5"),
    profile("s6"),
    reply(
      "s6 reaches a maximum far above the others. Before profiling the last two, I'll look at its readings around the maximum.",
      `(doseq [r (filter #(<= 28 (:hour %) 35) (readings-of "s6"))] (println (:hour r) (:temp r) (:humidity r)))`,
    ),
    reply(
      "Hours 30 to 33 of s6 read 85 to 95 degrees while its neighbours read around 20: a fault, not weather. I'll continue with the remaining sensors.",
      `(def s6-fault-hours "Hours where s6 reads implausibly high" (mapv :hour (filter #(> (:temp %) 60) (readings-of "s6"))))
(println s6-fault-hours)`,
    ),
    profile("s7"),
    profile("s8"),
    reply(
      "All sensors are profiled. I'll collect the profiles into one map, keyed by sensor, and print the means side by side.",
      `(def profiles "sensor -> profile" (into (sorted-map) (map (fn [s] [s (profile-of s)]) (distinct (map :sensor data/readings)))))
(doseq [[s p] profiles] (println s (:mean p) (:min p) (:max p)))`,
    ),
    reply(
      "Means rise steadily from s1 to s8, apart from s6 which is pulled up by the fault. I'll compute s6's mean without the faulty hours.",
      `(def s6-clean-mean (let [temps (map :temp (remove #(> (:temp %) 60) (readings-of "s6")))] (/ (round (* 10 (/ (reduce + temps) (count temps)))) 10.0)))
(println "s6 mean without fault:" s6-clean-mean "with:" (get-in profiles ["s6" :mean]))`,
    ),
    reply(
      "Now a check for gaps: every sensor should have hours 0 to 47 exactly once.",
      `(def gaps "sensor -> missing hours" (into (sorted-map) (for [[s rs] (group-by :sensor data/readings)] [s (vec (remove (set (map :hour rs)) (range 48)))])))
(println gaps)`,
    ),
    reply(
      "No hour is missing. For s3 the not-ok flags act as gaps; let me list them.",
      `(def s3-flagged "Hours where s3 reports not ok" (mapv :hour (filter #(and (= "s3" (:sensor %)) (not (:ok %))) data/readings)))
(println s3-flagged)`,
    ),
    reply(
      "s3 is flagged at hours 5, 22 and 39: a periodic failure every 17 hours. I'll check its temperatures at those hours to see whether the values are plausible anyway.",
      `(doseq [r (filter #(contains? (set s3-flagged) (:hour %)) (readings-of "s3"))] (println (:hour r) (:temp r)))`,
    ),
    reply(
      "The values look normal, but they are flagged, so I'll treat s3 as having gaps. Let me also look at humidity, to be sure no sensor is faulty there.",
      `(def humidity-range (into (sorted-map) (for [[s rs] (group-by :sensor data/readings)] [s [(apply min (map :humidity rs)) (apply max (map :humidity rs))]])))
(println humidity-range)`,
    ),
    reply(
      "Humidity stays between 40 and 55 for every sensor. I'll look at the daily cycle: the mean temperature per hour of day over all sensors except s6.",
      `(def daily-cycle (into (sorted-map) (for [[h rs] (group-by #(mod (:hour %) 24) (remove #(= "s6" (:sensor %)) data/readings))] [h (/ (round (* 10 (/ (reduce + (map :temp rs)) (count rs)))) 10.0)])))
(println daily-cycle)`,
    ),
    reply(
      "The cycle peaks mid-day as expected. One more check: jumps of more than 5 degrees between consecutive hours, which would reveal other faults.",
      `(defn jumps "Consecutive-hour temperature jumps above 5 degrees" [sensor]
  (vec (keep (fn [[a b]] (when (> (abs (- (:temp b) (:temp a))) 5) [(:hour a) (:hour b)])) (partition 2 1 (readings-of sensor)))))
(println (into (sorted-map) (map (fn [s] [s (jumps s)]) (keys profiles))))`,
    ),
    reply(
      "Only s6 jumps, entering and leaving the fault. I'll define the status rules: faulty if any reading is above 60, gaps if any reading is flagged not ok, otherwise ok.",
      `(defn status-of "ok, gaps or faulty" [sensor]
  (let [rs (readings-of sensor)]
    (cond (some #(> (:temp %) 60) rs) "faulty"
          (some (complement :ok) rs) "gaps"
          :else "ok")))
(println (into (sorted-map) (map (fn [s] [s (status-of s)]) (keys profiles))))`,
    ),
    reply(
      "The statuses match what I found. For the report I'll use the mean over all readings as profiled, but for the faulty sensor the mean without the faulty hours is more useful; I'll use that and note it.",
      `(def report "sensor -> mean and status" (into (sorted-map) (for [s (keys profiles)] [s {:mean (if (= s "s6") s6-clean-mean (get-in profiles [s :mean])) :status (status-of s)}])))
(doseq [[s r] report] (println s r))`,
    ),
    reply(
      "Let me double check the report has all eight sensors and the three statuses are as expected.",
      `(println (count report) (frequencies (map :status (vals report))))`,
    ),
    reply("The report is complete.", "(return report)"),
  ],
};
