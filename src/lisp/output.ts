// Bounded `println` capture: keeps the head and the tail of the output and counts what
// was dropped between them, so a flood of output can never exhaust memory.
import { cutPoint, tailPoint } from "./cuts.js";

export interface OutputSnapshot {
  lines: string[];
  /** Lines dropped from the middle (their place is taken by one marker line). */
  droppedLines: number;
  droppedChars: number;
}

export class OutputBuffer {
  private head: string[] = [];
  private headChars = 0;
  private tail: string[] = [];
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
      if (elided === 0 && this.headChars + line.length <= this.maxChars) {
        this.head.push(line);
        this.headChars += line.length;
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
      if (chars + l.length <= keep) {
        kept.push(l);
        chars += l.length;
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
    this.tailChars += line.length;
    let i = 0;
    while (this.tailChars > budget && i < this.tail.length) {
      this.tailChars -= this.tail[i].length;
      this.droppedLines++;
      this.droppedChars += this.tail[i].length;
      i++;
    }
    if (i > 0) this.tail.splice(0, i);
  }

  private dropTail(): void {
    for (const l of this.tail) {
      this.droppedLines++;
      this.droppedChars += l.length;
    }
    this.tail = [];
    this.tailChars = 0;
  }

  snapshot(): OutputSnapshot {
    if (!this.overflow) return { lines: this.head.slice(), droppedLines: 0, droppedChars: 0 };
    const marker = `... [output truncated: ${this.droppedLines} line(s), ${this.droppedChars} char(s) omitted; print less or narrow the data] ...`;
    return {
      lines: [...this.head, marker, ...this.tail],
      droppedLines: this.droppedLines,
      droppedChars: this.droppedChars,
    };
  }
}
