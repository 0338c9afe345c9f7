import { closeSync, openSync, writeSync } from "node:fs";
import type { OutlierEvent } from "./cluster/outlier_detection.ts";

/**
 * One line of Envoy's outlier detection event log (`--outlierLogPath`): an
 * envoy.data.cluster.v3.OutlierDetectionEvent as Envoy prints it, proto3
 * JSON with the proto's field names, in field order, primitive fields
 * always printed (so an UNEJECT carries `type` CONSECUTIVE_5XX and
 * `enforced` false, as Envoy's do), `secs_since_last_action` (a
 * UInt64Value: a string) only after a previous action.
 */
export function outlierEventJson(e: OutlierEvent): string {
  return JSON.stringify({
    type: e.type ?? "CONSECUTIVE_5XX",
    timestamp: new Date(e.at).toISOString(),
    ...(e.secsSinceLastAction !== undefined ? { secs_since_last_action: String(e.secsSinceLastAction) } : {}),
    cluster_name: e.cluster,
    upstream_url: e.endpoint,
    action: e.action,
    num_ejections: e.numEjections,
    enforced: e.enforced,
    ...(e.action === "EJECT" ? { eject_consecutive_event: {} } : {}),
  });
}

/**
 * The event log file, opened for appending at start (a path that cannot be
 * opened stops the sidecar there), one JSON line per event.
 */
export class OutlierEventLog {
  private fd: number | undefined;

  constructor(
    readonly path: string,
    private readonly onError: (e: Error) => void,
  ) {
    this.fd = openSync(path, "a");
  }

  write(event: OutlierEvent): void {
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, `${outlierEventJson(event)}\n`);
    } catch (e) {
      this.onError(e as Error);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
