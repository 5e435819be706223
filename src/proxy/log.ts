// Structured logs: one JSON object per line. Callers pass ids, counts and durations only; message
// content and credentials are never handed to the logger in the first place.
export type LogEvent = { event: string } & Record<string, string | number | boolean | undefined>;

export type Logger = (entry: LogEvent) => void;

/** Writes each entry as a JSON line with a timestamp. */
export function jsonLogger(write: (line: string) => void): Logger {
  return (entry) => write(JSON.stringify({ time: new Date().toISOString(), ...entry }) + "\n");
}

export const silentLogger: Logger = () => {};
