import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startEchoApp, startTcpEchoApp } from "./echo_app.ts";
import { AGENT_BIN, DEMO_DIR, HUBS_BIN, type SidecarListening } from "./binaries.ts";
import { type Daemon, ownedTempDir, removeOwnedTempDir, startDaemon } from "./processes.ts";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "./secure_mesh.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../config/mesh_config.ts";

export { AGENT_BIN, DEMO_DIR, HUBS_BIN, type SidecarListening } from "./binaries.ts";
export const DEMO_SERVICE = "petstore.demo.svc.cluster.local";

export interface HubListening {
  grpcPort: number;
  /** true when the hub serves mutual TLS. */
  grpcTls?: boolean;
  monitoringPort: number;
}

export interface LocalMeshOptions {
  /** Hub rules (YAML documents); default: host/demo/hub-rules.yaml. */
  hubConfig?: string;
  /** Sidecar resources (YAML documents); default: host/demo/petstore.yaml. */
  sidecarConfig?: string;
  /** Extra `disco-agent proxy` flags. */
  agentArgs?: string[];
  /** Extra `hubs server` flags. */
  hubArgs?: string[];
  /** Extra `mesh_ca` flags (with `secure`). */
  caArgs?: string[];
  agentEnv?: NodeJS.ProcessEnv;
  /** Also run a TCP echo app behind a TCP listener (the filter's TCP mode). */
  tcp?: boolean;
  /**
   * Run mesh_ca too and secure the control plane: the sidecar obtains its
   * certificate with a service-account token (`--caAddress`, `--tokenPath`)
   * and reaches mesh_ca and the hub over mutual TLS
   * (`--controlPlaneAuthPolicy MUTUAL_TLS`); the hub serves mutual TLS with
   * a certificate of its own (`--caCertFile/--certFile/--keyFile`).
   */
  secure?: boolean;
}

/** The hub's service account in the secure local mesh (namespace mesh-system). */
export const HUB_SERVICE_ACCOUNT = "mesh-hub-service-account";

export interface LocalMesh {
  hub: Daemon<HubListening>;
  /** With `secure`. */
  ca?: MeshCa;
  app: Awaited<ReturnType<typeof startEchoApp>>;
  tcpApp?: Awaited<ReturnType<typeof startTcpEchoApp>>;
  sidecar: Daemon<SidecarListening>;
  hubConfigDir: string;
  sidecarConfigDir: string;
  accessLog: string;
  inboundUrl: string;
  adminUrl: string;
  stop(): Promise<void>;
}

/**
 * A mesh on loopback: a `hubs server` process with rules, the echo app, and
 * a `disco-agent proxy` process in front of it running build/filter.wasm.
 * Every port is ephemeral. Used by `npm start`, the end-to-end tests and the
 * sidecar benchmark.
 */
/** `disco-agent proxy`'s flags for the demo's sidecar: in front of the app at `appPort`, its resources in `configDir`, its hub at `hubPort`. */
export function demoSidecarArgs(appPort: number, configDir: string, hubPort: number): string[] {
  return [
    "proxy",
    "--inboundPort",
    "0",
    "--outboundPort",
    "0",
    "--proxyAdminPort",
    "0",
    "--appPort",
    String(appPort),
    "--configDir",
    configDir,
    "--cluster",
    `hub_server=127.0.0.1:${hubPort}`,
    "--inboundService",
    DEMO_SERVICE,
  ];
}

/** `hubs server`'s flags for a hub on loopback, every listener on an ephemeral port (its listening line says which). */
export function loopbackHubArgs(): string[] {
  return ["server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1"];
}

export async function startLocalMesh(options: LocalMeshOptions = {}): Promise<LocalMesh> {
  // Temporary: removed by stop, on a failed start, and on exit or a signal.
  const hubConfigDir = ownedTempDir("mesh-hub-");
  const sidecarConfigDir = ownedTempDir("mesh-sidecar-");
  const removeDirs = () => [hubConfigDir, sidecarConfigDir].forEach(removeOwnedTempDir);
  const accessLog = join(hubConfigDir, "access.jsonl");
  writeFileSync(join(hubConfigDir, "rules.yaml"), options.hubConfig ?? readFileSync(join(DEMO_DIR, "hub-rules.yaml"), "utf8"));
  writeFileSync(
    join(hubConfigDir, "access-log.yaml"),
    `apiVersion: config.mesh.io/v1alpha2\nkind: HubAccessLog\nmetadata: {name: all, namespace: mesh-system}\nspec: {path: ${accessLog}}\n`,
  );
  writeFileSync(join(sidecarConfigDir, "config.yaml"), options.sidecarConfig ?? readFileSync(join(DEMO_DIR, "petstore.yaml"), "utf8"));

  const ca = options.secure ? await startMeshCa(options.caArgs ?? []) : undefined;
  let hub: Daemon<HubListening>;
  const secureAgentArgs: string[] = [];
  try {
    const hubTls = ca ? await writeWorkloadCertFiles(ca, DEFAULT_ROOT_NAMESPACE, HUB_SERVICE_ACCOUNT, join(hubConfigDir, "certs")) : undefined;
    hub = await startDaemon<HubListening>(
      HUBS_BIN,
      [
        ...loopbackHubArgs(),
        "--configStoreURL",
        `fs://${hubConfigDir}`,
        "--configDefaultNamespace",
        DEFAULT_ROOT_NAMESPACE,
        ...(hubTls ? ["--caCertFile", hubTls.caCertFile, "--certFile", hubTls.certFile, "--keyFile", hubTls.keyFile] : []),
        ...(options.hubArgs ?? []),
      ],
      "hubs listening ",
      undefined,
    );
    if (ca) {
      secureAgentArgs.push(
        "--caAddress",
        ca.address,
        "--caRootCert",
        ca.rootCertFile,
        "--tokenPath",
        await ca.tokenFile("demo", "petstore"),
        "--serviceAccount",
        "petstore",
        "--controlPlaneAuthPolicy",
        "MUTUAL_TLS",
        "--hubIdentity",
        HUB_SERVICE_ACCOUNT,
        "--workloadKeyAlgorithm",
        "ECDSA",
      );
    }
  } catch (e) {
    await ca?.stop();
    removeDirs();
    throw e;
  }
  const app = await startEchoApp();
  const tcpApp = options.tcp ? await startTcpEchoApp() : undefined;
  let sidecar: Daemon<SidecarListening>;
  try {
    sidecar = await startDaemon<SidecarListening>(
      AGENT_BIN,
      [
        ...demoSidecarArgs(app.port, sidecarConfigDir, hub.listening.grpcPort),
        ...(tcpApp ? ["--tcpPort", "0", "--tcpAppPort", String(tcpApp.port)] : []),
        ...secureAgentArgs,
        ...(options.agentArgs ?? []),
      ],
      "disco-agent listening ",
      undefined,
      { ...process.env, POD_NAME: "petstore-v1", POD_NAMESPACE: "demo", ...(options.agentEnv ?? {}) },
    );
  } catch (e) {
    await hub.stop();
    await ca?.stop();
    tcpApp?.server.close();
    app.server.close();
    removeDirs();
    throw e;
  }
  return {
    hub,
    ca,
    app,
    tcpApp,
    sidecar,
    hubConfigDir,
    sidecarConfigDir,
    accessLog,
    inboundUrl: `http://127.0.0.1:${sidecar.listening.inbound}`,
    adminUrl: `http://127.0.0.1:${sidecar.listening.admin}`,
    async stop() {
      await sidecar.stop();
      await hub.stop();
      await ca?.stop();
      tcpApp?.server.close();
      app.server.closeAllConnections();
      await new Promise<void>((resolve) => app.server.close(() => resolve()));
      removeDirs();
    },
  };
}
