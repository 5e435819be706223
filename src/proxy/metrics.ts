// Counters and histograms in the Prometheus text format, kept in plain maps: the request path
// adds to a number and observes into a fixed bucket array, nothing more.

const BUCKETS_MS = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];

class Histogram {
  readonly counts = new Array<number>(BUCKETS_MS.length).fill(0);
  sum = 0;
  count = 0;

  observe(ms: number): void {
    for (let i = 0; i < BUCKETS_MS.length; i++) if (ms <= BUCKETS_MS[i]) this.counts[i]++;
    this.sum += ms / 1000;
    this.count++;
  }
}

const HELP: Record<string, string> = {
  ptc_proxy_requests_total: "Requests, each counted once when it ends, by route (chat, other, admin, local, rejected) and status class.",
  ptc_proxy_dry_runs_total: "Dry-run compactions asked for through the admin API (not counted as compactions).",
  ptc_proxy_upstream_seconds: "Time from sending to the upstream to its last byte.",
  ptc_proxy_overhead_seconds: "Time the proxy itself added to a request (total minus upstream time).",
  ptc_proxy_compaction_seconds: "Time compaction took before forwarding.",
  ptc_proxy_compactions_total: "Compactions by outcome: triggered, succeeded, failed, skipped.",
  ptc_proxy_compaction_tokens_before_total: "Prompt tokens before the compactions that succeeded.",
  ptc_proxy_compaction_tokens_after_total: "Prompt tokens after the compactions that succeeded.",
  ptc_proxy_context_retries_total: "Requests retried once after compacting, on an upstream context-length error.",
  ptc_proxy_upstream_truncation_total: "Responses whose reported prompt tokens were far below the estimate (the upstream cut the prompt).",
  ptc_proxy_upstream_errors_total: "Upstream failures by kind: unreachable, timeout, malformed, status, stream_cut, too_large.",
  ptc_proxy_conversations: "Conversations currently stored.",
  ptc_proxy_body_bytes_in_flight: "Bytes of request bodies held now (as read, and again decoded), against maxInFlightBodyBytes.",
  ptc_proxy_body_bytes_limit: "maxInFlightBodyBytes: past it, requests are refused with 503 body_budget_exceeded.",
  ptc_proxy_tokens_total: "Tokens the upstream reported, by model and kind (prompt, completion).",
  ptc_proxy_estimated_prompt_tokens_total: "Prompt tokens of answered requests whose upstream reported no usage, counted locally.",
  ptc_proxy_tenant_tokens_total: "Tokens the upstream reported, by tenant (a credential hash or a virtual key's name) and kind.",
  ptc_proxy_compaction_deadline_total: "Requests sent without waiting for a compaction that passed the deadline (it finishes in the background).",
  ptc_proxy_spend_changes_lost_total: "Virtual key spend changes given up on unsettled (PostgreSQL: over 1000 transactions of unknown outcome): each leaves a key's spend off by its tokens.",
};

const TYPES: Record<string, string> = { ptc_proxy_upstream_seconds: "histogram", ptc_proxy_overhead_seconds: "histogram", ptc_proxy_compaction_seconds: "histogram", ptc_proxy_conversations: "gauge", ptc_proxy_body_bytes_in_flight: "gauge", ptc_proxy_body_bytes_limit: "gauge" };

/**
 * Model names kept as label values. The name is the client's, and an upstream that serves any
 * name (llama.cpp's server does) would otherwise let each new one add series without end.
 */
export const MAX_MODEL_LABELS = 100;
/**
 * Credential tenants kept as label values, for the same reason: an upstream that takes any key
 * (Ollama, llama.cpp) lets every new key reach the usage. Virtual keys, named in the config, all are.
 */
export const MAX_TENANT_LABELS = 100;

/** `value` as a label: one of the first `max` seen, else "other" (a bound on the series it adds). */
function labelled(seen: Set<string>, value: string, max: number): string {
  if (!seen.has(value) && seen.size < max) seen.add(value);
  return seen.has(value) ? value : "other";
}

export class Metrics {
  private readonly counters = new Map<string, number>();
  private readonly histograms = new Map<string, Histogram>();
  private readonly models = new Set<string>();
  private readonly tenants = new Set<string>();

  inc(name: string, labels = "", by = 1): void {
    const key = labels === "" ? name : `${name}{${labels}}`;
    this.counters.set(key, (this.counters.get(key) ?? 0) + by);
  }

  /** Prompt and completion tokens the upstream reported, by model and by tenant. */
  tokens(model: string, tenant: string, prompt: number, completion: number): void {
    // Label values are client-chosen text: quotes, backslashes and newlines would break the format.
    const m = model.length > 128 ? model.slice(0, 128) : model;
    const named = m.replace(/[\\"\n]/g, "_");
    const label = labelled(this.models, named, MAX_MODEL_LABELS);
    this.inc("ptc_proxy_tokens_total", `model="${label}",kind="prompt"`, prompt);
    this.inc("ptc_proxy_tokens_total", `model="${label}",kind="completion"`, completion);
    const who = tenant.startsWith("vk-") ? tenant : labelled(this.tenants, tenant, MAX_TENANT_LABELS);
    this.inc("ptc_proxy_tenant_tokens_total", `tenant="${who}",kind="prompt"`, prompt);
    this.inc("ptc_proxy_tenant_tokens_total", `tenant="${who}",kind="completion"`, completion);
  }

  /** The current value of a counter (tests, status). */
  get(name: string, labels = ""): number {
    return this.counters.get(labels === "" ? name : `${name}{${labels}}`) ?? 0;
  }

  observe(name: string, ms: number): void {
    let h = this.histograms.get(name);
    if (h === undefined) this.histograms.set(name, (h = new Histogram()));
    h.observe(ms);
  }

  /** The exposition text; `gauges` are sampled now. */
  render(gauges: Record<string, number>): string {
    const lines: string[] = [];
    const byName = new Map<string, string[]>();
    for (const [key, value] of this.counters) {
      const name = key.split("{")[0];
      if (!byName.has(name)) byName.set(name, []);
      byName.get(name)?.push(`${key} ${value}`);
    }
    for (const [name, value] of Object.entries(gauges)) byName.set(name, [`${name} ${value}`]);
    for (const [name, samples] of byName) lines.push(`# HELP ${name} ${HELP[name] ?? name}`, `# TYPE ${name} ${TYPES[name] ?? "counter"}`, ...samples);
    for (const [name, h] of this.histograms) {
      lines.push(`# HELP ${name} ${HELP[name] ?? name}`, `# TYPE ${name} histogram`);
      BUCKETS_MS.forEach((b, i) => lines.push(`${name}_bucket{le="${b / 1000}"} ${h.counts[i]}`));
      lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
    }
    return lines.join("\n") + "\n";
  }
}
