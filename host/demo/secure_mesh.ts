import { existsSync } from "node:fs";
import { join } from "node:path";
import { startEchoApp } from "./echo_app.ts";
import { AGENT_BIN, type SidecarListening } from "./local_mesh.ts";
import { type Daemon, startDaemon } from "./processes.ts";

/**
 * Loopback building blocks for the sidecar's security path (issue 6): a
 * `mesh_ca` process and workloads (an echo app with a `disco-agent proxy`
 * in front of it, or an ingress gateway). Used by test/e2e/security_*.test.ts
 * and meant for a scenario runner: every sidecar setting is a flag.
 */

export const MESH_CA_BIN = join(AGENT_BIN, "..", "mesh_ca.mjs");

export interface CaListening {
  grpc: string;
  grpcPort: number;
  monitoringPort: number;
}

/** `mesh_ca --self-signed-ca` on ephemeral loopback ports. */
export async function startMeshCa(args: string[] = []): Promise<Daemon<CaListening> & { address: string }> {
  if (!existsSync(MESH_CA_BIN)) throw new Error(`${MESH_CA_BIN} is missing: run node build/build.mjs first`);
  const ca = await startDaemon<CaListening>(
    MESH_CA_BIN,
    ["--self-signed-ca", "--grpc-port", "0", "--grpc-address", "127.0.0.1", "--monitoring-port", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1", ...args],
    "mesh_ca listening ",
    60_000,
    { ...process.env, ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false" },
  );
  return { ...ca, address: `127.0.0.1:${ca.listening.grpcPort}` };
}

export interface WorkloadOptions {
  name: string;
  namespace: string;
  configDir: string;
  caAddress: string;
  serviceAccount?: string;
  labels?: Record<string, string>;
  /** Container port the sidecar's inbound listener stands for (default 80). */
  containerPort?: number;
  /** `--endpoint` values. */
  endpoints?: string[];
  meshConfigFile?: string;
  gateway?: boolean;
  /** Reuse an app (several container ports of one workload); default: a new echo app. */
  app?: Awaited<ReturnType<typeof startEchoApp>>;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
}

export interface SecureWorkload {
  app: Awaited<ReturnType<typeof startEchoApp>>;
  sidecar: Daemon<SidecarListening>;
  inbound: number;
  outbound: number;
  adminUrl: string;
  stop(): Promise<void>;
}

/** An echo app and its sidecar with the security path on (ECDSA workload keys, for speed). */
export async function startSecureWorkload(o: WorkloadOptions): Promise<SecureWorkload> {
  const ownApp = o.app === undefined;
  const app = o.app ?? (await startEchoApp());
  const labels = Object.entries(o.labels ?? { app: o.name }).map(([k, v]) => `${k}=${v}`).join(",");
  const args = [
    "proxy",
    "--inboundPort", "0",
    "--outboundPort", "0",
    "--proxyAdminPort", "0",
    "--appPort", String(app.port),
    "--containerPort", String(o.containerPort ?? 80),
    "--configDir", o.configDir,
    "--caAddress", o.caAddress,
    "--serviceAccount", o.serviceAccount ?? o.name,
    "--labels", labels,
    "--workloadKeyAlgorithm", "ECDSA",
    ...(o.meshConfigFile ? ["--meshConfigFile", o.meshConfigFile] : []),
    ...(o.gateway ? ["--gateway"] : []),
    ...(o.endpoints ?? []).flatMap((e) => ["--endpoint", e]),
    ...(o.extraArgs ?? []),
  ];
  let sidecar: Daemon<SidecarListening>;
  try {
    sidecar = await startDaemon<SidecarListening>(AGENT_BIN, args, "disco-agent listening ", 60_000, { ...process.env, POD_NAME: o.name, POD_NAMESPACE: o.namespace, ...(o.env ?? {}) });
  } catch (e) {
    if (ownApp) app.server.close();
    throw e;
  }
  return {
    app,
    sidecar,
    inbound: sidecar.listening.inbound,
    outbound: sidecar.listening.outbound,
    adminUrl: `http://127.0.0.1:${sidecar.listening.admin}`,
    async stop() {
      await sidecar.stop();
      if (ownApp) {
        app.server.closeAllConnections();
        await new Promise<void>((resolve) => app.server.close(() => resolve()));
      }
    },
  };
}
