// The quota prefetch pool of one quota (and one referenced shape/signature):
// upstream src/istio/prefetch/quota_prefetch.cc, hub-client §6.2. It decides
// quota checks locally from tokens granted earlier and says when to ask the
// hub for more; the asking is the caller's (a best-effort quota request), and
// the answer comes back through `onResponse`. Time is passed in.
//
// - Each check counts its amount in a sliding window (1000 ms in 20 slots);
//   desired = max(count in the window, 10).
// - CLOSE mode (the last grant was short): no prefetch while one is in flight
//   or within 500 ms of the last one.
// - Prefetch max(amount, desired) when available < desired / 2 and nothing is
//   in flight, or when available < amount. If the pool is empty and the mode
//   is OPEN, the prefetch amount is added to the pool before the answer
//   (optimistic, expiring after 60 s): this is why the first call passes.
// - Answer: a transport failure is a full grant (fail open) valid 60 s; a
//   short grant removes the shortfall from the optimistic slot, then from the
//   oldest slots, and switches to CLOSE; a full grant switches to OPEN; an
//   optimistic slot still holding tokens gets the grant's expiry; a grant that
//   was not added optimistically is added with its expiry.
// - Amount 1 is taken from the oldest unexpired slots; a larger amount needs
//   enough unexpired tokens first and consumes nothing when refused.
import { WindowCounter } from "./window_counter";

export const PREDICT_WINDOW_NANOS: i64 = 1_000_000_000;
export const PREDICT_WINDOW_SLOTS: i32 = 20;
export const MIN_PREFETCH_AMOUNT: i64 = 10;
export const CLOSE_WAIT_NANOS: i64 = 500_000_000;
/** Lifetime of tokens added before the hub granted them (kMaxExpirationInMs). */
export const OPTIMISTIC_EXPIRY_NANOS: i64 = 60_000_000_000;
/** `granted` value of `onResponse` for a failed transport. */
export const TRANSPORT_FAILED: i64 = -1;

export const enum PrefetchMode {
  Open = 0,
  Close = 1,
}

class TokenSlot {
  constructor(
    public available: i64,
    public expiresAt: i64,
    public id: u64,
  ) {}
}

export class QuotaPrefetch {
  mode: PrefetchMode = PrefetchMode.Open;
  /** Prefetches sent and not answered yet. */
  inflight: i32 = 0;
  lastPrefetchAt: i64 = 0;
  /** Set by every `check`: the amount to prefetch now, 0 for none. */
  prefetchAmount: i64 = 0;
  /** Set by every `check`: the optimistic slot of that prefetch, 0 for none. */
  prefetchSlotId: u64 = 0;

  // FIFO of granted amounts, oldest first; a handful of slots at most.
  private readonly queue: Array<TokenSlot> = [];
  private readonly counter: WindowCounter;
  private nextSlotId: u64 = 0;

  constructor(nowNanos: i64) {
    this.counter = new WindowCounter(PREDICT_WINDOW_SLOTS, PREDICT_WINDOW_NANOS, nowNanos);
  }

  /**
   * Takes `amount` tokens if the pool allows it. Afterwards `prefetchAmount`
   * (> 0) says a prefetch must be sent now, answered by `onResponse` with
   * `prefetchSlotId` and that amount.
   */
  // @ts-ignore: decorator
  @inline check(amount: i64, nowNanos: i64): bool {
    this.prefetchAmount = 0;
    this.prefetchSlotId = 0;
    this.attemptPrefetch(amount, nowNanos);
    this.counter.inc(amount, nowNanos);
    if (amount == 1) return this.subtract(1, nowNanos) == 0;
    if (!this.hasAtLeast(amount, nowNanos)) return false;
    this.subtract(amount, nowNanos);
    return true;
  }

  /**
   * The hub's answer to a prefetch of `requested` tokens: `granted` tokens
   * (TRANSPORT_FAILED for a failed call) valid for `validNanos`.
   */
  onResponse(slotId: u64, requested: i64, granted: i64, validNanos: i64, nowNanos: i64): void {
    if (this.inflight > 0) this.inflight--;
    if (granted == TRANSPORT_FAILED) {
      granted = requested;
      validNanos = OPTIMISTIC_EXPIRY_NANOS;
    }
    if (granted < 0) granted = 0;
    if (slotId != 0) {
      const slot = this.findSlot(slotId);
      if (granted < requested) {
        let shortfall = requested - granted;
        if (slot !== null) {
          const d = slot.available < shortfall ? slot.available : shortfall;
          slot.available -= d;
          shortfall -= d;
        }
        if (shortfall > 0) this.subtract(shortfall, nowNanos);
      }
      if (slot !== null && slot.available > 0) slot.expiresAt = nowNanos + validNanos;
    } else if (granted > 0) {
      this.add(granted, nowNanos + validNanos);
    }
    this.mode = granted == requested ? PrefetchMode.Open : PrefetchMode.Close;
  }

  /** Unexpired tokens in the pool. */
  available(nowNanos: i64): i64 {
    let sum: i64 = 0;
    const queue = this.queue;
    for (let i = 0, n = queue.length; i < n; i++) {
      const slot = unchecked(queue[i]);
      if (nowNanos < slot.expiresAt) sum += slot.available;
    }
    return sum;
  }

  private hasAtLeast(amount: i64, nowNanos: i64): bool {
    let sum: i64 = 0;
    const queue = this.queue;
    for (let i = 0, n = queue.length; i < n; i++) {
      const slot = unchecked(queue[i]);
      if (nowNanos < slot.expiresAt) {
        sum += slot.available;
        if (sum >= amount) return true;
      }
    }
    return sum >= amount;
  }

  private attemptPrefetch(amount: i64, nowNanos: i64): void {
    if (
      this.mode == PrefetchMode.Close &&
      (this.inflight > 0 || nowNanos - this.lastPrefetchAt < CLOSE_WAIT_NANOS)
    ) {
      return;
    }
    const available = this.available(nowNanos);
    const passed = this.counter.count(nowNanos);
    const desired = passed > MIN_PREFETCH_AMOUNT ? passed : MIN_PREFETCH_AMOUNT;
    if ((available < desired / 2 && this.inflight == 0) || available < amount) {
      const request = amount > desired ? amount : desired;
      if (available == 0 && this.mode == PrefetchMode.Open) {
        this.prefetchSlotId = this.add(request, nowNanos + OPTIMISTIC_EXPIRY_NANOS);
      }
      this.prefetchAmount = request;
      this.lastPrefetchAt = nowNanos;
      this.inflight++;
    }
  }

  private add(amount: i64, expiresAt: i64): u64 {
    const id = ++this.nextSlotId;
    this.queue.push(new TokenSlot(amount, expiresAt, id));
    return id;
  }

  private findSlot(id: u64): TokenSlot | null {
    const queue = this.queue;
    for (let i = 0, n = queue.length; i < n; i++) {
      const slot = unchecked(queue[i]);
      if (slot.id == id) return slot;
    }
    return null;
  }

  /** Takes `delta` from the oldest unexpired slots; returns what was missing. */
  // @ts-ignore: decorator
  @inline private subtract(delta: i64, nowNanos: i64): i64 {
    const queue = this.queue;
    while (queue.length > 0 && delta > 0) {
      const head = unchecked(queue[0]);
      if (nowNanos < head.expiresAt) {
        if (head.available > 0) {
          const d = head.available < delta ? head.available : delta;
          head.available -= d;
          delta -= d;
        }
        if (head.available > 0) return 0;
      }
      queue.shift();
    }
    return delta;
  }
}
