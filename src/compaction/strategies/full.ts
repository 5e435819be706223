// The baseline: every stored message, unchanged.
import { z } from "zod";
import { pureStrategy } from "./pure.js";

export const fullStrategy = pureStrategy<Record<string, never>>({
  name: "full",
  description: "Sends every stored message unchanged (the baseline).",
  schema: z.object({}).strict(),
  rewrite: () => null,
});
