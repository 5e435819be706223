// code-search with replies of realistic length (see sales.ts in this folder).
import { reply, type Session } from "../../session.js";
import { codeSearch } from "../code-search.js";

export const codeSearchRealistic: Session = {
  ...codeSearch,
  replies: [
    reply(
      "I don't know the layout of this repository yet, so I'll start from the most specific term in the question: the status code 429. I'll search for it and print every hit with its file and line number. I'll also define a small helper to print hits consistently, since I expect to run many searches.",
      `;; Helper: print search hits as path:line text
(defn show-hits
  "Prints search hits, one per line"
  [hits]
  (doseq [h hits]
    (println (str (:path h) ":" (:line h)) (:text h))))

;; Step 1: where does 429 appear?
(def hits-429 (tool/search {:query "429"}))
(println (count hits-429) "hits")
(show-hits hits-429)`,
    ),
    reply(
      "There are five hits. src/api/rate-limit.ts is our own server answering 429, which is the opposite direction, while src/net/client.ts throws RateLimited when a response is 429: that's the outgoing side I'm after. The docs also say outgoing calls are retried on 429 and 5xx. Next I'll search for \"retry\" and group the hits by file to see where retry logic lives.",
      `;; Step 2: where is retry logic?
(def hits-retry (tool/search {:query "retry"}))

(println (count hits-retry) "hits in" (count (distinct (map :path hits-retry))) "files")
(doseq [[path hs] (sort-by key (group-by :path hits-retry))]
  (println path (mapv :line hs)))`,
    ),
    reply(
      "Retry-related code appears in eight files, mainly src/net/client.ts, src/net/retry.ts, src/net/backoff.ts and src/net/headers.ts, plus the job queue, the docs and a test. Since the client is where the 429 is detected, I'll read client.ts in full to understand how the request and the retry are wired together.",
      `;; Step 3: read the HTTP client
(def client-src
  "src/net/client.ts, numbered"
  (tool/read-file {:path "src/net/client.ts"}))

(println client-src)`,
    ),
    reply(
      "The client wraps both get and post in withRetry(..., this.opts.retry), and send() turns a 429 into a RateLimited error carrying parseRetryAfter(retry-after header), and a 5xx into a ServerError. So the retry decision is made in withRetry. I'll search for its definition.",
      `;; Step 4: where is withRetry defined?
(def with-retry-hits (tool/search {:query "function withRetry"}))
(show-hits with-retry-hits)`,
    ),
    reply(
      "withRetry is defined at line 5 of src/net/retry.ts. I'll read the whole file, because it should contain the retry loop, the policy type and the default values for attempts and delays.",
      `;; Step 5: read the retry module
(def retry-src
  "src/net/retry.ts, numbered"
  (tool/read-file {:path "src/net/retry.ts"}))

(println retry-src)`,
    ),
    reply(
      "This is the core: withRetry loops over attempts, rethrows when attempt >= policy.attempts or the error is neither RateLimited nor ServerError, and otherwise waits e.retryAfterMs when the server sent Retry-After, or computeBackoff(attempt, policy) when it did not. DEFAULT_RETRY is 5 attempts, baseMs 200 and maxMs 20000. I'll record these numbers and search for computeBackoff to find the formula.",
      `;; Step 6: the default policy, as read in retry.ts
(def policy
  "DEFAULT_RETRY as read in retry.ts"
  {:attempts 5 :base-ms 200 :max-ms 20000})

(def backoff-hits (tool/search {:query "computeBackoff"}))
(println "policy:" policy)
(show-hits backoff-hits)`,
    ),
    reply(
      "computeBackoff is imported in retry.ts and defined in src/net/backoff.ts at line 3. I'll read backoff.ts to see exactly how the wait is computed when there is no Retry-After header.",
      `;; Step 7: read the backoff computation
(def backoff-src
  "src/net/backoff.ts, numbered"
  (tool/read-file {:path "src/net/backoff.ts"}))

(println backoff-src)`,
    ),
    reply(
      "The cap grows exponentially as baseMs × 2^(attempt−1), limited to maxMs, and the wait is a random value between 0 and that cap: the \"full jitter\" strategy. Before concluding I want to rule out other code paths that retry on 429. The docs mentioned the job queue, so I'll read src/jobs/queue.ts.",
      `;; Step 8: does the job queue retry HTTP calls?
(def queue-src
  "src/jobs/queue.ts, numbered"
  (tool/read-file {:path "src/jobs/queue.ts"}))

(println queue-src)`,
    ),
    reply(
      "The queue retries failed jobs up to MAX_JOB_RETRIES = 3 times, but that is job-level, not HTTP-level, so it is not part of the answer. To describe the Retry-After case correctly, I'll read src/net/headers.ts where parseRetryAfter is defined.",
      `;; Step 9: how is Retry-After parsed?
(def headers-src
  "src/net/headers.ts, numbered"
  (tool/read-file {:path "src/net/headers.ts"}))

(println headers-src)`,
    ),
    reply(
      "Retry-After is accepted either as a number of seconds (converted to milliseconds) or as an HTTP date (converted to the remaining time). To make sure there is no second backoff implementation elsewhere, I'll search more broadly for \"backoff\" and list the files it appears in. I'll restate the printing helper here so this step does not depend on it.",
      `;; Restated helper
(defn show-hits
  "Prints search hits, one per line"
  [hits]
  (doseq [h hits]
    (println (str (:path h) ":" (:line h)) (:text h))))

;; Step 10: any other backoff implementation?
(def backoff-any (tool/search {:query "backoff"}))
(println "files:" (sort (distinct (map :path backoff-any))))
(show-hits backoff-any)`,
    ),
    reply(
      "Only retry.ts and backoff.ts mention backoff in code, so there is a single implementation. Next I'll confirm the attempt count from a second source: the tests. Searching for \"attempts\" should find both the policy and any test about giving up.",
      `;; Step 11: confirm the number of attempts
(def tests (tool/search {:query "attempts"}))
(show-hits tests)
(println "test files:" (count (filter #(clojure.string/starts-with? (:path %) "test/") tests)))`,
    ),
    reply(
      "The test \"gives up after 5 attempts\" agrees with DEFAULT_RETRY. One more thing could change the numbers: callers passing their own policy through the client options. I'll search for opts.retry and for ClientOptions, and print the hits of both.",
      `;; Step 12: does anyone pass a custom policy?
(def policy-uses (tool/search {:query "opts.retry"}))
(def client-options (tool/search {:query "ClientOptions"}))

(println "policy uses:" (count policy-uses) "ClientOptions mentions:" (count client-options))
(show-hits (concat policy-uses client-options))`,
    ),
    reply(
      "opts.retry is only forwarded by the client, and ClientOptions appears only in the client's constructor; nothing in the repository builds a custom policy, so DEFAULT_RETRY applies. I'll read the docs page on retries to make sure the description I give matches what the documentation promises.",
      `;; Step 13: the documentation
(def docs
  "docs/retries.md, numbered"
  (tool/read-file {:path "docs/retries.md"}))

(println docs)`,
    ),
    reply(
      "The docs match the code: retries on 429 and 5xx, Retry-After honoured when present, exponential backoff otherwise. Finally I'll read the errors module to confirm that RateLimited is the only error type for 429 and what ServerError covers, so the answer names the right conditions.",
      `;; Step 14: the error types
(def errors-src
  "src/net/errors.ts, numbered"
  (tool/read-file {:path "src/net/errors.ts"}))

(println errors-src)`,
    ),
    reply(
      "RateLimited carries an optional retryAfterMs and ServerError carries the status, as expected. I have the whole chain: client.ts detects the 429, retry.ts decides the wait in withRetry, and backoff.ts computes a full-jitter exponential wait when there is no Retry-After. I'll assemble the answer from the recorded policy and print it once before returning.",
      `;; Step 15: assemble the answer
(def answer
  "The retry behaviour for 429 responses"
  {:file     "src/net/retry.ts"
   :function "withRetry"
   :strategy (str "Retry-After when present (seconds or HTTP date), otherwise computeBackoff in src/net/backoff.ts: "
                  "full jitter, random wait between 0 and min(maxMs, baseMs * 2^(attempt-1))")
   :attempts (:attempts policy)
   :base-ms  (:base-ms policy)
   :max-ms   (:max-ms policy)})

(println answer)`,
    ),
    reply(
      "The answer is complete and consistent with the code, the tests and the docs. Returning it.",
      `;; Final answer
(return answer)`,
    ),
  ],
};
