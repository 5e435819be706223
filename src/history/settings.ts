// The run settings a stored trace carries (turn budget, tool withdrawal, print cap, view
// options), checked before a view is rebuilt from them: a trace is input from disk, and a
// bad value must be reported, not rendered.
import { z } from "zod";
import type { RunTrace, TraceSettings } from "../trace/trace.js";
import type { ViewOptions } from "../trace/view-settings.js";

const count = z.number().int().nonnegative();

/**
 * The prompt-view options: the one schema, defaults included (each field's meaning is on
 * `ViewOptions`). A stored view (a trace's settings, a saved run state) is read through it, and
 * every caller that merges options given in several places resolves them with
 * `resolveViewOptions`, so one partial set of options resolves to one object everywhere.
 */
export const viewOptionsSchema = z.object({
  compressHistory: z.boolean().default(false),
  printlnHistoryLimit: count.default(15),
  errorContextTurns: count.default(1),
  sampleItems: z.number().int().positive().default(3),
  sampleChars: z.number().int().positive().default(80),
  strictPrefix: z.boolean().default(false),
  toolCallsPerTurn: z.number().int().positive().default(10),
  paybackPrompts: count.default(15),
  errorWindowTurns: count.default(2),
  keepLatestFull: z.boolean().default(false),
  printlnHistoryTokens: count.default(2000),
  dropAfterTokens: count.default(500),
  cacheModel: z.enum(["token-prefix", "breakpoint"]).default("token-prefix"),
});

/** Every view option filled in. */
export type ResolvedViewOptions = Required<ViewOptions>;

// The schema and the documented type stay one shape: a field added to one and not the other fails to compile.
const sameShape: [ResolvedViewOptions, z.output<typeof viewOptionsSchema>] extends [z.output<typeof viewOptionsSchema>, ResolvedViewOptions] ? true : never = true;
void sameShape;

const VIEW_KEYS = Object.keys(viewOptionsSchema.shape) as Array<keyof ViewOptions>;

/** The options as given, checked but not filled in (the interpreter strategy's options; what a run records it was given). */
export const givenViewOptionsSchema = z
  .object(Object.fromEntries(VIEW_KEYS.map((k) => [k, viewOptionsSchema.shape[k].unwrap().optional()])) as { [K in keyof ViewOptions]-?: z.ZodOptional<ReturnType<(typeof viewOptionsSchema.shape)[K]["unwrap"]>> })
  .strict();

export const defaultViewOptions: Readonly<ResolvedViewOptions> = Object.freeze(viewOptionsSchema.parse({}));

/**
 * A place view options are given: the options themselves, or an agent's, a run's or a save's
 * options, where they sit in `view` beside the top-level shorthands (`compressHistory`,
 * `printlnHistoryLimit`), which win over `view`.
 */
export type ViewLayer = Partial<ViewOptions> & { readonly view?: Partial<ViewOptions> };

/** The options set in `layers` (later layers win; an undefined value sets nothing), nothing filled in. */
export function mergeViewOptions(...layers: ReadonlyArray<ViewLayer | undefined>): Partial<ViewOptions> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const k of VIEW_KEYS) {
      const v = layer[k] ?? layer.view?.[k];
      if (v !== undefined) out[k] = v;
    }
  }
  return out as Partial<ViewOptions>;
}

/**
 * The view options given in `layers`, merged (see mergeViewOptions) and filled in from the
 * schema's defaults. Throws a TypeError naming the option on an invalid value. Options already
 * resolved pass through as they are (the per-prompt build's case).
 */
export function resolveViewOptions(...layers: ReadonlyArray<ViewLayer | undefined>): ResolvedViewOptions {
  if (layers.length === 1 && layers[0] !== undefined && layers[0].view === undefined && VIEW_KEYS.every((k) => layers[0]?.[k] !== undefined)) return layers[0] as ResolvedViewOptions;
  const checked = viewOptionsSchema.safeParse(mergeViewOptions(...layers));
  if (!checked.success) throw new TypeError(viewOptionsProblem(checked.error));
  return checked.data;
}

/** What is wrong with view options as given (unknown keys included), or undefined when nothing is. */
export function checkViewOptions(given: unknown): string | undefined {
  const checked = givenViewOptionsSchema.safeParse(given);
  return checked.success ? undefined : viewOptionsProblem(checked.error);
}

function viewOptionsProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue.code === "unrecognized_keys") return `unknown view option '${issue.keys[0]}'; known: ${VIEW_KEYS.join(", ")}`;
  return `view.${issue.path.join(".")}: ${issue.message}`;
}

const settingsSchema = z.object({
  maxTurns: z.number().int().positive(),
  toolsWithdrawn: z.boolean(),
  maxPrintChars: z.number().positive(),
  view: viewOptionsSchema,
});

export type SettingsCheck = { ok: true; settings: TraceSettings | undefined } | { ok: false; message: string };

/** The trace's settings, checked: undefined when it has none (traces written before they existed). */
export function traceSettings(trace: Pick<RunTrace, "settings">): SettingsCheck {
  if (trace.settings === undefined) return { ok: true, settings: undefined };
  const checked = settingsSchema.safeParse(trace.settings);
  if (checked.success) return { ok: true, settings: checked.data };
  const issue = checked.error.issues[0];
  return { ok: false, message: `invalid trace settings at settings.${issue.path.join(".")}: ${issue.message}` };
}

/** A run's turn budget, read from the task message's turn line ("Turn 1 of 5."); else the turns taken. */
export function turnBudget(trace: Pick<RunTrace, "task" | "turns">): number {
  if (/This is your only turn/.test(trace.task)) return 1;
  const m = /Turn 1 of (\d+)\./.exec(trace.task);
  return m ? Number(m[1]) : Math.max(1, trace.turns.length);
}
