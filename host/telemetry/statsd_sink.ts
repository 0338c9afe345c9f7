import { createSocket, type Socket } from "node:dgram";
import { isIP } from "node:net";

/** Envoy's stats flush interval (bootstrap `stats_flush_interval`), which its statsd sink follows. */
export const STATSD_FLUSH_INTERVAL_MS = 5000;
/** Envoy's statsd sink prefixes every name with this (its `prefix` default). */
export const STATSD_PREFIX = "envoy";
/** Lines are packed into datagrams up to this size (below a 1500-byte MTU less IP and UDP headers). */
const MAX_DATAGRAM_BYTES = 1432;

/** The sidecar's stats at one moment: every value by name, and which of them are gauges (the rest are counters). */
export interface StatsSnapshot {
  values: ReadonlyMap<string, number | bigint>;
  gauges: ReadonlySet<string>;
}

export interface StatsdSinkOptions {
  /** `--metricsdUdpAddress` as parsed by `parseStatsdAddress`. */
  host: string;
  port: number;
  snapshot: () => StatsSnapshot;
  intervalMs?: number;
  prefix?: string;
  onError?: (error: Error) => void;
}

/** `IP:port` (`[v6]:port` too) of `--metricsdUdpAddress`; throws naming the flag. */
export function parseStatsdAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || !host || port < 1 || port > 65535 || (m[1] !== undefined && isIP(m[1]) !== 6)) {
    throw new Error(`--metricsdUdpAddress: expected IP:port of a metrics daemon's UDP listener, got ${JSON.stringify(text)}`);
  }
  return { host, port };
}

/**
 * The statsd lines of one flush, as Envoy's UDP statsd sink writes them:
 * each counter that was ever used as its increase since the last flush
 * (`name:delta|c`), each gauge as its value (`name:value|g`). `last` holds
 * the counters' values at the previous flush and is updated.
 */
export function statsdLines(snapshot: StatsSnapshot, last: Map<string, number>, prefix: string): string[] {
  const lines: string[] = [];
  for (const [name, raw] of snapshot.values) {
    const value = Number(raw);
    const stat = `${prefix ? `${prefix}.` : ""}${name}`;
    if (snapshot.gauges.has(name)) {
      lines.push(`${stat}:${value}|g`);
      continue;
    }
    const previous = last.get(name);
    last.set(name, value);
    if (value === 0 && previous === undefined) continue; // never used
    // A counter that went down was reset (e.g. a configuration reload): its new value is the increase.
    lines.push(`${stat}:${previous === undefined || value < previous ? value : value - previous}|c`);
  }
  return lines;
}

/** Lines packed into datagrams of at most MAX_DATAGRAM_BYTES, newline-separated (a line is never split). */
export function datagrams(lines: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  let current = "";
  for (const line of lines) {
    if (current && Buffer.byteLength(current) + 1 + Buffer.byteLength(line) > MAX_DATAGRAM_BYTES) {
      out.push(Buffer.from(current));
      current = "";
    }
    current = current ? `${current}\n${line}` : line;
  }
  if (current) out.push(Buffer.from(current));
  return out;
}

/**
 * `--metricsdUdpAddress`: the sidecar's stats sent to a metrics daemon
 * (statsd) over UDP every flush interval, and once more when it stops.
 */
export class StatsdSink {
  private readonly socket: Socket;
  private readonly last = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: StatsdSinkOptions) {
    this.socket = createSocket(options.host.includes(":") ? "udp6" : "udp4");
    this.socket.on("error", (e) => options.onError?.(e));
    this.socket.unref();
    this.timer = setInterval(() => this.flush(), options.intervalMs ?? STATSD_FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  flush(): void {
    for (const packet of datagrams(statsdLines(this.options.snapshot(), this.last, this.options.prefix ?? STATSD_PREFIX))) {
      this.socket.send(packet, this.options.port, this.options.host, (e) => e && this.options.onError?.(e));
    }
  }

  /** A last flush, then the socket closes once it is sent. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const lines = statsdLines(this.options.snapshot(), this.last, this.options.prefix ?? STATSD_PREFIX);
    await Promise.all(datagrams(lines).map((p) => new Promise<void>((resolve) => this.socket.send(p, this.options.port, this.options.host, () => resolve()))));
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
