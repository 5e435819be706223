// Placeholder until interpreter-aware compression lands: behaves as the full view.
import { fullView } from "./full.js";
import type { PromptView } from "./view.js";

export const compressedView: PromptView = (input, options) => fullView(input, options);
