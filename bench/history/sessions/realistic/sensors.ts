// sensor-analysis with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { sensorAnalysis } from "../sensors.js";

/** A profiling turn: what the previous profile showed, then the same steps for the next sensor. */
const profile = (sensor: string, seen: string): string =>
  reply(
    `${seen} Next I'll profile sensor ${sensor} with the same helper, so all sensors are described the same way: minimum, maximum, mean, and the hours of the extremes. I'll also print the spread between maximum and minimum and the number of readings, which makes it easy to spot a sensor that behaves differently from its neighbours.`,
    `;; Profile of ${sensor}
(def ${sensor}-profile
  "Temperature profile of ${sensor}"
  (profile-of "${sensor}"))

(println "${sensor}" ${sensor}-profile)
(println "${sensor} spread:" (- (:max ${sensor}-profile) (:min ${sensor}-profile))
         "readings:" (count (readings-of "${sensor}")))`,
  );

export const sensorAnalysisRealistic: Session = {
  ...sensorAnalysis,
  replies: [
    reply(
      "I need to profile each sensor and detect faults and gaps, so I'll start with the overall shape of the data: how many readings there are, what a single reading looks like, and how many readings each sensor has. Equal counts per sensor would suggest there are no missing hours, but I'll verify gaps separately later.",
      `;; Step 1: overview of the readings
(println (count data/readings) "readings")
(println "example:" (first data/readings))
(println "per sensor:" (frequencies (map :sensor data/readings)))
(println "hours:" (apply min (map :hour data/readings)) "to" (apply max (map :hour data/readings)))`,
    ),
    reply(
      "There are 384 readings, 48 per sensor, covering hours 0 to 47, and each reading has :sensor, :hour, :temp, :humidity and an :ok flag. The :ok flag could mark bad readings, so before looking at temperatures I'll count the readings flagged as not ok and see which sensors they belong to.",
      `;; Step 2: readings flagged as not ok
(def not-ok
  "Readings flagged not ok"
  (filterv (complement :ok) data/readings))

(println (count not-ok) "not ok")
(println "per sensor:" (frequencies (map :sensor not-ok)))
(println "hours:" (mapv :hour not-ok))`,
    ),
    reply(
      "Only s3 has readings flagged as not ok (three of them). Since I'll profile eight sensors, I'll write two helpers: one that returns a sensor's readings sorted by hour, and one that computes min, max and mean temperature plus the hours of the extremes. I'll round the mean to one decimal so the printed profiles stay compact, and test the helper on s1.",
      `;; Step 3: helpers for per-sensor profiles
(defn readings-of
  "Readings of one sensor, by hour"
  [sensor]
  (sort-by :hour (filter #(= sensor (:sensor %)) data/readings)))

(defn profile-of
  "min, max, mean temperature of a sensor and the hours of min and max"
  [sensor]
  (let [rs    (readings-of sensor)
        temps (map :temp rs)
        mean  (/ (reduce + temps) (count temps))]
    {:min      (apply min temps)
     :max      (apply max temps)
     :mean     (/ (round (* 10 mean)) 10.0)
     :min-hour (:hour (apply min-key :temp rs))
     :max-hour (:hour (apply max-key :temp rs))}))

(println (profile-of "s1"))`,
    ),
    profile("s1", "The helper works: s1 ranges from 13.5 to 22.6 degrees with a mean of 17.9, coldest at hour 25 and warmest at hour 13, which fits a daily cycle."),
    profile("s2", "s1 is stored: mean 17.9, a spread of about 9 degrees over its 48 readings."),
    profile("s3", "s2 looks similar to s1 but about 0.8 degrees warmer (mean 18.7, range 14.1 to 23.1)."),
    profile("s4", "s3 continues the pattern with a mean of 19.3; its three flagged readings don't stand out in the profile itself."),
    profile("s5", "s4 has a mean of 20.1 and a range of 15.4 to 24.6, again slightly warmer than the previous sensor."),
    profile("s6", "s5 has a mean of 20.9 and peaks at hour 12, consistent with the others."),
    reply(
      "s6 is clearly different: its maximum is 93 degrees at hour 32 while every other sensor stays below 26, and its mean (27.3) is pulled up accordingly. Before profiling the remaining sensors I want to see whether this is a short spike or a sustained problem, so I'll print s6's readings from hour 28 to 35 with temperature and humidity.",
      `;; Step 4: look at s6 around its maximum
(doseq [r (filter #(<= 28 (:hour %) 35) (readings-of "s6"))]
  (println (:hour r) (:temp r) (:humidity r)))`,
    ),
    reply(
      "Hours 30 to 33 read between 90 and 93 degrees, while hours 29 and 34 are back around 20–25 and the humidity does not change. This is a sensor fault, not a real temperature event. I'll record the faulty hours (any reading above 60 degrees) so I can exclude them later when computing s6's mean.",
      `;; Step 5: hours where s6 is implausibly high
(def s6-fault-hours
  "Hours where s6 reads implausibly high"
  (mapv :hour (filter #(> (:temp %) 60) (readings-of "s6"))))

(println "s6 fault hours:" s6-fault-hours)
(println "fault readings:" (count s6-fault-hours) "of" (count (readings-of "s6")))`,
    ),
    profile("s7", "s6 is faulty for four consecutive hours (30–33) out of 48; the rest of its readings look normal."),
    profile("s8", "s7 has a mean of 22.2 with a normal range of 17.5 to 26.8."),
    reply(
      "All eight sensors are profiled; s8 is the warmest healthy sensor with a mean of 22.8. To compare them conveniently I'll collect every profile into one sorted map keyed by sensor, computed from the data rather than from the individual definitions, and print mean, min and max side by side.",
      `;; Step 6: all profiles in one map
(def profiles
  "sensor -> profile"
  (into (sorted-map)
        (map (fn [s] [s (profile-of s)])
             (distinct (map :sensor data/readings)))))

(doseq [[s p] profiles]
  (println s "mean" (:mean p) "min" (:min p) "max" (:max p)))`,
    ),
    reply(
      "The means increase steadily from s1 (17.9) to s8 (22.8), except s6 whose mean of 27.3 is distorted by the fault. For the report, s6's mean should be computed without the faulty hours, so I'll calculate it over the readings at or below 60 degrees and compare it with the distorted value.",
      `;; Step 7: s6 mean without the faulty readings
(def s6-clean-mean
  "Mean temperature of s6 excluding faulty readings"
  (let [temps (map :temp (remove #(> (:temp %) 60) (readings-of "s6")))]
    (/ (round (* 10 (/ (reduce + temps) (count temps)))) 10.0)))

(println "s6 mean without fault:" s6-clean-mean
         "with:" (get-in profiles ["s6" :mean]))`,
    ),
    reply(
      "Without the fault s6 averages 21.5 degrees, which fits neatly between s5 (20.9) and s7 (22.2). Next, gaps: every sensor should report each hour from 0 to 47 exactly once. I'll compute, for each sensor, the list of hours that are missing, which should be empty everywhere if the data is complete.",
      `;; Step 8: missing hours per sensor
(def gaps
  "sensor -> missing hours"
  (into (sorted-map)
        (for [[s rs] (group-by :sensor data/readings)]
          [s (vec (remove (set (map :hour rs)) (range 48)))])))

(println gaps)
(println "sensors with missing hours:" (count (filter (comp seq val) gaps)))`,
    ),
    reply(
      "No sensor misses an hour, so gaps can only come from readings flagged as not ok. s3 is the only sensor with such flags; I'll list the flagged hours to see whether they follow a pattern.",
      `;; Step 9: hours flagged not ok for s3
(def s3-flagged
  "Hours where s3 reports not ok"
  (mapv :hour (filter #(and (= "s3" (:sensor %)) (not (:ok %))) data/readings)))

(println "s3 flagged hours:" s3-flagged)
(println "differences:" (map - (rest s3-flagged) s3-flagged))`,
    ),
    reply(
      "s3 is flagged at hours 5, 22 and 39, exactly 17 hours apart, which looks like a periodic failure of the sensor rather than random noise. I'll check the temperatures it reported at those hours to see if the values themselves are plausible.",
      `;; Step 10: s3 temperatures at the flagged hours
(def flagged-set (set s3-flagged))

(doseq [r (filter #(contains? flagged-set (:hour %)) (readings-of "s3"))]
  (println "hour" (:hour r) "temp" (:temp r) "humidity" (:humidity r)))`,
    ),
    reply(
      "The flagged temperatures (18, 15.2 and 23) are within s3's normal range, so the values look plausible, but the sensor itself reports them as unreliable. I'll treat s3 as having gaps. To make sure no sensor is faulty on humidity either, I'll compute the humidity range per sensor.",
      `;; Step 11: humidity range per sensor
(def humidity-range
  "sensor -> [min max] humidity"
  (into (sorted-map)
        (for [[s rs] (group-by :sensor data/readings)]
          (let [hs (map :humidity rs)]
            [s [(apply min hs) (apply max hs)]]))))

(println humidity-range)`,
    ),
    reply(
      "Humidity stays between 40 and 55 for every sensor, so there is no humidity fault. As a plausibility check of the temperatures I'll compute the daily cycle: the mean temperature per hour of day over all sensors except s6 (to keep the fault out). A smooth curve that peaks at midday would confirm the readings are sane.",
      `;; Step 12: average daily cycle, s6 excluded
(def daily-cycle
  "hour of day -> mean temperature over the healthy sensors"
  (into (sorted-map)
        (for [[h rs] (group-by #(mod (:hour %) 24)
                               (remove #(= "s6" (:sensor %)) data/readings))]
          [h (/ (round (* 10 (/ (reduce + (map :temp rs)) (count rs)))) 10.0)])))

(println daily-cycle)`,
    ),
    reply(
      "The cycle is smooth, rising from about 16 degrees at night to a peak of 24.3 around hours 12–13. One more fault check: sudden jumps of more than 5 degrees between consecutive hours would reveal faults that a min/max profile can miss. I'll write a helper for that and run it on every sensor.",
      `;; Step 13: large jumps between consecutive hours
(defn jumps
  "Consecutive-hour temperature jumps above 5 degrees"
  [sensor]
  (vec (keep (fn [[a b]]
               (when (> (abs (- (:temp b) (:temp a))) 5)
                 [(:hour a) (:hour b)]))
             (partition 2 1 (readings-of sensor)))))

(println (into (sorted-map) (map (fn [s] [s (jumps s)]) (keys profiles))))`,
    ),
    reply(
      "Only s6 has jumps, entering the fault between hours 29 and 30 and leaving it between 33 and 34; all other sensors change smoothly. Now I can define the status rules: faulty if any reading is above 60 degrees, gaps if any reading is flagged as not ok, otherwise ok. I'll apply them to every sensor.",
      `;; Step 14: status per sensor
(defn status-of
  "ok, gaps or faulty"
  [sensor]
  (let [rs (readings-of sensor)]
    (cond
      (some #(> (:temp %) 60) rs)  "faulty"
      (some (complement :ok) rs)   "gaps"
      :else                        "ok")))

(println (into (sorted-map) (map (fn [s] [s (status-of s)]) (keys profiles))))`,
    ),
    reply(
      "The statuses match my findings: s3 has gaps, s6 is faulty and the other six are ok. For the report I'll use each sensor's profiled mean, except for s6 where the mean without the faulty hours is more meaningful. I'll build the report map and print one line per sensor.",
      `;; Step 15: the report
(def report
  "sensor -> mean and status"
  (into (sorted-map)
        (for [s (keys profiles)]
          [s {:mean   (if (= s "s6") s6-clean-mean (get-in profiles [s :mean]))
              :status (status-of s)}])))

(doseq [[s r] report]
  (println s r))`,
    ),
    reply(
      "The report looks complete. As a final check I'll confirm that it contains all eight sensors and that the status counts are what I expect: six ok, one with gaps and one faulty.",
      `;; Step 16: sanity check
(println "sensors:" (count report))
(println "statuses:" (frequencies (map :status (vals report))))`,
    ),
    reply(
      "All eight sensors are present, with six ok, one with gaps (s3) and one faulty (s6, whose mean excludes the faulty hours). Returning the report.",
      `;; Final answer
(return report)`,
    ),
  ],
};
