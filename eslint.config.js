import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "src/lisp/generated/", "src/viewer/generated/", "scratch/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: "readonly", process: "readonly", performance: "readonly", setTimeout: "readonly", clearTimeout: "readonly", URL: "readonly", AbortController: "readonly", AbortSignal: "readonly", globalThis: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // The interpreter patches equality onto its own copy of immutable; the host's copy stays the library's.
    files: ["src/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: [{ name: "immutable", message: "import the interpreter's copy, ptc-immutable (see src/lisp/equality.ts)" }] }] },
  },
  {
    // The viewer's client runs in the browser.
    files: ["src/viewer/client/**/*.ts"],
    languageOptions: { globals: { document: "readonly", window: "readonly", location: "readonly", TextEncoder: "readonly", Node: "readonly", Event: "readonly", HTMLElement: "readonly", SVGElement: "readonly", Element: "readonly" } },
  },
);
