// The quota prefetch pool (hub-client §6.2; upstream
// src/istio/prefetch/quota_prefetch.cc and quota_prefetch_test.cc). Every
// answer is scripted; time is an injected clock in nanoseconds.
import {
  CLOSE_WAIT_NANOS,
  MIN_PREFETCH_AMOUNT,
  OPTIMISTIC_EXPIRY_NANOS,
  PrefetchMode,
  QuotaPrefetch,
  TRANSPORT_FAILED,
} from "../../assembly/client/quota_prefetch";
import { WindowCounter } from "../../assembly/client/window_counter";

const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const T0: i64 = 1_700_000_000 * S;

describe("WindowCounter", () => {
  it("sums the last window in 20 slots and forgets older amounts", () => {
    const c = new WindowCounter(20, 1000 * MS, T0);
    c.inc(3, T0);
    c.inc(2, T0 + 499 * MS);
    expect(c.count(T0 + 999 * MS)).toBe(5);
    expect(c.count(T0 + 1000 * MS)).toBe(2); // the first slot rolled out
    expect(c.count(T0 + 1500 * MS)).toBe(0);
    c.inc(7, T0 + 5 * S);
    expect(c.count(T0 + 5 * S)).toBe(7);
  });
});

describe("QuotaPrefetch", () => {
  it("the first call passes optimistically and asks for the minimum", () => {
    const p = new QuotaPrefetch(T0);
    expect(p.check(1, T0)).toBe(true);
    expect(p.prefetchAmount).toBe(MIN_PREFETCH_AMOUNT);
    expect(p.prefetchSlotId).toBeGreaterThan(0); // added before the answer
    expect(p.inflight).toBe(1);
    expect(p.available(T0)).toBe(9);
    // A second call in flight: 9 tokens left, no second prefetch.
    expect(p.check(1, T0 + MS)).toBe(true);
    expect(p.prefetchAmount).toBe(0);
  });

  it("optimistic tokens expire after 60 s without an answer", () => {
    const p = new QuotaPrefetch(T0);
    p.check(1, T0);
    expect(p.available(T0 + OPTIMISTIC_EXPIRY_NANOS - 1)).toBe(9);
    expect(p.available(T0 + OPTIMISTIC_EXPIRY_NANOS)).toBe(0);
  });

  it("prefetch amounts follow the demand of the last window (min 10)", () => {
    const p = new QuotaPrefetch(T0);
    let prefetches = 0;
    let largest: i64 = 0;
    // 60 checks, 10 ms apart, every prefetch granted in full at once.
    for (let k = 0; k < 60; k++) {
      const now = T0 + <i64>k * 10 * MS;
      expect(p.check(1, now)).toBe(true, "check " + k.toString());
      if (p.prefetchAmount > 0) {
        const expected: i64 = k > 10 ? <i64>k : 10; // k checks counted before this one
        expect(p.prefetchAmount).toBe(expected, "prefetch at check " + k.toString());
        if (p.prefetchAmount > largest) largest = p.prefetchAmount;
        p.onResponse(p.prefetchSlotId, p.prefetchAmount, p.prefetchAmount, 2 * S, now);
        prefetches++;
      }
    }
    expect(prefetches).toBeGreaterThan(2);
    expect(largest).toBeGreaterThan(MIN_PREFETCH_AMOUNT);
    expect(p.mode).toBe(PrefetchMode.Open);
    // After a quiet window (grants expired) the demand is back to the minimum.
    expect(p.check(1, T0 + 10 * S)).toBe(true);
    expect(p.prefetchAmount).toBe(MIN_PREFETCH_AMOUNT);
  });

  it("a short grant switches to CLOSE: no prefetch within 500 ms of the last", () => {
    const p = new QuotaPrefetch(T0);
    expect(p.check(1, T0)).toBe(true); // prefetch 10, optimistic
    const slot = p.prefetchSlotId;
    p.onResponse(slot, 10, 2, 60 * S, T0 + MS); // 2 of 10: 8 taken back
    expect(p.mode).toBe(PrefetchMode.Close);
    expect(p.available(T0 + MS)).toBe(1);
    expect(p.check(1, T0 + 2 * MS)).toBe(true);
    expect(p.prefetchAmount).toBe(0);
    expect(p.check(1, T0 + 3 * MS)).toBe(false);
    expect(p.prefetchAmount).toBe(0);
    expect(p.check(1, T0 + CLOSE_WAIT_NANOS - 1)).toBe(false);
    expect(p.prefetchAmount).toBe(0);
    // 500 ms after the last prefetch: ask again, not optimistically (CLOSE).
    expect(p.check(1, T0 + CLOSE_WAIT_NANOS)).toBe(false);
    expect(p.prefetchAmount).toBeGreaterThanOrEqual(MIN_PREFETCH_AMOUNT);
    expect(p.prefetchSlotId).toBe(0);
    // In CLOSE mode a prefetch in flight also blocks the next one.
    expect(p.check(1, T0 + 2 * CLOSE_WAIT_NANOS)).toBe(false);
    expect(p.prefetchAmount).toBe(0);
    // A full grant reopens.
    p.onResponse(0, 12, 12, 60 * S, T0 + 2 * CLOSE_WAIT_NANOS);
    expect(p.mode).toBe(PrefetchMode.Open);
    expect(p.check(1, T0 + 2 * CLOSE_WAIT_NANOS + MS)).toBe(true);
  });

  it("a large amount is refused without consuming (upstream TestNotEnoughAmount)", () => {
    const p = new QuotaPrefetch(T0);
    expect(p.check(1, T0)).toBe(true);
    p.onResponse(p.prefetchSlotId, p.prefetchAmount, 5, S, T0); // the hub has 5
    expect(p.check(5, T0 + MS)).toBe(false); // 4 left
    expect(p.available(T0 + MS)).toBe(4);
    expect(p.check(4, T0 + 2 * MS)).toBe(true);
    expect(p.available(T0 + 2 * MS)).toBe(0);
  });

  it("a transport failure is a full grant valid 60 s (fail open)", () => {
    const p = new QuotaPrefetch(T0);
    p.check(1, T0);
    p.onResponse(p.prefetchSlotId, 10, TRANSPORT_FAILED, 0, T0 + S);
    expect(p.mode).toBe(PrefetchMode.Open);
    expect(p.inflight).toBe(0);
    expect(p.available(T0 + S + OPTIMISTIC_EXPIRY_NANOS - 1)).toBe(9);
    expect(p.available(T0 + S + OPTIMISTIC_EXPIRY_NANOS)).toBe(0);
  });

  it("a grant that was not added optimistically is added with its expiry", () => {
    const p = new QuotaPrefetch(T0);
    p.check(1, T0);
    p.onResponse(p.prefetchSlotId, 10, 0, S, T0); // nothing granted: CLOSE, pool empty
    expect(p.available(T0)).toBe(0);
    expect(p.check(1, T0 + CLOSE_WAIT_NANOS)).toBe(false);
    expect(p.prefetchSlotId).toBe(0);
    const asked = p.prefetchAmount;
    p.onResponse(0, asked, TRANSPORT_FAILED, 0, T0 + CLOSE_WAIT_NANOS);
    expect(p.available(T0 + CLOSE_WAIT_NANOS)).toBe(asked);
    expect(p.available(T0 + CLOSE_WAIT_NANOS + OPTIMISTIC_EXPIRY_NANOS)).toBe(0);
  });

  it("expired grants do not count: an empty OPEN pool passes optimistically again", () => {
    const p = new QuotaPrefetch(T0);
    p.check(1, T0);
    p.onResponse(p.prefetchSlotId, 10, 10, S, T0); // 9 tokens valid 1 s
    expect(p.available(T0 + S)).toBe(0);
    expect(p.check(1, T0 + S)).toBe(true);
    expect(p.prefetchSlotId).toBeGreaterThan(0);
    expect(p.available(T0 + S)).toBe(MIN_PREFETCH_AMOUNT - 1);
  });

  it("in CLOSE mode an empty pool refuses until tokens are granted", () => {
    const p = new QuotaPrefetch(T0);
    p.check(1, T0);
    p.onResponse(p.prefetchSlotId, 10, 1, S, T0); // short: CLOSE, 0 left
    expect(p.check(1, T0 + S)).toBe(false);
    expect(p.prefetchSlotId).toBe(0);
    expect(p.prefetchAmount).toBeGreaterThan(0);
  });
});
