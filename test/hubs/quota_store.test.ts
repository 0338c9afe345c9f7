// The memory quota store with an injected clock: no sleeping.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEDUPLICATION_WINDOW_MS, MemQuotaStore, SLOTS_PER_WINDOW } from "../../host/hubs/quota_store.ts";

function store() {
  const clock = { now: 1_000_000 };
  const s = new MemQuotaStore(() => clock.now);
  const take = (amount: number, bestEffort = false, deduplicationId = "", key = "q", maxAmount = 10, windowMs = 1000) =>
    s.allocate({ key, maxAmount, windowMs, amount, bestEffort, deduplicationId });
  return { clock, s, take };
}

describe("memory quota store", () => {
  it("all or nothing: grants while enough is left, then 0", () => {
    const { take } = store();
    assert.deepEqual([take(4), take(4), take(4), take(2), take(1)], [4, 4, 0, 2, 0]);
  });

  it("best effort: grants what is left", () => {
    const { take } = store();
    assert.deepEqual([take(7, true), take(7, true), take(7, true)], [7, 3, 0]);
  });

  it("refills as the window rolls: an allocation is forgotten within one slot of the window", () => {
    const { clock, take } = store();
    assert.equal(take(10), 10);
    clock.now += 1000 - 1000 / SLOTS_PER_WINDOW - 1;
    assert.equal(take(1), 0, "still inside the window");
    clock.now += 1000 / SLOTS_PER_WINDOW + 1;
    assert.equal(take(10), 10, "a whole window later everything is back");
  });

  it("rolls: allocations age out one by one", () => {
    const { clock, take } = store();
    assert.equal(take(5), 5);
    clock.now += 500;
    assert.equal(take(5), 5);
    clock.now += 500;
    assert.equal(take(5, true), 5, "the first 5 left the window, the second 5 have not");
    assert.equal(take(1), 0);
  });

  it("counters are independent per key and follow the maximum they are given", () => {
    const { take } = store();
    assert.equal(take(10, false, "", "a"), 10);
    assert.equal(take(10, false, "", "b"), 10);
    assert.equal(take(5, false, "", "a", 20), 5, "a reload that raises the maximum applies at once");
  });

  it("deduplicates retries of one call within the deduplication window", () => {
    const { clock, take } = store();
    assert.equal(take(6, false, "id-1"), 6);
    assert.equal(take(6, false, "id-1"), 6, "same answer, not charged again");
    assert.equal(take(6, false, "id-2"), 0);
    clock.now += DEDUPLICATION_WINDOW_MS + 1;
    assert.equal(take(6, false, "id-1"), 6, "after the window the id is new again (and the quota refilled)");
  });

  it("zero and negative amounts grant nothing and charge nothing", () => {
    const { take, s } = store();
    assert.equal(take(0), 0);
    assert.equal(take(-5, true), 0);
    assert.deepEqual(s.usage(), { q: 0 });
  });

  it("forgets counters a reload removed", () => {
    const { take, s } = store();
    take(1, false, "", "keep");
    take(1, false, "", "drop");
    s.retain((k) => k === "keep");
    assert.deepEqual(Object.keys(s.usage()), ["keep"]);
  });
});
