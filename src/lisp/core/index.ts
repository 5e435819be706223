// Registers every builtin area in the one registry. Importing this module is what makes
// the core library available to the analyzer.
import { AGGREGATES } from "./aggregates.js";
import { ARITHMETIC } from "./arithmetic.js";
import { CLOJURE_EXTRAS } from "./clojure.js";
import { COLLECTIONS } from "./collections.js";
import { COMPARISON } from "./comparison.js";
import { EXCEPTIONS } from "./exceptions.js";
import { FUNCTIONS } from "./functions.js";
import { IO } from "./io.js";
import { MAPS } from "./maps.js";
import { METHODS } from "./methods.js";
import { PARALLEL } from "./parallel.js";
import { PREDICATES } from "./predicates.js";
import { defineBuiltins } from "./registry.js";
import { REGEX } from "./regex.js";
import { SEQUENCES } from "./sequences.js";
import { SETS } from "./sets.js";
import { STRINGS } from "./strings.js";
import { keepingSortedOrder } from "./sorted.js";
import { withResumable } from "./resumable.js";
import { TRANSDUCERS, withTransducerArity } from "./transducers.js";
import { TREES } from "./trees.js";

// Sorted maps and sets stay sorted through assoc, conj, merge, into, ...; map, filter, reduce
// and the like go on from the element where a program waiting on a tool stopped.
defineBuiltins(
  [
    ...ARITHMETIC,
    ...COMPARISON,
    ...COLLECTIONS,
    // (map f), (filter p), ... without a collection make transducers.
    ...SEQUENCES.map(withTransducerArity),
    ...TRANSDUCERS,
    ...MAPS,
    ...SETS,
    ...STRINGS,
    ...REGEX,
    ...METHODS,
    ...FUNCTIONS,
    ...PREDICATES,
    ...AGGREGATES,
    ...TREES,
    ...PARALLEL,
    ...EXCEPTIONS,
    ...IO,
    ...CLOJURE_EXTRAS,
  ]
    .map(keepingSortedOrder)
    .map(withResumable),
);
