// How (return v) and (fail reason) end a program: thrown past every frame to the driver.
// They are not errors and cannot be caught by try.
import type { SourceLoc } from "./errors.js";
import type { Value } from "./values.js";

// `loc` is the form's place: the value may still fail to cross out (too deep, too big).
export class ReturnSignal {
  constructor(
    readonly value: Value,
    readonly loc: SourceLoc,
  ) {}
}

export class FailSignal {
  constructor(
    readonly value: Value,
    readonly loc: SourceLoc,
  ) {}
}
