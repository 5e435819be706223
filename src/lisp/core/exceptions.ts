// throw, ex-info, ex-message, ex-data. A thrown value becomes a LispError of kind
// "exception": its message comes from the ex-info (or a string, or a map's :message), and
// its data is what (catch e ...) exposes as (:data e) and (ex-data e). Whatever is thrown,
// the kind stays "exception": a program cannot raise a limit error (or any other kind) by
// throwing a map that looks like one, and limit errors never reach a catch at all.
import { clipped } from "../cuts.js";
import { LispError, typeErr } from "../errors.js";
import { printSample } from "../printer.js";
import { chargeRead } from "../runtime.js";
import { EMPTY_MAP, isMap, keyword, Keyword, LMap, type Value } from "../values.js";
import { describe } from "./args.js";
import type { BuiltinDef } from "./registry.js";

const K_MESSAGE = keyword("message");
const K_DATA = keyword("data");
const K_CAUSE = keyword("cause");
const K_KIND = keyword("kind");

// Maps made by ex-info. A weak set rather than a marker key: no program can forge the tag,
// and an ex-info map stays a plain map for get, assoc and printing.
const exInfos = new WeakSet<object>();

function exInfo(args: Value[]): Value {
  const [msg, data = null, cause = null] = args;
  if (typeof msg !== "string") {
    throw typeErr(`ex-info expects a message string first, got ${describe(msg)}`, '(ex-info "what went wrong" {:key value})');
  }
  if (data !== null && !isMap(data)) {
    throw typeErr(`ex-info expects a map of data second, got ${describe(data)}`, "wrap the value in a map, e.g. (ex-info msg {:value x})");
  }
  let m: LMap = LMap<Value, Value>().set(K_MESSAGE, msg).set(K_DATA, data ?? EMPTY_MAP);
  if (cause !== null) m = m.set(K_CAUSE, cause);
  exInfos.add(m);
  return m;
}

// Messages are read by an LLM: a long one is cut, and a thrown data value is shown as a preview.
const MESSAGE_MAX = 1000;
const PREVIEW_MAX = 200;

/** A message a program gives an error (thrown, or an assert's), as the error carries it. */
export function clip(s: string): string {
  if (s.length <= MESSAGE_MAX) return s;
  // Cutting one built by concatenation ((str s "!"), "Assert failed: " and the value) copies all of it first.
  chargeRead(s.length);
  return clipped(s, MESSAGE_MAX);
}

function messageOf(x: Value): string | null {
  if (!isMap(x)) return null;
  const m = x.get(K_MESSAGE);
  return typeof m === "string" ? m : null;
}

function throwValue(x: Value): never {
  if (x === null) throw typeErr("throw expects a value to throw, got nil", '(throw (ex-info "what went wrong" {:key value}))');
  let message: string;
  let data: Value = x;
  if (isMap(x) && exInfos.has(x)) {
    message = clip(messageOf(x) ?? "");
    data = (x.get(K_DATA) as Value | undefined) ?? null;
  } else if (typeof x === "string") {
    message = clip(x);
  } else {
    // A map with a :message (a caught error being re-thrown, say) keeps that message.
    const own = messageOf(x);
    message = own !== null ? clip(own) : printSample(x, { maxChars: PREVIEW_MAX, maxItems: 20, maxDepth: 6, note: false }).text;
  }
  const e = new LispError("exception", message);
  e.data = data;
  throw e;
}

// What catch binds is {:kind :message :data}; ex-info makes {:message :data}. Both count as
// exceptions for ex-message and ex-data; any other value is not one, and gives nil as in Clojure.
function isException(x: Value): x is LMap {
  return isMap(x) && (exInfos.has(x) || (x.get(K_KIND) instanceof Keyword && typeof x.get(K_MESSAGE) === "string"));
}

function exMessage(x: Value): Value {
  return isException(x) ? messageOf(x) : null;
}

// LLMs write Clojure's Java habits, (throw (Exception. "msg")) and (.getMessage e): both map
// onto ex-info values, so the habit works instead of failing as an unknown symbol.
function exception(args: Value[]): Value {
  if (typeof args[0] !== "string") throw typeErr(`Exception. expects a message string, got ${describe(args[0])}`, '(throw (ex-info "what went wrong" {:key value}))');
  return exInfo([args[0], EMPTY_MAP, args[1] ?? null]);
}

function getMessage(x: Value): Value {
  if (!isException(x)) throw typeErr(`.getMessage expects an exception (what catch binds, or an ex-info), got ${describe(x)}`, "(try ... (catch Exception e (ex-message e)))");
  return messageOf(x);
}

function exData(x: Value): Value {
  return isException(x) ? ((x.get(K_DATA) as Value | undefined) ?? null) : null;
}

export const EXCEPTIONS: BuiltinDef[] = [
  {
    name: "throw",
    area: "functions",
    arity: [1, 1],
    params: "[x]",
    doc: "Raises an error of kind :exception (usually an ex-info) that try/catch can catch; (fail reason) ends the run instead.",
    examples: [
      ['(try (throw (ex-info "bad input" {:id 7})) (catch e [(ex-message e) (ex-data e)]))', '["bad input" {:id 7}]'],
      ['(throw "boom")', "exception: boom"],
    ],
    fn: (a) => throwValue(a[0]),
    f1: throwValue,
  },
  {
    name: "ex-info",
    area: "functions",
    arity: [1, 3],
    params: "[msg] [msg data] [msg data cause]",
    doc: "An exception value {:message msg :data data} for throw; data is a map ({} when left out).",
    examples: [['(ex-data (ex-info "not found" {:id 3}))', "{:id 3}"]],
    fn: exInfo,
  },
  {
    name: "ex-message",
    area: "functions",
    arity: [1, 1],
    params: "[e]",
    doc: "The message of an ex-info or of the error bound by catch; nil for other values.",
    examples: [["(try (/ 1 0) (catch e (ex-message e)))", '"division by zero"']],
    fn: (a) => exMessage(a[0]),
    f1: exMessage,
  },
  {
    name: "ex-data",
    area: "functions",
    arity: [1, 1],
    params: "[e]",
    doc: "The data map of an ex-info, or of the error bound by catch (nil for errors that carry none).",
    examples: [['(try (throw (ex-info "x" {:code 42})) (catch e (:code (ex-data e))))', "42"]],
    fn: (a) => exData(a[0]),
    f1: exData,
  },
  {
    name: "Exception.",
    area: "interop",
    arity: [1, 2],
    params: "[msg] [msg cause]",
    doc: "Java-style constructor kept for habit: the same as (ex-info msg {}).",
    examples: [['(try (throw (Exception. "boom")) (catch Exception e (ex-message e)))', '"boom"']],
    fn: exception,
  },
  {
    name: ".getMessage",
    area: "interop",
    arity: [1, 1],
    params: "[e]",
    doc: "The message of a caught error or an ex-info, like ex-message.",
    examples: [['(try (/ 1 0) (catch Exception e (.getMessage e)))', '"division by zero"']],
    fn: (a) => getMessage(a[0]),
    f1: getMessage,
  },
];
