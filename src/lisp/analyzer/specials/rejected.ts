// Clojure forms PTC-Lisp does not have, each rejected with a pointer to what to write instead.
import type { SpecialForm } from "./types.js";

function reject(message: string, hint: string): SpecialForm {
  return {
    syntax: "",
    doc: "",
    analyze: (a, form) => {
      throw a.error("invalid_form", message, form, hint);
    },
  };
}

export const REJECTED: Record<string, SpecialForm> = {
  call: reject('(call "tool" args) is not supported', "call tools as (tool/name {:arg value})"),
  ".": reject("(. obj method) syntax is not supported", "use (.method obj) for the few supported methods, or the equivalent function"),
  quote: reject("quote is not supported", "use a vector [..] for literal data"),
  while: reject("while is not supported: there is no mutable state to end it", "use (loop [..] (if done result (recur ...)))"),
  ns: reject("namespaces are not supported", "remove the (ns ...) form; all builtins are available directly"),
  require: reject("require is not supported", "clojure.string, clojure.set and clojure.walk functions are available as str/..., set/..., walk/... or unqualified"),
  import: reject("import is not supported", "there is no Java interop; use the builtin functions"),
  "set!": reject("set! is not supported: values are immutable", "def a new value or use loop/recur"),
  binding: reject("dynamic binding is not supported", "pass values as function arguments"),
  var: reject("var is not supported", "refer to the name directly"),
  monitor: reject("monitor is not supported", "there is no shared mutable state"),
  new: reject("object construction is not supported", "build maps and vectors instead"),
};
