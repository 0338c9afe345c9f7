import type { WorkloadCertificate } from "./workload_certificate.ts";
import { NODE_TIMERS, type Timers } from "./timers.ts";

export const DEFAULT_RETRY_INITIAL_MS = 1000;
export const DEFAULT_RETRY_MAX_MS = 30_000;

export interface CertificateRotatorOptions {
  /** Obtains a fresh certificate, e.g. `() => requestWorkloadCertificate({...})`. */
  fetch: () => Promise<WorkloadCertificate>;
  /** Called with every new certificate (the first one too): swap it into the TLS contexts here. */
  onCertificate: (cert: WorkloadCertificate) => void;
  /** Called on each failed attempt, with the delay before the next one. */
  onError?: (error: Error, retryInMs: number) => void;
  now?: () => number;
  timers?: Timers;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

/**
 * Keeps a workload certificate fresh: fetches one, then renews it at its
 * `rotateAt` (the CA's grace ratio), retrying failures with doubling delays
 * (retryInitialMs … retryMaxMs) while the current certificate is still in use.
 * Clock and timers are injected so tests advance time instead of sleeping;
 * a timer firing early (Node caps one timeout at about 24.8 days) just waits again.
 */
export class CertificateRotator {
  private handle: unknown;
  private stopped = false;
  private failures = 0;
  private readonly now: () => number;
  private readonly timers: Timers;
  current?: WorkloadCertificate;

  constructor(private readonly options: CertificateRotatorOptions) {
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? NODE_TIMERS;
  }

  /** Fetches the first certificate (rejects if that fails) and schedules its renewal. */
  async start(): Promise<WorkloadCertificate> {
    const cert = await this.options.fetch();
    this.accept(cert);
    return cert;
  }

  /** Renews now, whatever rotateAt says (e.g. after the trust bundle changed). */
  rotateNow(): Promise<void> {
    this.timers.clearTimeout(this.handle);
    return this.attempt();
  }

  stop(): void {
    this.stopped = true;
    this.timers.clearTimeout(this.handle);
  }

  private accept(cert: WorkloadCertificate): void {
    this.current = cert;
    this.failures = 0;
    this.options.onCertificate(cert);
    this.scheduleAt(cert.rotateAt.getTime());
  }

  private scheduleAt(at: number): void {
    if (this.stopped) return;
    this.timers.clearTimeout(this.handle);
    const delay = Math.max(0, at - this.now());
    this.handle = this.timers.setTimeout(() => {
      if (this.now() < at) this.scheduleAt(at);
      else void this.attempt();
    }, delay);
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    try {
      const cert = await this.options.fetch();
      if (!this.stopped) this.accept(cert);
    } catch (e) {
      if (this.stopped) return;
      const initial = this.options.retryInitialMs ?? DEFAULT_RETRY_INITIAL_MS;
      const delay = Math.min(initial * 2 ** this.failures, this.options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS);
      this.failures++;
      this.options.onError?.(e as Error, delay);
      this.scheduleAt(this.now() + delay);
    }
  }
}
