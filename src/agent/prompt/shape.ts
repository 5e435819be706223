// zod schema → the shape text the prompt shows, in the program's own notation:
// {:products [{:name string, :price number}], :note string (optional)}. Goes through
// zod's JSON Schema export so every zod type is covered without reaching into internals.
import { z } from "zod";

type Json = Record<string, unknown>;

export interface Shape {
  /** One-line EDN-style shape. */
  text: string;
  /** The schema's own description, if it has one. */
  description?: string;
  /** `:field - description` lines for described fields (`[:a * :b]` paths for nested ones). */
  fields: string[];
  /** A value of that shape, as the program would write it, e.g. {:products ["..."]}. */
  example: string;
}

const MAX_DEPTH = 8;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  try {
    return z.toJSONSchema(schema, { io, unrepresentable: "any", cycles: "ref", reused: "inline" }) as Json;
  } catch {
    return {};
  }
}

class Renderer {
  readonly fields: string[] = [];
  private readonly expanding = new Set<string>();
  constructor(private readonly root: Json) {}

  // A $ref (a recursive or reused schema) is expanded once; inside itself it is shown by name.
  private resolve(s: Json): { schema: Json; name?: string } {
    const ref = s.$ref;
    if (typeof ref !== "string") return { schema: s };
    if (ref === "#") return { schema: this.root, name: "recursive" };
    const name = ref.slice(ref.lastIndexOf("/") + 1);
    const defs = (this.root.$defs ?? this.root.definitions) as Record<string, Json> | undefined;
    return { schema: defs?.[name] ?? {}, name };
  }

  text(node: Json, path: string[], depth: number): string {
    const { schema: s, name } = this.resolve(node);
    if (name !== undefined && (name === "recursive" || this.expanding.has(name))) return name;
    if (depth > MAX_DEPTH) return "...";
    if (name !== undefined) {
      this.expanding.add(name);
      const out = this.text(s, path, depth);
      this.expanding.delete(name);
      return out;
    }
    if (typeof s.description === "string" && path.length > 0) this.fields.push(`${path.length === 1 ? path[0] : `[${path.join(" ")}]`} - ${s.description}`);
    if (s.const !== undefined) return literal(s.const);
    if (Array.isArray(s.enum)) return s.enum.map(literal).join(" | ");
    const alts = (s.anyOf ?? s.oneOf) as Json[] | undefined;
    if (Array.isArray(alts)) return this.union(alts, path, depth);
    const type = s.type;
    if (Array.isArray(type)) return type.map((t) => this.text({ ...s, type: t, description: undefined }, path, depth)).join(" | ");
    switch (type) {
      case "string":
        return typeof s.format === "string" ? `string (${s.format})` : "string";
      case "integer":
        return "int";
      case "number":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "nil";
      case "array":
        return this.array(s, path, depth);
      case "object":
        return this.object(s, path, depth);
    }
    return "any";
  }

  private union(alts: Json[], path: string[], depth: number): string {
    const nonNull = alts.filter((a) => a.type !== "null");
    const parts = nonNull.map((a) => this.text(a, path, depth + 1));
    if (nonNull.length < alts.length) parts.push("nil");
    return parts.join(" | ");
  }

  private array(s: Json, path: string[], depth: number): string {
    if (Array.isArray(s.prefixItems)) return `[${(s.prefixItems as Json[]).map((x, i) => this.text(x, [...path, String(i)], depth + 1)).join(" ")}]`;
    const items = s.items as Json | undefined;
    return `[${items ? this.text(items, [...path, "*"], depth + 1) : "any"}]`;
  }

  private object(s: Json, path: string[], depth: number): string {
    const props = (s.properties ?? {}) as Record<string, Json>;
    const required = new Set((s.required ?? []) as string[]);
    const parts = Object.entries(props).map(([k, v]) => `:${k} ${this.text(v, [...path, ":" + k], depth + 1)}${required.has(k) ? "" : " (optional)"}`);
    const extra = s.additionalProperties;
    if (parts.length === 0 && extra !== undefined && extra !== false) {
      const keys = (s.propertyNames as Json | undefined) ?? { type: "string" };
      return `{${this.text(keys, path, depth + 1)} ${extra === true ? "any" : this.text(extra as Json, [...path, "*"], depth + 1)}}`;
    }
    return `{${parts.join(", ")}}`;
  }

  example(node: Json, depth: number): string {
    const { schema: s, name } = this.resolve(node);
    if (name !== undefined || depth > MAX_DEPTH) return "nil";
    if (s.const !== undefined) return literal(s.const);
    if (Array.isArray(s.enum) && s.enum.length > 0) return literal(s.enum[0]);
    const alts = (s.anyOf ?? s.oneOf) as Json[] | undefined;
    if (Array.isArray(alts) && alts.length > 0) return this.example(alts.find((a) => a.type !== "null") ?? alts[0], depth + 1);
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    switch (type) {
      case "string":
        return '"..."';
      case "integer":
        return "0";
      case "number":
        return "0.0";
      case "boolean":
        return "true";
      case "null":
        return "nil";
      case "array": {
        if (Array.isArray(s.prefixItems)) return `[${(s.prefixItems as Json[]).map((x) => this.example(x, depth + 1)).join(" ")}]`;
        const items = s.items as Json | undefined;
        return `[${items ? this.example(items, depth + 1) : ""}]`;
      }
      case "object": {
        const props = (s.properties ?? {}) as Record<string, Json>;
        const required = new Set((s.required ?? []) as string[]);
        return `{${Object.entries(props)
          .filter(([k]) => required.has(k))
          .map(([k, v]) => `:${k} ${this.example(v, depth + 1)}`)
          .join(" ")}}`;
      }
    }
    return "nil";
  }
}

function literal(v: unknown): string {
  if (v === null) return "nil";
  return typeof v === "string" || typeof v === "object" ? JSON.stringify(v) : String(v);
}

// zod types whose values no program can produce: its data crosses as numbers, strings, booleans,
// nil, vectors (sets included) and maps with string keys, so these could never parse.
const UNWRITABLE: Record<string, string> = {
  date: "a Date (use z.string(), or z.coerce.date())",
  bigint: "a BigInt (use z.number().int(), or z.coerce.bigint())",
  map: "a Map (use z.record())",
  set: "a Set (use z.array())",
  symbol: "a Symbol",
  function: "a function",
};

function programPath(jsonPath: (string | number)[]): string {
  const out: string[] = [];
  for (let i = 0; i < jsonPath.length; i++) {
    const step = jsonPath[i];
    if (step === "properties") out.push(`:${String(jsonPath[++i])}`);
    else if (step === "items" || step === "additionalProperties") out.push("*");
    else if (step === "prefixItems") out.push(String(jsonPath[++i]));
  }
  return out.length === 0 ? "the schema itself" : `[${out.join(" ")}]`;
}

/**
 * Why no program could ever write a value of this schema, naming the first such place
 * (`[:items * :when] expects a Date ...`), or undefined. A part that is only one branch of a
 * union, or is fed by a z.preprocess step, is left alone: something else can satisfy it.
 */
export function unwritable(schema: z.ZodType): string | undefined {
  const found: { path: (string | number)[]; what: string }[] = [];
  const fed: (string | number)[][] = [];
  try {
    z.toJSONSchema(schema, {
      io: "input",
      cycles: "ref",
      reused: "inline",
      unrepresentable: ({ zodSchema, path }) => {
        const def = zodSchema._zod.def as { type: string; coerce?: boolean };
        const what = UNWRITABLE[def.type];
        if (what !== undefined && def.coerce !== true && !path.includes("anyOf") && !path.includes("oneOf")) found.push({ path, what });
        return "any";
      },
      override: ({ zodSchema, path }) => {
        const def = zodSchema._zod.def as { type: string; in?: z.ZodType };
        if (def.type === "pipe" && def.in?._zod.traits.has("$ZodTransform") === true) fed.push(path);
      },
    });
  } catch {
    return undefined;
  }
  const hit = found.find((f) => !fed.some((p) => p.every((step, i) => f.path[i] === step)));
  return hit && `${programPath(hit.path)} expects ${hit.what}, which a program can never produce`;
}

/**
 * The shape of a zod schema as the program sees the data (keyword keys, vectors, nil):
 * of what the program must write (`io: "input"`, the default: arguments, return values)
 * or of what it receives after parsing (`"output"`: tool results).
 */
export function shapeOf(schema: z.ZodType, io: "input" | "output" = "input"): Shape {
  const root = jsonSchema(schema, io);
  const r = new Renderer(root);
  const text = r.text(root, [], 0);
  const shape: Shape = { text, fields: r.fields, example: r.example(root, 0) };
  if (typeof root.description === "string") shape.description = root.description;
  return shape;
}
