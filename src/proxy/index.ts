// The compaction proxy: an OpenAI-compatible server that compacts each conversation before
// forwarding it upstream.
export { startProxy, ProxyStartError, type ProxyOptions, type RunningProxy } from "./server.js";
