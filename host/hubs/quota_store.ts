/**
 * Memory quotas with a rolling window (upstream: the memquota adapter's
 * rolling-window mode). Each counter splits its window into SLOTS_PER_WINDOW
 * slots; an allocation is forgotten once its slot has left the window, i.e.
 * between (window − window/SLOTS_PER_WINDOW) and window after it was made.
 */
export const SLOTS_PER_WINDOW = 20;
/** Retries of one logical check (same deduplication id) within this time get the first answer again. */
export const DEDUPLICATION_WINDOW_MS = 10_000;

export interface AllocateRequest {
  /** Counter identity (quota name, override, window). */
  key: string;
  maxAmount: number;
  windowMs: number;
  amount: number;
  /** true: grant what is left (possibly less than asked, possibly 0); false: all or nothing. */
  bestEffort: boolean;
  /** CheckRequest.deduplication_id; empty = no deduplication. */
  deduplicationId?: string;
}

class RollingWindow {
  private readonly counts = new Array<number>(SLOTS_PER_WINDOW).fill(0);
  private readonly slots = new Array<number>(SLOTS_PER_WINDOW).fill(-Infinity);
  constructor(readonly windowMs: number) {}

  private slotOf(nowMs: number): number {
    return Math.floor((nowMs * SLOTS_PER_WINDOW) / this.windowMs);
  }

  used(nowMs: number): number {
    const current = this.slotOf(nowMs);
    let sum = 0;
    for (let i = 0; i < SLOTS_PER_WINDOW; i++) {
      if (this.slots[i] > current - SLOTS_PER_WINDOW) sum += this.counts[i];
    }
    return sum;
  }

  add(nowMs: number, amount: number): void {
    const slot = this.slotOf(nowMs);
    const i = ((slot % SLOTS_PER_WINDOW) + SLOTS_PER_WINDOW) % SLOTS_PER_WINDOW;
    if (this.slots[i] !== slot) {
      this.slots[i] = slot;
      this.counts[i] = 0;
    }
    this.counts[i] += amount;
  }
}

export class MemQuotaStore {
  private readonly windows = new Map<string, RollingWindow>();
  private readonly dedup = new Map<string, { granted: number; expiresMs: number }>();
  private nextSweepMs = 0;

  /** @param now the clock, in milliseconds (injected so tests step time instead of sleeping) */
  constructor(private readonly now: () => number = Date.now) {}

  /** Returns the granted amount: best effort min(amount, left), else amount or 0. */
  allocate(req: AllocateRequest): number {
    const now = this.now();
    this.sweep(now);
    const dedupKey = req.deduplicationId ? `${req.deduplicationId}\u0000${req.key}` : undefined;
    if (dedupKey !== undefined) {
      const previous = this.dedup.get(dedupKey);
      if (previous !== undefined && previous.expiresMs > now) return previous.granted;
    }
    let window = this.windows.get(req.key);
    if (window === undefined || window.windowMs !== req.windowMs) {
      window = new RollingWindow(req.windowMs);
      this.windows.set(req.key, window);
    }
    const left = Math.max(0, req.maxAmount - window.used(now));
    const amount = Math.max(0, req.amount);
    const granted = req.bestEffort ? Math.min(amount, left) : amount <= left ? amount : 0;
    if (granted > 0) window.add(now, granted);
    if (dedupKey !== undefined) this.dedup.set(dedupKey, { granted, expiresMs: now + DEDUPLICATION_WINDOW_MS });
    return granted;
  }

  /** Amount used in the current window per counter key, for introspection. */
  usage(): Record<string, number> {
    const now = this.now();
    const out: Record<string, number> = {};
    for (const [key, w] of this.windows) out[key] = w.used(now);
    return out;
  }

  /** Forgets counters whose keys are not in `keep` (after a reload removed their quota). */
  retain(keep: (key: string) => boolean): void {
    for (const key of this.windows.keys()) if (!keep(key)) this.windows.delete(key);
  }

  private sweep(now: number): void {
    if (now < this.nextSweepMs) return;
    this.nextSweepMs = now + DEDUPLICATION_WINDOW_MS;
    for (const [key, entry] of this.dedup) if (entry.expiresMs <= now) this.dedup.delete(key);
  }
}
