// Code search over a small source tree (the reference project's "code scout"): grep broadly,
// narrow the pattern and the path, read the few files that matter, and answer from them.
import { z } from "zod";
import { tool } from "../src/agent/tools.js";
import { repo } from "./data/repo.js";
import { defineExample } from "./types.js";

const MAX_HITS = 50;

const grep = tool({
  description: `Searches the repository for a regular expression (case-insensitive), line by line. Returns up to ${MAX_HITS} hits with file, 1-based line and the line's text.`,
  input: z.object({
    pattern: z.string().min(1).describe("JavaScript regular expression"),
    path: z.string().optional().describe("Only files under this folder"),
  }),
  output: z.array(z.object({ file: z.string(), line: z.number().int(), text: z.string() })),
  run: ({ pattern, path }) => {
    let re: RegExp;
    try {
      re = new RegExp(pattern, "i");
    } catch {
      throw new Error(`invalid pattern: ${pattern}`);
    }
    const hits: Array<{ file: string; line: number; text: string }> = [];
    for (const [file, text] of Object.entries(repo)) {
      if (path !== undefined && !file.startsWith(path.endsWith("/") ? path : `${path}/`)) continue;
      text.split("\n").forEach((line, i) => {
        if (hits.length < MAX_HITS && re.test(line)) hits.push({ file, line: i + 1, text: line.trim() });
      });
    }
    return hits;
  },
});

const readFile = tool({
  description: "The full text of one file, each line prefixed with its number.",
  input: z.object({ path: z.string().describe("File path, e.g. \"src/http/client.ts\"") }),
  output: z.object({ path: z.string(), lines: z.number().int(), text: z.string() }),
  run: ({ path }) => {
    const text = repo[path];
    if (text === undefined) throw new Error(`no such file: ${path}`);
    const lines = text.replace(/\n$/, "").split("\n");
    return { path, lines: lines.length, text: lines.map((l, i) => `${i + 1}: ${l}`).join("\n") };
  },
});

export const codeSearch = defineExample({
  name: "code-search",
  title: "Finding code with grep and read-file",
  summary: "Grep broadly, narrow the pattern and folder, read two files in parallel, and answer with the file, the function and a constant read from the source.",
  prompt:
    "Where is the delay between HTTP request retries computed, and what is the longest delay it can produce? Return :file and :function (where it is computed), " +
    ":maxDelayMs, and :files (every file you read to confirm it).",
  tools: { grep, "read-file": readFile },
  output: z.object({ file: z.string(), function: z.string(), maxDelayMs: z.number().int(), files: z.array(z.string()).min(1) }),
  maxTurns: 6,
  context: {},
  replies: [
    `I'll grep for "retry" to see where retries are handled.

\`\`\`clojure
(def retry-hits (tool/grep {:pattern "retry"}))
(println (count retry-hits) "hits")
(doseq [[f hs] (sort-by key (group-by :file retry-hits))] (println f (count hs)))
\`\`\``,
    `The jobs code has its own retries, unrelated to HTTP. I'll narrow to src/http and look for the delay computation.

\`\`\`clojure
(def delay-hits (tool/grep {:pattern "backoff|delay" :path "src/http"}))
(doseq [h delay-hits] (println (str (:file h) ":" (:line h)) (:text h)))
\`\`\``,
    `retry.ts waits for backoffDelay(attempt), defined in backoff.ts. I'll read both files to confirm.

\`\`\`clojure
(def sources "Text of the retry loop and the backoff module"
  (pmap #(tool/read-file {:path %}) ["src/http/backoff.ts" "src/http/retry.ts"]))
(doseq [s sources]
  (println "==" (:path s) (:lines s) "lines")
  (println (:text s)))
\`\`\``,
    `backoffDelay computes base * 2^(attempt-1), capped at MAX_DELAY_MS and scaled by a random jitter in [0, 1), so the longest delay is the cap.

\`\`\`clojure
(def backoff-src (:text (first (filter #(= (:path %) "src/http/backoff.ts") sources))))
(return {:file "src/http/backoff.ts"
         :function "backoffDelay"
         :maxDelayMs (parse-long (second (re-find #"MAX_DELAY_MS = (\\d+)" backoff-src)))
         :files (mapv :path sources)})
\`\`\``,
  ],
  expected: {
    file: "src/http/backoff.ts",
    function: "backoffDelay",
    maxDelayMs: Number(/MAX_DELAY_MS = (\d+)/.exec(repo["src/http/backoff.ts"])?.[1]),
    files: ["src/http/backoff.ts", "src/http/retry.ts"],
  },
});
