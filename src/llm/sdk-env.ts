// The official SDKs read some settings from process.env in their constructors, with no option to
// say otherwise: custom headers (OPENAI_CUSTOM_HEADERS, ANTHROPIC_CUSTOM_HEADERS, added to every
// request, where an Authorization line replaces the client's own key) and the log level
// (OPENAI_LOG, ANTHROPIC_LOG: debug writes every request's body to the console). A client given
// its own env (a proxy's summarizer, on a tenant's key) must take them from that env only.

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `make()`, run with process.env's `names` set to `env`'s (unset where env has none) and put back
 * after. The constructors read them synchronously, so nothing else sees the change.
 */
export function withSdkEnv<T>(env: Env, names: readonly string[], make: () => T): T {
  if (env === process.env) return make();
  const saved = names.map((name) => [name, process.env[name]] as const);
  const set = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  try {
    for (const name of names) set(name, env[name]);
    return make();
  } finally {
    for (const [name, value] of saved) set(name, value);
  }
}

/**
 * The SDK's log level: off unless the env names one (`OPENAI_LOG=debug`, read by the SDK). At
 * its default the SDK writes an event it cannot parse to the console, raw: the server's text (a
 * key it echoes, a terminal escape) on the host's stderr, past every mask and terminal guard,
 * beside the error the client throws, which says it.
 */
export function sdkLogLevel(named: string | undefined): { logLevel?: "off" } {
  return named === undefined || named === "" ? { logLevel: "off" } : {};
}

/**
 * Runs an SDK call, letting the console warnings it writes synchronously through only the first
 * time for `model`: the Anthropic SDK warns at every request for a model it lists as deprecated
 * (claude-sonnet-4-5 among them), two lines on the host's stderr each turn of a run. The swap
 * is synchronous, so nothing else runs while console.warn is replaced.
 */
export function warnOncePerModel(): <T>(model: string, call: () => T) => T {
  const warned = new Set<string>();
  return (model, call) => {
    if (!warned.has(model)) {
      warned.add(model);
      return call();
    }
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      return call();
    } finally {
      console.warn = warn;
    }
  };
}
