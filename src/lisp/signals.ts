// How (return v) and (fail reason) end a program: thrown past every frame to the driver.
// They are not errors and cannot be caught by try.
import type { Value } from "./values.js";

export class ReturnSignal {
  constructor(readonly value: Value) {}
}

export class FailSignal {
  constructor(readonly value: Value) {}
}
