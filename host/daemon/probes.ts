import { closeSync, openSync, rmSync, statSync, utimesSync } from "node:fs";
import { formatGoDuration } from "./duration.ts";

/**
 * File probes (upstream pkg/probe): while the component is healthy its probe
 * file is touched every interval; when it is not, the file is removed. An
 * orchestrator runs `hubs probe --probe-path P --interval D`, which succeeds
 * while the file is younger than D.
 */
export class ProbeFile {
  private timer?: NodeJS.Timeout;

  constructor(
    readonly path: string,
    readonly intervalMs: number,
    private readonly healthy: () => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** Updates the file once now and then every interval. */
  start(): void {
    this.update();
    this.timer = setInterval(() => this.update(), this.intervalMs);
    this.timer.unref();
  }

  update(): void {
    try {
      if (this.healthy()) {
        const t = new Date(this.now());
        try {
          utimesSync(this.path, t, t);
        } catch {
          closeSync(openSync(this.path, "a"));
          utimesSync(this.path, t, t);
        }
      } else {
        rmSync(this.path, { force: true });
      }
    } catch {
      // an unwritable probe path shows up as a failing probe, which is the signal wanted
    }
  }

  stop(removeFile = true): void {
    clearInterval(this.timer);
    if (removeFile) rmSync(this.path, { force: true });
  }
}

/** The verdict of `probe`: undefined when fresh, else why not. */
export function checkProbeFile(path: string, intervalMs: number, now: number = Date.now()): string | undefined {
  if (!path) return "--probe-path is required";
  if (!(intervalMs > 0)) return "--interval must be a positive duration";
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return `probe file ${path} does not exist`;
  const age = now - st.mtimeMs;
  if (age > intervalMs)
    return `probe file ${path} is stale: last updated ${formatGoDuration(Math.round(age))} ago, more than the interval ${formatGoDuration(intervalMs)}`;
  return undefined;
}
