import { mkdirSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { startEchoApp } from "../../../demo/echo_app.ts";
import { closeServer } from "../../../telemetry/http_listen.ts";
import type { FilterModule } from "../../../wasm/filter_module.ts";
import type { SimulateCa } from "./ca.ts";
import { startJwksServer } from "./jwks_server.ts";
import { mapJwksUris, workloadServiceFqdn } from "./resources.ts";
import type { Scenario, WorkloadSpec } from "./scenario.ts";
import { type SimulatedSidecar, startSimulatedSidecar } from "./sidecar.ts";
import type { AgentEnvironment } from "../../../proxy/agent_options.ts";
import type { StartLimit } from "./start_limit.ts";
import type { TokenKeys } from "./tokens.ts";

/** The service a jwks-server always answers for (issue 6 item 6). */
export const JWKS_ORIGIN = "http://jwks.mesh-system.svc.cluster.local:8000";

type EchoApp = Awaited<ReturnType<typeof startEchoApp>>;

/** One workload of a running scenario. */
export interface RunningWorkload {
  readonly spec: WorkloadSpec;
  /** The echo app (apps and external servers): what the destination received. */
  readonly app?: EchoApp;
  /** One sidecar per container port. */
  readonly sidecars: ReadonlyMap<number, SimulatedSidecar>;
  /** The loopback port standing for a container port: the sidecar's inbound listener, else the server itself. */
  address(containerPort: number): number | undefined;
}

/** The processes and servers of one scenario, and how to reach them. */
export interface ScenarioMesh {
  readonly workloads: ReadonlyMap<string, RunningWorkload>;
  /** `--endpoint` values: the service registry every sidecar was given. */
  readonly endpoints: readonly string[];
  stop(): Promise<void>;
}

/**
 * Starts a scenario on loopback: echo apps, jwks servers, one sidecar per
 * container port of each proxied workload (configuration directory
 * `dir/config`, mesh settings `dir/mesh.yaml`). Servers start first; the
 * ingress gateways and then the client (`request.from`) start last, with the
 * registry of everything started before them. On failure, whatever started
 * is stopped before the error is rethrown. `adopt` receives the stop
 * function before anything starts. `shared`: what the run's scenarios share
 * (the CA of the scenario's trust domain, the filter module for checks).
 */
export async function startScenarioMesh(
  scenario: Scenario,
  documents: readonly Record<string, unknown>[],
  keys: TokenKeys,
  shared: { ca: SimulateCa; checks: FilterModule; agentEnv?: AgentEnvironment },
  dir: string,
  limit: StartLimit,
  adopt: (stop: () => Promise<void>) => void = () => undefined,
): Promise<ScenarioMesh> {
  const configDir = join(dir, "config");
  mkdirSync(configDir, { recursive: true });
  const meshFile = join(dir, "mesh.yaml");
  writeFileSync(meshFile, `${JSON.stringify(scenario.meshConfig)}\n`);
  const running = new Map<string, RunningWorkload>();
  const servers: Server[] = [];
  const sidecars: SimulatedSidecar[] = [];
  const endpoints: string[] = [];
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await Promise.all(sidecars.map((s) => s.stop().catch(() => undefined)));
      await Promise.all(servers.map((s) => (s.closeAllConnections(), closeServer(s).catch(() => undefined))));
    })());
  // The caller can stop a mesh still starting (a signal); sidecars that finish starting after that are stopped at once.
  adopt(stop);
  try {
    // Phase 1: jwks servers (their URIs go into the configuration), then the configuration.
    const origins = new Map<string, string>();
    const jwksWorkloads = scenario.workloads.filter((x) => x.kind === "jwks-server");
    const jwksServers = await Promise.all(jwksWorkloads.map(() => startJwksServer(keys.jwks("key-1"))));
    for (const [i, w] of jwksWorkloads.entries()) {
      const jwks = jwksServers[i];
      servers.push(jwks.server);
      const local = `http://127.0.0.1:${jwks.port}`;
      origins.set(JWKS_ORIGIN, local);
      for (const p of w.ports)
        if (w.service && p.servicePort !== null) origins.set(`http://${workloadServiceFqdn(w.service, w.namespace)}:${p.servicePort}`, local);
      running.set(w.id, { spec: w, sidecars: new Map(), address: () => jwks.port });
    }
    writeFileSync(join(configDir, "resources.json"), `${JSON.stringify(mapJwksUris(documents, origins), null, 1)}\n`);

    const register = (r: RunningWorkload) => {
      const w = r.spec;
      running.set(w.id, r);
      for (const p of w.ports) {
        const at = r.address(p.containerPort);
        if (at === undefined) continue;
        const proxied = r.sidecars.size > 0 && w.kind !== "ingress-gateway" ? `,sidecar,sa=${w.serviceAccount}` : "";
        // The workload's labels travel with its endpoint: DestinationRule subsets select endpoints by them.
        const labels = Object.entries(w.labels)
          .map(([k, v]) => `,label=${k}=${v}`)
          .join("");
        if (w.service && p.servicePort !== null)
          endpoints.push(`${workloadServiceFqdn(w.service, w.namespace)}:${p.servicePort}=127.0.0.1:${at}${proxied}${labels}`);
        // An external server's own name stands in for DNS only where the mesh passes unknown hosts through.
        if (w.hostname && w.kind === "external-server" && scenario.mesh.outboundTrafficPolicy === "ALLOW_ANY")
          endpoints.push(`${w.hostname}:${p.servicePort ?? p.containerPort}=127.0.0.1:${at}`);
      }
    };
    const start = async (w: WorkloadSpec): Promise<RunningWorkload> => {
      const proxied = w.sidecar && (w.kind === "app" || w.kind === "ingress-gateway");
      const app = w.kind === "ingress-gateway" ? undefined : await startEchoApp();
      if (app) servers.push(app.server);
      // A gateway routes by Host and never forwards to an app of its own; it still gets one to stand behind, as a sidecar does.
      const behind = app ?? (proxied ? await startEchoApp() : undefined);
      if (behind && behind !== app) servers.push(behind.server);
      const byPort = new Map<number, SimulatedSidecar>();
      if (proxied) {
        const started = await Promise.all(
          w.ports.map((p) =>
            limit(() =>
              stopped
                ? Promise.reject(new Error("scenario stopped"))
                : startSimulatedSidecar({
                    agentEnv: shared.agentEnv,
                    name: w.name,
                    namespace: w.namespace,
                    configDir,
                    ca: shared.ca,
                    checks: shared.checks,
                    serviceAccount: w.serviceAccount,
                    labels: { ...w.labels },
                    containerPort: p.containerPort,
                    appPort: behind!.port,
                    endpoints: [...endpoints],
                    meshConfigFile: meshFile,
                    trustDomain: scenario.mesh.trustDomain,
                    gateway: w.kind === "ingress-gateway",
                  }),
            ).then((s) => {
              sidecars.push(s);
              if (stopped) void s.stop();
              return [p.containerPort, s] as const;
            }),
          ),
        );
        for (const [port, s] of started) byPort.set(port, s);
      }
      return {
        spec: w,
        app,
        sidecars: byPort,
        address: (containerPort) =>
          byPort.size > 0 ? byPort.get(containerPort)?.inbound : w.ports.some((p) => p.containerPort === containerPort) ? app?.port : undefined,
      };
    };
    const servesOnly = scenario.workloads.filter(
      (w) => w.kind !== "jwks-server" && w.kind !== "external-client" && w.kind !== "ingress-gateway" && w.id !== scenario.request.from,
    );
    for (const r of await Promise.all(servesOnly.map(start))) register(r);
    const gateways = scenario.workloads.filter((w) => w.kind === "ingress-gateway" && w.id !== scenario.request.from);
    for (const r of await Promise.all(gateways.map(start))) register(r);
    const client = scenario.workloads.find((w) => w.id === scenario.request.from)!;
    if (client.kind === "external-client") running.set(client.id, { spec: client, sidecars: new Map(), address: () => undefined });
    else register(await start(client));
  } catch (e) {
    await stop();
    throw e;
  }
  return { workloads: running, endpoints, stop };
}
