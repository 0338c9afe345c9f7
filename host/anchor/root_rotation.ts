import type { ScopedLogger } from "../telemetry/logger.ts";
import { NODE_TIMERS, type Timers } from "./timers.ts";

/** The validity of a root certificate, in ms. */
export interface Validity {
  notBefore: number;
  notAfter: number;
}

/**
 * Whether a self-signed root is inside its grace period: less than
 * `gracePercentile`% of its lifetime is left (upstream: the root cert
 * rotator's GetWaitTime ≤ 0). An expired root is always due.
 */
export function rootRotationDue(root: Validity, now: number, gracePercentile: number): boolean {
  const lifetime = root.notAfter - root.notBefore;
  const grace = (lifetime * gracePercentile) / 100;
  return now >= root.notAfter - grace;
}

export interface RootRotatorOptions {
  /** ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL; ≤ 0 disables the rotator. */
  checkIntervalMs: number;
  /** ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: first check after a random delay below the interval. */
  jitter: boolean;
  /** One check: rotate if due; resolves true when it rotated. */
  check: () => Promise<boolean>;
  log: ScopedLogger;
  timers?: Timers;
  random?: () => number;
}

/**
 * Runs the root check every interval (upstream: SelfSignedCARootCertRotator).
 * Checks never overlap: the next one is scheduled when the previous finished.
 * A failed check is logged and retried at the next interval.
 */
export class RootRotator {
  private handle: unknown;
  private stopped = false;
  private readonly timers: Timers;
  private running?: Promise<void>;

  constructor(private readonly options: RootRotatorOptions) {
    this.timers = options.timers ?? NODE_TIMERS;
  }

  get enabled(): boolean {
    return this.options.checkIntervalMs > 0;
  }

  start(): void {
    if (!this.enabled) {
      this.options.log.info("self-signed root cert rotator disabled (check interval ≤ 0)");
      return;
    }
    const first = this.options.jitter ? Math.floor((this.options.random ?? Math.random)() * this.options.checkIntervalMs) : this.options.checkIntervalMs;
    this.options.log.debug(`self-signed root cert rotator: first check in ${first} ms, then every ${this.options.checkIntervalMs} ms`);
    this.schedule(first);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.handle = this.timers.setTimeout(() => {
      this.running = this.options
        .check()
        .then(
          (rotated) => {
            if (!rotated) this.options.log.debug("root certificate checked: not in its grace period");
          },
          (e: Error) => this.options.log.error(`root certificate check failed: ${e.message}; retrying in one check interval`),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule(this.options.checkIntervalMs);
        });
    }, ms);
  }

  /** Stops scheduling and waits for a check in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.clearTimeout(this.handle);
    await this.running;
  }
}
