// Searching a small policy corpus with query refinement: the agent searches one topic,
// then the other, intersects the hits, reads the candidates, and returns the one policy
// that covers both (one distractor mentions both words only to point elsewhere).
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { policies } from "./data/policies.js";
import { defineExample } from "./types.js";

const terms = (query: string): string[] => query.toLowerCase().split(/[^a-z0-9-]+/).filter((t) => t.length >= 3);

function occurrences(text: string, term: string): number {
  let n = 0;
  for (let i = text.indexOf(term); i !== -1; i = text.indexOf(term, i + term.length)) n++;
  return n;
}

/** Keyword search: term occurrences, title hits weighted 3x; ties by id. */
function searchPolicies(query: string, limit: number) {
  const ts = terms(query);
  return policies
    .map((p) => {
      const title = p.title.toLowerCase();
      const text = p.text.toLowerCase();
      const score = ts.reduce((s, t) => s + 3 * occurrences(title, t) + occurrences(text, t), 0);
      const sentence = p.text.split(/(?<=\.) /).find((s) => ts.some((t) => s.toLowerCase().includes(t))) ?? "";
      return { id: p.id, title: p.title, score, snippet: sentence.length > 140 ? `${sentence.slice(0, 137)}...` : sentence };
    })
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, limit);
}

const search = tool({
  description: "Keyword search over the company policy documents. Returns the best matches with a relevance score and the first matching sentence.",
  input: z.object({
    query: z.string().min(1).describe("Words to look for"),
    limit: z.number().int().min(1).max(20).default(5).describe("Most hits returned (default 5)"),
  }),
  output: z.array(z.object({ id: z.string(), title: z.string(), score: z.number(), snippet: z.string() })),
  run: ({ query, limit }) => searchPolicies(query, limit),
});

const fetchPolicy = tool({
  description: "The full text of one policy document by id.",
  input: z.object({ id: z.string().describe("Policy id, e.g. \"HR-210\"") }),
  output: z.object({ id: z.string(), title: z.string(), updated: z.string(), text: z.string() }),
  run: ({ id }) => {
    const p = policies.find((d) => d.id === id);
    if (!p) throw new Error(`no policy with id ${id}`);
    return { ...p };
  },
});

const answerId = "WFH-2024-REIMB";
const answer = policies.find((p) => p.id === answerId);

export const policySearch = defineExample({
  name: "policy-search",
  title: "Policy search with query refinement",
  summary: "Search one topic, then the other, intersect the hit sets, read the candidates, and return the single policy covering both.",
  prompt: "Find the policy document that covers both remote work and the reimbursement of expenses. Return its id and title.",
  tools: { search, fetch: fetchPolicy },
  output: z.object({ id: z.string(), title: z.string() }),
  maxTurns: 6,
  context: {},
  replies: [
    `I'll search for each topic separately and look at what comes back, starting with remote work.

\`\`\`clojure
(def remote-hits (tool/search {:query "remote work"}))
(println (count remote-hits) "hits for remote work:")
(doseq [h remote-hits] (println (:id h) "|" (:title h) "|" (:score h) "|" (:snippet h)))
\`\`\``,
    `Several documents are about remote work, but the titles do not say which covers reimbursement. I'll search for reimbursement and intersect the ids.

\`\`\`clojure
(def reimb-hits (tool/search {:query "reimbursement"}))
(doseq [h reimb-hits] (println (:id h) "|" (:title h) "|" (:score h)))
(def both "Ids found by both searches" (clojure.set/intersection (set (map :id remote-hits)) (set (map :id reimb-hits))))
(println "In both:" (sort both))
\`\`\``,
    `Three candidates. I'll read them and print the sentences that mention remote work or reimbursement.

\`\`\`clojure
(def candidates "Full text of the candidate policies" (mapv #(tool/fetch {:id %}) (sort both)))
(doseq [d candidates]
  (println "==" (:id d) "-" (:title d))
  (doseq [s (str/split (:text d) #"\\. ")]
    (when (re-find #"(?i)remote|reimburs" s) (println "  *" s))))
\`\`\``,
    `HR-210 only refers to WFH-2024-REIMB for reimbursement, and HR-115 excludes remote roles. WFH-2024-REIMB covers home office expense reimbursement for remote employees.

\`\`\`clojure
(return (select-keys (first (filter #(= (:id %) "WFH-2024-REIMB") candidates)) [:id :title]))
\`\`\``,
  ],
  expected: { id: answerId, title: answer?.title },
});
