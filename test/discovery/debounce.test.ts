import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Debouncer, type Timers } from "../../host/discovery/debounce.ts";

/** A clock that moves only when told, firing due timers in order. */
class ManualTimers implements Timers {
  private t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 0;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.timers.set(++this.next, { at: this.t + ms, fn });
    return this.next;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
}

describe("push debouncing (DISCO_DEBOUNCE_AFTER / DISCO_DEBOUNCE_MAX)", () => {
  it("one change is pushed DEBOUNCE_AFTER after it", () => {
    const clock = new ManualTimers();
    const pushes: Array<[number, string[]]> = [];
    const d = new Debouncer<string>(100, 10_000, (c) => pushes.push([clock.now(), c]), clock);
    d.add("a");
    clock.advance(99);
    assert.deepEqual(pushes, []);
    clock.advance(1);
    assert.deepEqual(pushes, [[100, ["a"]]]);
  });

  it("a burst is pushed once, quiet for DEBOUNCE_AFTER after its last change", () => {
    const clock = new ManualTimers();
    const pushes: Array<[number, string[]]> = [];
    const d = new Debouncer<string>(100, 10_000, (c) => pushes.push([clock.now(), c]), clock);
    for (const c of ["a", "b", "c"]) {
      d.add(c);
      clock.advance(50);
    }
    clock.advance(100);
    assert.deepEqual(pushes, [[200, ["a", "b", "c"]]]);
  });

  it("a steady stream of changes is still pushed every DEBOUNCE_MAX", () => {
    const clock = new ManualTimers();
    const pushes: number[] = [];
    const d = new Debouncer<number>(100, 1000, () => pushes.push(clock.now()), clock);
    for (let i = 0; i < 30; i++) {
      d.add(i);
      clock.advance(80);
    }
    assert.deepEqual(pushes.slice(0, 2), [1000, 2040]);
  });

  it("fire pushes what is pending at once, and nothing when nothing is", () => {
    const clock = new ManualTimers();
    const pushes: string[][] = [];
    const d = new Debouncer<string>(100, 10_000, (c) => pushes.push(c), clock);
    d.fire();
    d.add("x");
    d.fire();
    clock.advance(1000);
    assert.deepEqual(pushes, [["x"]]);
  });
});
