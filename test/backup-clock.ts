// A clock the backup tests move by hand (src/backup/clock.ts): timers fire when the test says, in order.
import type { Clock } from "../src/backup/clock.ts";

export class ManualClock implements Clock {
  private readonly timers = new Map<number, { at: number; run: () => void }>();
  private next = 1;

  constructor(private time = Date.parse("2026-11-26T12:00:00Z")) {}

  now(): number {
    return this.time;
  }

  setTimeout(run: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.time + ms, run });
    return id;
  }

  clearTimeout(timer: unknown): void {
    this.timers.delete(timer as number);
  }

  /** When the earliest timer is due; null for none. */
  due(): number | null {
    let earliest: number | null = null;
    for (const { at } of this.timers.values()) if (earliest === null || at < earliest) earliest = at;
    return earliest;
  }

  /** Moves to the earliest timer and fires it (at once if it is due already). */
  fireNext(): void {
    let first: [number, { at: number; run: () => void }] | undefined;
    for (const entry of this.timers) if (!first || entry[1].at < first[1].at) first = entry;
    if (!first) throw new Error("no timer is set");
    this.timers.delete(first[0]);
    this.time = Math.max(this.time, first[1].at);
    first[1].run();
  }

  /** Moves time on by `ms` without firing anything. */
  pass(ms: number): void {
    this.time += ms;
  }
}
