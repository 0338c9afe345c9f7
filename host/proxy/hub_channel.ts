import type { Cluster } from "../hub/clusters.ts";
import { type HubCaller, type HubTlsOptions, HubTransport } from "../hub/transport.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";

/** The sidecar's calls to the hub (`--cluster hub_server=…`) and their `/stats` counters. */
export interface HubChannel {
  transport: HubTransport;
  /** What the filter module's gRPC calls go through: counted, then the transport. */
  hub: HubCaller;
  /** `hub_transport.*` (calls, failed attempts, retries, failed calls); other sidecar counters are added here too. */
  stats: Map<string, number>;
}

/** `credentials`: the hub's mutual TLS under MUTUAL_TLS (undefined: plain text). Failed attempts are logged in scope `hub`. */
export function hubChannel(clusters: ReadonlyMap<string, Cluster>, credentials: (() => HubTlsOptions) | undefined, hubLog: ScopedLogger): HubChannel {
  const stats = new Map<string, number>([
    ["hub_transport.calls", 0],
    ["hub_transport.failed_attempts", 0],
    ["hub_transport.retries", 0],
    ["hub_transport.failed_calls", 0],
  ]);
  const bump = (name: string) => stats.set(name, (stats.get(name) ?? 0) + 1);
  const transport = new HubTransport({
    clusters,
    credentials,
    onAttemptFailed: (a) => {
      bump("hub_transport.failed_attempts");
      if (a.retryInMs !== undefined) bump("hub_transport.retries");
      hubLog.warn(
        `${a.cluster} ${a.method} attempt ${a.attempt} failed: ${a.status.code} ${a.status.message}${a.retryInMs !== undefined ? `; retrying in ${a.retryInMs} ms` : ""}`,
      );
    },
  });
  return {
    transport,
    stats,
    hub: {
      async call(call) {
        bump("hub_transport.calls");
        const result = await transport.call(call);
        if (!result.ok) bump("hub_transport.failed_calls");
        return result;
      },
    },
  };
}
