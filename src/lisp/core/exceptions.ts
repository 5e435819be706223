// Placeholder: this area's builtins are being written.
import type { BuiltinDef } from "./registry.js";

export const EXCEPTIONS: BuiltinDef[] = [];
