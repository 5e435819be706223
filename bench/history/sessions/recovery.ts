// Error recovery: a model that makes the mistakes models make (a wrong key, a misspelled
// name, a function called with the wrong arguments, a bad regex, a type mix-up) and
// recovers from each using the error feedback.
import { z } from "zod";
import { random, reply, type Session } from "../session.js";

const rand = random(3);
const employees = Array.from({ length: 40 }, (_, i) => ({
  id: i + 1,
  name: `Employee ${i + 1}`,
  team: ["platform", "data", "mobile", "web"][i % 4],
  salary: 52000 + Math.floor(rand() * 60000),
  started: `20${String(12 + Math.floor(rand() * 13)).padStart(2, "0")}-0${1 + Math.floor(rand() * 9)}-01`,
  skills: ["go", "sql", "kotlin", "react", "python", "k8s"].filter(() => rand() < 0.35).join(", "),
}));

export const recoverySession: Session = {
  name: "error-recovery",
  kind: "error-recovery",
  prompt: "For each team, report the headcount, the median salary, and the most common skill. Also list the employees who started before 2015.",
  tools: {},
  output: z.object({ teams: z.record(z.string(), z.object({ headcount: z.number(), median: z.number(), skill: z.string() })), veterans: z.array(z.string()) }),
  context: { employees },
  failingTurns: [2, 5, 7, 9],
  replies: [
    reply(
      "I'll look at the shape of the employee records first.",
      `(println (count data/employees) "employees")
(println (first data/employees))`,
    ),
    reply(
      "Records have team, salary, started and a comma-separated skills string. I'll group by team and count.",
      `(def by-team (group-by :department data/employees))
(doseq [[t es] by-team] (println t (count es)))
(println (reduce + (map count (vals by-team))) (count (keys by-team)) (first (first by-team)) (:name (first (second (first by-team)))) (subs (first (keys by-team)) 0 2))`,
    ),
    reply(
      "The key is :team, not :department: grouping by a missing key put everyone under nil and subs failed on it. Fixing the key.",
      `(def by-team "Employees per team" (group-by :team data/employees))
(doseq [[t es] by-team] (println t (count es)))`,
    ),
    reply(
      "Four teams of ten. Next the median salary per team; I'll write a median helper.",
      `(defn median-of "Median of a collection of numbers" [xs]
  (let [s (vec (sort xs)) n (count s)]
    (if (odd? n) (nth s (quot n 2)) (/ (+ (nth s (dec (quot n 2))) (nth s (quot n 2))) 2))))
(def medians (update-vals by-team #(median-of (map :salary %))))
(println medians)`,
    ),
    reply(
      "Now the most common skill per team. Skills are a string, so I'll split them and count.",
      `(def skill-counts (update-vals by-team (fn [es] (frequencies (mapcat #(split (:skills %) #",\\s*") es)))))
(println (update-vals skill-counts #(first (sort-by val > %))))
(println (update-vals skil-counts count))`,
    ),
    reply(
      "A typo: skil-counts instead of skill-counts. Printing the corrected lines, and checking for empty skill strings which would count as a skill \"\".",
      `(def skill-counts "team -> skill -> count" (update-vals by-team (fn [es] (frequencies (remove empty? (mapcat #(split (:skills %) #",\\s*") es))))))
(println (update-vals skill-counts #(first (sort-by val > %))))
(println (update-vals skill-counts count))`,
    ),
    reply(
      "I'll take the top skill of each team, breaking ties alphabetically so the result is deterministic.",
      `(def top-skill (update-vals skill-counts (fn [m] (key (first (sort-by (juxt (comp - val) key) m))))))
(println "teams:" (count top-skill) "platform:" (+ (count top-skill) (top-skill "platform")))`,
    ),
    reply(
      "I added a count to a skill name, which is a string: a type error. Printing the whole map instead.",
      `(def top-skill "team -> most common skill" (update-vals skill-counts (fn [m] (key (first (sort-by (juxt (comp - val) key) m))))))
(println top-skill)`,
    ),
    reply(
      "Now the veterans: people who started before 2015. The start date is a string, so I'll parse the year with a regex.",
      `(defn start-year [e] (parse-long (re-find #"^(\\d{4" (:started e))))
(def veterans (filterv #(< (start-year %) 2015) data/employees))
(println (count veterans))`,
    ),
    reply(
      "The regex was missing a closing brace. Also re-find with a group returns a vector, so I'll take the group explicitly.",
      `(defn start-year "Year an employee started" [e] (parse-long (second (re-find #"^(\\d{4})" (:started e)))))
(def veterans "Employees who started before 2015" (filterv #(< (start-year %) 2015) data/employees))
(println (count veterans) (mapv :name (take 5 veterans)))`,
    ),
    reply(
      "I'll assemble the per-team map and print it once to check the numbers before returning.",
      `(def teams (into {} (for [[t es] by-team] [t {:headcount (count es) :median (get medians t) :skill (get top-skill t)}])))
(doseq [[t v] teams] (println t v))`,
    ),
    reply("The numbers look right.", "(return {:teams teams :veterans (mapv :name veterans)})"),
  ],
};
