// error-recovery with replies of realistic length (see sales.ts in this folder): the same
// mistakes on the same turns, written the way a model writes them.
import { reply, type Session } from "../../session.js";
import { recoverySession } from "../recovery.js";

export const recoverySessionRealistic: Session = {
  ...recoverySession,
  replies: [
    reply(
      "The task needs per-team statistics and a list of long-tenured employees. Before writing any aggregation I'll look at the shape of the employee records: how many there are and what one record contains, so I use the right keys and know how dates and skills are encoded.",
      `;; Step 1: inspect the employee records
(println (count data/employees) "employees")
(println "example:" (first data/employees))
(println "keys:" (keys (first data/employees)))`,
    ),
    reply(
      "There are 40 employees with :team, :salary, :started (a date string) and :skills. I'll group the employees by department and print the headcount of each group, then print a few checks on the grouping: the total, the number of groups, the first group's key and a prefix of it.",
      `;; Step 2: group by department and count
(def by-team
  "Employees per department"
  (group-by :department data/employees))

(doseq [[team es] by-team]
  (println team (count es)))

;; Checks on the grouping
(println (reduce + (map count (vals by-team)))
         (count (keys by-team))
         (first (first by-team))
         (:name (first (second (first by-team))))
         (subs (first (keys by-team)) 0 2))`,
    ),
    reply(
      "The grouping put all 40 employees under nil: the records have no :department key, the field is called :team, as the example record showed. subs then failed on the nil key. I'll group by :team instead and print the headcount per team.",
      `;; Step 2 (fixed): group by the :team key
(def by-team
  "Employees per team"
  (group-by :team data/employees))

(doseq [[team es] (sort-by key by-team)]
  (println team (count es)))
(println "total:" (reduce + (map count (vals by-team))))`,
    ),
    reply(
      "There are four teams of ten employees each: data, mobile, platform and web. Next I need the median salary per team. There is no median builtin that I can rely on, so I'll write a helper that sorts the values and takes the middle element, or the average of the two middle elements for an even count.",
      `;; Step 3: median salary per team
(defn median-of
  "Median of a collection of numbers"
  [xs]
  (let [s (vec (sort xs))
        n (count s)]
    (if (odd? n)
      (nth s (quot n 2))
      (/ (+ (nth s (dec (quot n 2))) (nth s (quot n 2))) 2))))

(def medians
  "team -> median salary"
  (update-vals by-team #(median-of (map :salary %))))

(println medians)
(println "check:" (median-of [1 3 2]) (median-of [4 1 3 2]))`,
    ),
    reply(
      "The medians range from about 74,000 (data) to 80,000 (mobile), and the helper checks out on small inputs. Now the most common skill per team. Skills are a comma-separated string, so I'll split each string, count the skills per team with frequencies, and print the top skill of each team together with the number of distinct skills.",
      `;; Step 4: skill frequencies per team
(def skill-counts
  "team -> skill -> count"
  (update-vals by-team
               (fn [es] (frequencies (mapcat #(clojure.string/split (:skills %) #",\\s*") es)))))

(println (update-vals skill-counts #(first (sort-by val > %))))
(println (update-vals skil-counts count))`,
    ),
    reply(
      "The program failed on an undefined symbol: I wrote skil-counts instead of skill-counts in the last line, so nothing from it was stored. While fixing the typo I'll also drop empty strings after splitting, because an employee with no skills would otherwise contribute a skill named \"\".",
      `;; Step 4 (fixed): skill frequencies per team, empty skills removed
(def skill-counts
  "team -> skill -> count"
  (update-vals by-team
               (fn [es]
                 (->> es
                      (mapcat #(clojure.string/split (:skills %) #",\\s*"))
                      (remove empty?)
                      frequencies))))

(println (update-vals skill-counts #(first (sort-by val > %))))
(println (update-vals skill-counts count))`,
    ),
    reply(
      "The most common skills are go for platform and mobile, python for data and react for web, and each team has five or six distinct skills. Ties are possible, so I'll pick the top skill with a deterministic tie-break (highest count, then alphabetical) and print a quick check of the result.",
      `;; Step 5: top skill per team, ties broken alphabetically
(def top-skill
  "team -> most common skill"
  (update-vals skill-counts
               (fn [m] (key (first (sort-by (juxt (comp - val) key) m))))))

(println "teams:" (count top-skill)
         "platform:" (+ (count top-skill) (top-skill "platform")))`,
    ),
    reply(
      "The check itself was wrong: I added the team count to the skill name, which is a string, so + failed with a type error and the definition was discarded. The top-skill computation was fine; I'll define it again and print the whole map instead of the broken check.",
      `;; Step 5 (fixed): top skill per team
(def top-skill
  "team -> most common skill"
  (update-vals skill-counts
               (fn [m] (key (first (sort-by (juxt (comp - val) key) m))))))

(println top-skill)`,
    ),
    reply(
      "The top skills are go (platform), python (data), go (mobile) and react (web). The last part is the veterans: employees who started before 2015. The start date is a string like \"2019-08-01\", so I'll extract the year with a regular expression, parse it as a number and filter.",
      `;; Step 6: employees who started before 2015
(defn start-year [e]
  (parse-long (re-find #"^(\\d{4" (:started e))))

(def veterans
  (filterv #(< (start-year %) 2015) data/employees))

(println (count veterans) "veterans")`,
    ),
    reply(
      "The regular expression was invalid: the quantifier {4 is missing its closing brace and the group is not closed. Also, re-find with a capture group returns a vector of the match and the group, so I need the second element. I'll fix both and print the number of veterans with a few names.",
      `;; Step 6 (fixed): parse the year correctly
(defn start-year
  "Year an employee started"
  [e]
  (parse-long (second (re-find #"^(\\d{4})" (:started e)))))

(def veterans
  "Employees who started before 2015"
  (filterv #(< (start-year %) 2015) data/employees))

(println (count veterans) (mapv :name (take 5 veterans)))
(println "years:" (sort (map start-year veterans)))`,
    ),
    reply(
      "Five employees started before 2015. I now have headcounts, medians and top skills, so I'll assemble the per-team map in the expected shape and print it once to check the numbers before returning.",
      `;; Step 7: the per-team report
(def teams
  "team -> headcount, median salary and top skill"
  (into {}
        (for [[team es] by-team]
          [team {:headcount (count es)
                 :median    (get medians team)
                 :skill     (get top-skill team)}])))

(doseq [[team v] (sort-by key teams)]
  (println team v))`,
    ),
    reply(
      "The numbers are consistent with the earlier steps: ten people per team, the medians computed before, and the top skills. Returning the teams and the names of the veterans.",
      `;; Final answer
(return {:teams teams
         :veterans (mapv :name veterans)})`,
    ),
  ],
};
