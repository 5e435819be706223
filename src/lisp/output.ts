// Bounded `println` capture: keeps the head and the tail of the output and counts what
// was dropped between them, so a flood of output can never exhaust memory.
import { cutPoint, tailPoint } from "./cuts.js";

export interface OutputSnapshot {
  lines: string[];
  /** Lines dropped from the middle (their place is taken by one marker line). */
  droppedLines: number;
  droppedChars: number;
}

// What a line takes of the budget: its characters, and one for an empty line (its newline is
// output too), so that a flood of empty lines is cut like any other.
const weight = (line: string): number => Math.max(1, line.length);

export class OutputBuffer {
  private head: string[] = [];
  private headChars = 0;
  private tail: string[] = [];
  /** Where the tail starts in `tail`: lines before it were dropped (cut off in batches, not one shift a line). */
  private tailFrom = 0;
  private tailChars = 0;
  private overflow = false;
  private droppedLines = 0;
  private droppedChars = 0;

  constructor(private readonly maxChars: number) {}

  get truncated(): boolean {
    return this.overflow;
  }

  /** Adds a line; `elided` characters were already cut from its start (a line print kept only the end of). */
  push(line: string, elided = 0): void {
    if (!this.overflow) {
      if (elided === 0 && this.headChars + weight(line) <= this.maxChars) {
        this.head.push(line);
        this.headChars += weight(line);
        return;
      }
      this.overflow = true;
      this.shrinkHead();
    }
    this.pushTail(line, elided);
  }

  // On the first overflow the head gives back half the budget to the tail.
  private shrinkHead(): void {
    const keep = Math.floor(this.maxChars / 2);
    const kept: string[] = [];
    let chars = 0;
    for (const l of this.head) {
      if (chars + weight(l) <= keep) {
        kept.push(l);
        chars += weight(l);
      } else {
        const room = keep - chars;
        if (room > 0 && kept.length === 0) {
          const cut = cutPoint(l, room);
          kept.push(l.slice(0, cut) + "…");
          this.droppedChars += l.length - cut;
          chars += cut;
        } else {
          this.droppedLines++;
          this.droppedChars += l.length;
        }
      }
    }
    this.head = kept;
    this.headChars = chars;
  }

  private pushTail(line: string, elided: number): void {
    const budget = this.maxChars - this.headChars;
    if (line.length + elided > budget) {
      this.dropTail();
      const from = tailPoint(line, line.length - budget);
      this.droppedChars += from + elided;
      this.tail.push("…" + line.slice(from));
      this.tailChars = line.length - from;
      return;
    }
    this.tail.push(line);
    this.tailChars += weight(line);
    let i = this.tailFrom;
    while (this.tailChars > budget && i < this.tail.length) {
      this.tailChars -= weight(this.tail[i]);
      this.droppedLines++;
      this.droppedChars += this.tail[i].length;
      i++;
    }
    this.tailFrom = i;
    if (i > 1024 && i > this.tail.length / 2) {
      this.tail = this.tail.slice(i);
      this.tailFrom = 0;
    }
  }

  private dropTail(): void {
    for (let i = this.tailFrom; i < this.tail.length; i++) {
      const l = this.tail[i];
      this.droppedLines++;
      this.droppedChars += l.length;
    }
    this.tail = [];
    this.tailFrom = 0;
    this.tailChars = 0;
  }

  snapshot(): OutputSnapshot {
    if (!this.overflow) return { lines: this.head.slice(), droppedLines: 0, droppedChars: 0 };
    const marker = `... [output truncated: ${this.droppedLines} line(s), ${this.droppedChars} char(s) omitted; print less or narrow the data] ...`;
    return {
      lines: [...this.head, marker, ...this.tail.slice(this.tailFrom)],
      droppedLines: this.droppedLines,
      droppedChars: this.droppedChars,
    };
  }
}
