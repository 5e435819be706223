// Sessions the round-2 bench never tried (issue 20): 30 turns that each print eight wide rows
// (the way models look at rows), a plain 30-turn session whose answer depends on facts
// found early, an accumulator redefined every turn, and two facts defined early, pushed out
// by wide output and read again ten turns later (then one is redefined).
import { z } from "zod";
import { pick, random, reply, type Session } from "../session.js";

const rand = random(20);
const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Perth", "Tunis", "Dakar", "Lima"];
const statuses = ["open", "shipped", "returned", "held"];
const orderRows = Array.from({ length: 240 }, (_, i) => ({
  id: i + 1,
  customer: `customer-${1000 + Math.floor(rand() * 9000)}`,
  city: pick(rand, cities),
  status: pick(rand, statuses),
  total: Math.round(rand() * 90_000) / 100,
  items: 1 + Math.floor(rand() * 12),
  note: pick(rand, ["gift wrap", "leave at door", "call first", "fragile", "none"]),
  placed: `2026-${String(1 + Math.floor(rand() * 9)).padStart(2, "0")}-${String(1 + Math.floor(rand() * 28)).padStart(2, "0")}`,
}));

/**
 * `turns` turns that each print the next `rows` orders as one wide line, then count: wide-lines-30
 * is (8, 30); the println budget sweep (bench:history) varies both.
 */
export function widePages(rows: number, turns: number): Session {
  const many = rows === 8 ? "eight" : String(rows);
  const pages = Array.from({ length: turns - 1 }, (_, k) => reply(`Page ${k + 1}: the next ${many} orders.`, `(println (take ${rows} (drop ${(k * rows) % 240} data/orders)))`));
  return {
    name: rows === 8 && turns === 30 ? "wide-lines-30" : `wide-${rows}x${turns}`,
    kind: "exploration",
    prompt: `Page through the orders ${many} at a time and return how many are held.`,
    tools: {},
    output: z.number(),
    context: { orders: orderRows },
    replies: [...pages, reply("Now the count.", `(return (count (filter #(= (:status %) "held") data/orders)))`)],
  };
}

export const wideLines: Session = widePages(8, 30);

const steps: string[] = [
  `(println "orders:" (count data/orders) "keys:" (keys (first data/orders)))`,
  `(def retry-limit "Job-level retries, not part of the answer" 3)\n(def threshold "Orders above this total are large" 750)\n(println "threshold" threshold)`,
  `(def large (filter #(> (:total %) threshold) data/orders))\n(println "large:" (count large))`,
];
for (let k = 0; k < 26; k++) {
  const city = cities[k % cities.length];
  steps.push(
    k % 3 === 0
      ? `(def c${k} (count (filter #(= (:city %) "${city}") large)))\n(println "${city} large:" c${k})`
      : k % 3 === 1
        ? `(println "${city}" (frequencies (map :status (filter #(= (:city %) "${city}") data/orders))))`
        : `(def s${k} (reduce + (map :items (filter #(= (:city %) "${city}") data/orders))))`,
  );
}
steps.push(`(return {:large (count large) :threshold threshold})`);

export const thirtyTurns: Session = {
  name: "thirty-turns",
  kind: "exploration",
  prompt: "Count the large orders (over the threshold you set) per city, then return the number of large orders and the threshold.",
  tools: {},
  output: z.object({ large: z.number(), threshold: z.number() }),
  context: { orders: orderRows },
  replies: steps.map((s, i) => reply(`Step ${i + 1}.`, s)),
};

const accSteps: string[] = [`(def acc [])\n(def seen #{})\n(println "start")`];
for (let k = 0; k < 18; k++) {
  accSteps.push(`(def acc (conj acc (:total (nth data/orders ${k * 7}))))\n(def seen (conj seen (:city (nth data/orders ${k * 7}))))\n(println "acc" (count acc) "sum" (round (reduce + acc)) "cities" (count seen))`);
}
accSteps.push(`(return {:sum (round (reduce + acc)) :cities (count seen)})`);

export const accumulator: Session = {
  name: "accumulator",
  kind: "exploration",
  prompt: "Add up the totals of every seventh order, one at a time, tracking the cities seen; return the sum and the number of cities.",
  tools: {},
  output: z.object({ sum: z.number(), cities: z.number() }),
  context: { orders: orderRows },
  replies: accSteps.map((s, i) => reply(`Adding order ${i}.`, s)),
};

const page = (k: number): string => `(println (take 8 (drop ${k * 8} data/orders)))`;
const lateSteps: string[] = [
  `(def vip "The answer's cohort: the six largest orders' customers" (mapv #(str "VIP-" (:customer %)) (take 6 (sort-by :total > data/orders))))\n(println "vip" vip)`,
  `(def watch {:cities ["Lisbon" "Oslo" "Quito"] :status "held" :min-total 400 :label "priority review list"})\n(println "watch" watch)`,
  ...Array.from({ length: 10 }, (_, k) => page(k)),
  `(def flagged (filter #(and (contains? (set (:cities watch)) (:city %)) (= (:status %) (:status watch)) (> (:total %) (:min-total watch))) data/orders))\n(def vip-set (set vip))\n(println "flagged" (count flagged) "vip" (count vip-set))`,
  ...Array.from({ length: 5 }, (_, k) => page(10 + k)),
  `(def vip (mapv #(str "VIP2-" (:customer %)) (take 3 (sort-by :items > data/orders))))`,
  page(15),
  page(16),
  `(return {:flagged (count flagged) :vip (count vip) :label (:label watch)})`,
];

/** The facts the answer depends on are defined in turns 1 and 2 and read in turn 13; vip is redefined in turn 19. */
export const factsReadLate: Session = {
  name: "facts-read-late",
  kind: "exploration",
  prompt: "Find the orders on the watch list and the VIP cohort, page through the orders, and return the flagged count, the cohort size and the watch label.",
  tools: {},
  output: z.object({ flagged: z.number(), vip: z.number(), label: z.string() }),
  context: { orders: orderRows },
  replies: lateSteps.map((s, i) => reply(`Step ${i + 1}.`, s)),
};

export const round3Sessions: readonly Session[] = [wideLines, thirtyTurns, accumulator, factsReadLate];
