import type { Timers } from "../../../host/anchor/timers.ts";

/** A clock and timers that move only when told: `advance(ms)` fires what falls due, in order. */
export class FakeClock implements Timers {
  private queue: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 1;

  constructor(public time = Date.UTC(2026, 0, 1)) {}

  now = (): number => this.time;

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.queue.push({ at: this.time + ms, fn, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.queue = this.queue.filter((t) => t.id !== handle);
  }

  pending(): number {
    return this.queue.length;
  }

  /** Moves time forward, firing every timer due on the way and letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.queue[0];
      if (!next || next.at > end) break;
      this.queue.shift();
      this.time = Math.max(this.time, next.at);
      next.fn();
      await settle();
    }
    this.time = end;
    await settle();
  }
}

export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}
