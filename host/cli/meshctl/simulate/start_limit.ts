import { availableParallelism } from "node:os";

/** Process starts allowed at once: a sidecar start is CPU-bound (module compile, key generation). */
export const DEFAULT_CONCURRENT_STARTS = Math.max(2, availableParallelism());

/** Runs at most `limit` of the given tasks at once, the others queue in call order. */
export type StartLimit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * A counting semaphore for process starts, so scenarios running side by side
 * do not starve each other's sidecars past their start timeout.
 *
 * @example const limit = startLimit(2); await Promise.all(specs.map((s) => limit(() => start(s))));
 */
export function startLimit(limit = DEFAULT_CONCURRENT_STARTS): StartLimit {
  let running = 0;
  const queue: Array<() => void> = [];
  const release = () => {
    running--;
    queue.shift()?.();
  };
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => queue.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      release();
    }
  };
}
