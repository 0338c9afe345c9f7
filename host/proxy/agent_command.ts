import { existsSync } from "node:fs";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../cli/exit_codes.ts";
import type { Logger } from "../telemetry/logger.ts";
import { FilterModule, RELEASE_WASM } from "../wasm/filter_module.ts";
import { parseClusters } from "../hub/clusters.ts";
import { HubTransport } from "../hub/transport.ts";
import type { GrpcCall } from "../wasm/abi_types.ts";
import { LISTENING_LINE_PREFIX, Sidecar } from "./sidecar.ts";

export const SIDECAR_LOG_SCOPES = ["default", "filter", "hub", "config"] as const;

/** Environment variables of the seed that apply to the sidecar. */
export interface AgentEnvironment {
  POD_NAME?: string;
  POD_NAMESPACE?: string;
  INSTANCE_IP?: string;
  /** Overrides --drainDuration (seconds). */
  TERMINATION_DRAIN_DURATION_SECONDS?: string;
}

/**
 * `disco-agent proxy`: starts the sidecar, prints the listening line, and on
 * SIGTERM/SIGINT stops accepting, drains requests in flight and exits 0.
 */
export async function runProxyCommand(opts: Record<string, unknown>, logger: Logger, env: AgentEnvironment): Promise<number> {
  const log = logger.scope("default");
  const configDir = opts.configDir as string | undefined;
  if (!configDir || !existsSync(configDir)) {
    log.error(`--configDir: expected an existing directory, got ${JSON.stringify(configDir ?? "")}`);
    return EXIT_BAD_CONFIG;
  }
  let clusters;
  try {
    clusters = parseClusters(opts.cluster as string[]);
  } catch (e) {
    log.error((e as Error).message);
    return EXIT_BAD_CONFIG;
  }
  const namespace = env.POD_NAMESPACE ?? "default";
  const identity = {
    id: (opts.id as string) || `${env.POD_NAME ?? "sidecar"}.${namespace}`,
    ip: (opts.ip as string) || (env.INSTANCE_IP ?? ""),
    domain: (opts.domain as string) || `${namespace}.svc.cluster.local`,
    serviceCluster: opts.serviceCluster as string,
  };
  const hubLog = logger.scope("hub");
  const transportStats = new Map<string, number>([
    ["hub_transport.calls", 0],
    ["hub_transport.failed_attempts", 0],
    ["hub_transport.retries", 0],
    ["hub_transport.failed_calls", 0],
  ]);
  const bump = (name: string) => transportStats.set(name, (transportStats.get(name) ?? 0) + 1);
  const transport = new HubTransport({
    clusters,
    onAttemptFailed: (a) => {
      bump("hub_transport.failed_attempts");
      if (a.retryInMs !== undefined) bump("hub_transport.retries");
      hubLog.warn(`${a.cluster} ${a.method} attempt ${a.attempt} failed: ${a.status.code} ${a.status.message}${a.retryInMs !== undefined ? `; retrying in ${a.retryInMs} ms` : ""}`);
    },
  });
  const hub = {
    async call(call: GrpcCall) {
      bump("hub_transport.calls");
      const result = await transport.call(call);
      if (!result.ok) bump("hub_transport.failed_calls");
      return result;
    },
  };
  const wasm = (opts.wasm as string | undefined) ?? RELEASE_WASM;
  const checks = FilterModule.load(wasm);
  const sidecar = new Sidecar({
    wasm,
    configDir,
    bindAddress: opts.bindAddress as string,
    inboundPort: opts.inboundPort as number,
    outboundPort: opts.outboundPort as number,
    adminPort: opts.proxyAdminPort as number,
    statusPort: opts.statusPort as number,
    tcpPort: opts.tcpPort === undefined ? -1 : (opts.tcpPort as number),
    tcpAppPort: (opts.tcpAppPort as number | undefined) ?? (opts.appPort as number),
    appHost: opts.appHost as string,
    appPort: opts.appPort as number,
    clusters: new Map(
      [...clusters.values()].flatMap((c) => (c.address.kind === "tcp" ? [[c.name, { host: c.address.host, port: c.address.port }] as const] : [])),
    ),
    inboundService: opts.inboundService as string,
    hub,
    extraStats: () => transportStats,
    checks: { template: (t) => checks.checkTemplate(t), regex: (p) => checks.checkRegex(p) },
    logger,
    identity,
  });
  let addresses;
  try {
    addresses = await sidecar.start();
  } catch (e) {
    log.error((e as Error).message);
    transport.close();
    return EXIT_BAD_CONFIG;
  }
  process.stdout.write(`${LISTENING_LINE_PREFIX}${JSON.stringify(addresses)}\n`);
  const drainSeconds = Number(env.TERMINATION_DRAIN_DURATION_SECONDS);
  const drainMs = Number.isFinite(drainSeconds) && drainSeconds >= 0 && env.TERMINATION_DRAIN_DURATION_SECONDS !== undefined ? drainSeconds * 1000 : (opts.drainDuration as number);
  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info(`${signal}: draining for up to ${drainMs} ms`);
      const hardStop = setTimeout(() => resolve(EXIT_FAILURE), Math.max(drainMs, opts.parentShutdownDuration as number) + 5000);
      hardStop.unref();
      sidecar.drain(drainMs).then(
        () => {
          transport.close();
          log.info("drained; exiting");
          resolve(EXIT_OK);
        },
        (e) => {
          log.error(`shutdown failed: ${(e as Error).message}`);
          resolve(EXIT_FAILURE);
        },
      );
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
}
