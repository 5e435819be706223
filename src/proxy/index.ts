// The compaction proxy: an OpenAI-compatible server that compacts each conversation before
// forwarding it upstream.
export { startProxy, ProxyStartError, type ProxyOptions, type RunningProxy } from "./server.js";
export { configSchema, parseConfig, redactConfig, type ProxyConfig, type ConversationSettings } from "./config.js";
export { CONVERSATION_HEADER, SOURCE_HEADER } from "./chat.js";
