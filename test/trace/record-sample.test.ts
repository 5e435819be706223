// A definition too big for its EDN is recorded with the summaries' sample: it was printed twice
// (the prompt's sample with its note, thrown away, then the summaries'), which is the cost of a
// sample per oversized definition on every turn that records one.
import { describe, expect, it, vi } from "vitest";
import * as lisp from "../../src/lisp/index.js";

vi.mock("../../src/lisp/index.js", async (original) => {
  const m = await original<typeof import("../../src/lisp/index.js")>();
  return { ...m, printSample: vi.fn(m.printSample) };
});

const { Recorder } = await import("../../src/trace/record.js");

describe("Recorder.definition", () => {
  it("prints an oversized value's sample once, without the prompt's note and with every record key", () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, name: `row ${i}`, ...(i === 499 ? { late: true } : {}) }));
    const printSample = vi.mocked(lisp.printSample);
    printSample.mockClear();
    const d = new Recorder().definition("rows", { value: lisp.toLisp(rows) });
    expect(d.edn).toBeUndefined();
    expect(d.sample).not.toMatch(/items/);
    expect(d.sample).toMatch(/:late/);
    // The EDN attempt and one sample (before: three prints).
    expect(printSample).toHaveBeenCalledTimes(2);
  });

  it("keeps a value that fits whole as EDN, with the prompt's sample", () => {
    const printSample = vi.mocked(lisp.printSample);
    printSample.mockClear();
    const d = new Recorder().definition("xs", { value: lisp.toLisp([1, 2, 3, 4, 5]) });
    expect(d.edn).toBe("[1 2 3 4 5]");
    expect(d.sample).toMatch(/^\[1 2 3/);
    expect(printSample).toHaveBeenCalledTimes(2);
  });
});
