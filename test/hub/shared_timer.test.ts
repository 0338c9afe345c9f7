// The real clock's deadline timers share one Node timer (host/hub/shared_timer.ts):
// each deadline still fires once, in due order, unless cancelled, and the
// process is kept alive exactly while a deadline is pending.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { SharedTimer, type TimerHandle, type TimerHost } from "../../host/hub/shared_timer.ts";

/** Node's timers, simulated: virtual time, and which armed timer holds the process. */
class FakeHost implements TimerHost {
  time = 0;
  armed: Array<{ at: number; fn: () => void; refed: boolean; cleared: boolean }> = [];
  armings = 0;

  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    this.armings++;
    const t = { at: this.time + ms, fn, refed: true, cleared: false };
    this.armed.push(t);
    return {
      ref: () => {
        t.refed = true;
      },
      unref: () => {
        t.refed = false;
      },
      [Symbol.for("t")]: t,
    } as TimerHandle;
  }
  clearTimeout(handle: TimerHandle): void {
    (handle as unknown as Record<symbol, { cleared: boolean }>)[Symbol.for("t")].cleared = true;
  }
  /** Whether a live Node timer would keep the process alive. */
  holding(): boolean {
    return this.armed.some((t) => !t.cleared && t.refed);
  }
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.armed.filter((t) => !t.cleared && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.time = Math.max(this.time, next.at);
      next.cleared = true;
      next.fn();
    }
    this.time = end;
  }
}

describe("SharedTimer", () => {
  it("fires each deadline once, at its time, in due order; cancelled ones never", () => {
    const host = new FakeHost();
    const timer = new SharedTimer(host);
    const fired: Array<[string, number]> = [];
    const at = (name: string) => () => fired.push([name, host.time]);
    timer.set(5000, at("a"));
    host.advance(10);
    const cancelB = timer.set(5000, at("b"));
    timer.set(3000, at("c"));
    timer.set(5000, at("d"));
    host.advance(20);
    timer.set(1, at("e"));
    cancelB();
    cancelB();
    assert.equal(timer.pending(), 4);
    host.advance(10_000);
    assert.deepEqual(fired, [
      ["e", 31],
      ["c", 3010],
      ["a", 5000],
      ["d", 5010],
    ]);
    assert.equal(timer.pending(), 0);
  });

  it("holds the process only while a deadline is pending", () => {
    const host = new FakeHost();
    const timer = new SharedTimer(host);
    assert.equal(host.holding(), false);
    const cancel1 = timer.set(5000, () => {});
    assert.equal(host.holding(), true);
    const cancel2 = timer.set(5000, () => {});
    cancel1();
    assert.equal(host.holding(), true);
    cancel2();
    assert.equal(host.holding(), false);
    timer.set(5000, () => {});
    assert.equal(host.holding(), true);
    host.advance(5000);
    assert.equal(host.holding(), false);
    assert.equal(timer.pending(), 0);
  });

  it("arms Node's timer again only for an earlier deadline or when it fires", () => {
    const host = new FakeHost();
    const timer = new SharedTimer(host);
    for (let i = 0; i < 50; i++) {
      const cancel = timer.set(5000, () => {});
      host.advance(20);
      cancel();
    }
    assert.equal(host.armings, 1);
    let fired = false;
    timer.set(100, () => {
      fired = true;
    });
    assert.equal(host.armings, 2);
    host.advance(100);
    assert.equal(fired, true);
  });

  it("a callback that sets a deadline or throws does not lose the others", () => {
    const host = new FakeHost();
    const timer = new SharedTimer(host);
    const fired: string[] = [];
    timer.set(10, () => {
      fired.push("a");
      timer.set(0, () => fired.push("a's"));
      throw new Error("boom");
    });
    timer.set(10, () => fired.push("b"));
    assert.throws(() => host.advance(10), /boom/);
    host.advance(10);
    assert.deepEqual(fired, ["a", "b", "a's"]);
    assert.equal(timer.pending(), 0);
    assert.equal(host.holding(), false);
  });

  it("drops a cancelled deadline's callback at once (it may hold a hub call's message)", () => {
    const host = new FakeHost();
    const timer = new SharedTimer(host);
    const message = new Uint8Array(1024);
    const cancel = timer.set(5000, () => message.length);
    cancel();
    // What the list keeps of a cancelled deadline: its due time only.
    assert.equal(JSON.stringify((timer as unknown as { deadlines: unknown[] }).deadlines), JSON.stringify([{ due: 5000 }]));
  });
});

function runNode(code: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

describe("realClock deadlines", () => {
  it("a pending deadline keeps the process alive until it fires; a cancelled one does not", async () => {
    const out = await runNode(`
      import { realClock } from "./host/hub/clock.ts";
      const cancel = realClock.setTimer(600_000, () => process.stdout.write("never "));
      realClock.setTimer(50, () => process.stdout.write("fired "));
      cancel();
    `);
    // A process held by the cancelled 10-minute deadline would be killed by the 60 s timeout instead.
    assert.equal(out, "fired ");
  });
});
