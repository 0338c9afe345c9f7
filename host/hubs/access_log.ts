import { createWriteStream, type WriteStream } from "node:fs";
import { attributesToJson } from "../wire/attribute_json.ts";
import type { AttributeMap } from "../wire/compressed.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";

/**
 * One access-log line: the time the hub received the report and the
 * request's attributes in the proto3 JSON mapping, names sorted, e.g.
 * `{"time":"2026-05-01T10:00:00.000Z","attributes":{"request.path":{"stringValue":"/a"},"response.code":{"int64Value":"200"}}}`.
 */
export function accessLogLine(time: Date, attributes: AttributeMap): string {
  return `${JSON.stringify({ time: time.toISOString(), attributes: attributesToJson(Object.fromEntries(attributes)) })}\n`;
}

/** Appends to access-log files, one open stream per path. */
export class AccessLogWriter {
  private readonly streams = new Map<string, WriteStream>();

  /** `onOpenFailed` hears of each path that cannot be opened or written (hub_handler_handler_build_failures_total). */
  constructor(
    private readonly log: ScopedLogger,
    private readonly onOpenFailed?: (path: string) => void,
  ) {}

  private stream(path: string): WriteStream {
    let s = this.streams.get(path);
    if (s === undefined) {
      s = createWriteStream(path, { flags: "a" });
      const opened = s;
      opened.on("error", (e) => {
        this.log.error(`access log ${path}: ${e.message}`);
        this.onOpenFailed?.(path);
        if (this.streams.get(path) === opened) this.streams.delete(path);
      });
      this.streams.set(path, s);
    }
    return s;
  }

  /** Resolves true once the text is handed to the OS, false (logged) when the file cannot be written. */
  append(path: string, text: string): Promise<boolean> {
    return new Promise((resolve) => {
      const s = this.stream(path);
      if (s.destroyed) {
        this.streams.delete(path);
        resolve(false);
        return;
      }
      s.write(text, (err) => resolve(!err));
    });
  }

  /** Closes the streams of paths no longer configured. */
  retain(paths: ReadonlySet<string>): void {
    for (const [path, s] of this.streams) {
      if (!paths.has(path)) {
        s.end();
        this.streams.delete(path);
      }
    }
  }

  close(): Promise<void> {
    const all = [...this.streams.values()].map((s) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.end(resolve))));
    this.streams.clear();
    return Promise.all(all).then(() => undefined);
  }
}
