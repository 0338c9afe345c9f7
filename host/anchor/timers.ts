/** setTimeout/clearTimeout, injectable for tests. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const NODE_TIMERS: Timers = {
  setTimeout: (fn, ms) => {
    // Node caps timeouts at 2^31-1 ms; longer waits are the caller's to split.
    const t = setTimeout(fn, Math.min(ms, MAX_TIMEOUT_MS));
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** The longest single timeout Node honours (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;
