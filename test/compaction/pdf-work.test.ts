// The work pdfPages does on a file of many small or unterminated streams, counted instead of
// timed: each "endstream" was looked for from every stream to the end of the file, and every
// stream was inflated however small, so 1.2 MB of "/ObjStm stream" took 27 s on the proxy's
// request path (a file part is counted for every request that carries it).
import { afterEach, describe, expect, it, vi } from "vitest";
import { pdfPages } from "../../src/compaction/tokens.js";

const work = vi.hoisted(() => ({ inflations: 0 }));
vi.mock("node:zlib", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:zlib")>();
  return { ...real, inflateSync: (...args: Parameters<typeof real.inflateSync>) => ((work.inflations += 1), real.inflateSync(...args)) };
});

afterEach(() => vi.restoreAllMocks());

/** Bytes read by searches for `needle` while `run` runs. */
function searched(needle: string, run: () => void): number {
  let read = 0;
  const indexOf = Buffer.prototype.indexOf;
  vi.spyOn(Buffer.prototype, "indexOf").mockImplementation(function (this: Buffer, ...args: unknown[]) {
    const [value, from] = args;
    const found = (indexOf as (...a: unknown[]) => number).apply(this, args);
    if (String(value) === needle) read += (found < 0 ? this.length : found) - (typeof from === "number" ? from : 0);
    return found;
  });
  run();
  return read;
}

describe("pdfPages on a file of many streams", () => {
  it("reads the file for their ends about once and inflates a bounded number of them", () => {
    const streams = 20_000;
    const file = Buffer.from("%PDF-1.5\n" + "/ObjStm stream\n".repeat(streams), "latin1");
    work.inflations = 0;
    let pages = -1;
    const read = searched("endstream", () => (pages = pdfPages(file)));
    expect(pages).toBe(0);
    // Before: every stream searched to the end of the file (3 GB read here) and 20,000 inflations.
    expect(read).toBeLessThanOrEqual(2 * file.length);
    expect(work.inflations).toBeLessThanOrEqual(4096);
  });
});
