import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CaCallAuth, requestWorkloadCertificate } from "../anchor/client.ts";
import { spiffeUri } from "../anchor/spiffe.ts";
import { DEFAULT_LOCAL_ISSUER, loadOrCreateIssuerKey, mintServiceAccountToken, writeTokenFile } from "../anchor/token_issuer.ts";
import { startEchoApp } from "./echo_app.ts";
import { AGENT_BIN, MESH_CA_BIN } from "./binaries.ts";
import type { SidecarListening } from "./binaries.ts";
import { type Daemon, ownedTempDir, removeOwnedTempDir, startDaemon } from "./processes.ts";

/**
 * Loopback building blocks for the sidecar's security path (issue 6): a
 * `mesh_ca` process and workloads (an echo app with a `disco-agent proxy`
 * in front of it, or an ingress gateway). Used by test/e2e/security_*.test.ts
 * and meant for a scenario runner: every sidecar setting is a flag.
 */

export { MESH_CA_BIN } from "./binaries.ts";

export interface CaListening {
  grpc: string;
  grpcPort: number;
  grpcTls: boolean;
  monitoringPort: number;
}

/** A running mesh_ca with its own token issuer (docs/mesh_ca.md "Workload tokens"). */
export interface MeshCa extends Daemon<CaListening> {
  address: string;
  /** The CA's directory (`--self-signed-ca-cert-dir`): `root-cert.pem` is what clients trust. */
  certDir: string;
  rootCertFile: string;
  /** The token issuer's directory (issuer-key.pem, jwks.json = the CA's --token-jwks). */
  issuerDir: string;
  /** A token for `system:serviceaccount:<namespace>:<serviceAccount>`, as `mesh_ca token` mints it. */
  mintToken(namespace: string, serviceAccount: string, ttlMs?: number): Promise<string>;
  /** Mints a token into a file (mode 0600) and returns its path (disco-agent --tokenPath). */
  tokenFile(namespace: string, serviceAccount: string): Promise<string>;
  /** Token plus TLS settings for an in-process `requestWorkloadCertificate` (the first certificate). */
  firstRequestAuth(namespace: string, serviceAccount: string): Promise<CaCallAuth>;
}

/**
 * `mesh_ca --self-signed-ca` on ephemeral loopback ports, with TLS on its
 * gRPC port and token authentication by a key of its own (a temporary issuer
 * directory); the root is kept in a temporary directory so clients can trust
 * it. Both directories are removed by `stop()`.
 */
export async function startMeshCa(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<MeshCa> {
  if (!existsSync(MESH_CA_BIN)) throw new Error(`${MESH_CA_BIN} is missing: run node build/build.mjs first`);
  const base = ownedTempDir("mesh-ca-");
  const certDir = join(base, "ca");
  const issuerDir = join(base, "issuer");
  const tokensDir = join(base, "tokens");
  mkdirSync(tokensDir);
  let ca: Daemon<CaListening>;
  try {
    const issuer = await loadOrCreateIssuerKey(issuerDir);
    ca = await startDaemon<CaListening>(
      MESH_CA_BIN,
      [
        "--self-signed-ca",
        "--self-signed-ca-cert-dir",
        certDir,
        "--token-jwks",
        issuer.jwksFile,
        "--grpc-port",
        "0",
        "--grpc-address",
        "127.0.0.1",
        "--monitoring-port",
        "0",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
        ...args,
      ],
      "mesh_ca listening ",
      undefined,
      { ...process.env, ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false", TOKEN_ISSUER: DEFAULT_LOCAL_ISSUER, ...env },
    );
  } catch (e) {
    removeOwnedTempDir(base);
    throw e;
  }
  const rootCertFile = join(certDir, "root-cert.pem");
  const mintToken = async (namespace: string, serviceAccount: string, ttlMs?: number) =>
    mintServiceAccountToken(await loadOrCreateIssuerKey(issuerDir), { namespace, serviceAccount, ttlMs });
  let n = 0;
  return {
    ...ca,
    address: `127.0.0.1:${ca.listening.grpcPort}`,
    certDir,
    rootCertFile,
    issuerDir,
    mintToken,
    async tokenFile(namespace, serviceAccount) {
      const path = join(tokensDir, `${namespace}.${serviceAccount}.${n++}.jwt`);
      writeTokenFile(path, await mintToken(namespace, serviceAccount));
      return path;
    },
    async firstRequestAuth(namespace, serviceAccount) {
      const token = await mintToken(namespace, serviceAccount);
      return ca.listening.grpcTls ? { token, tls: { rootPem: readFileSync(rootCertFile, "utf8") } } : { token };
    },
    async stop(signal) {
      const code = await ca.stop(signal);
      removeOwnedTempDir(base);
      return code;
    },
  };
}

/**
 * Obtains a workload certificate in-process (with a token) and writes it as
 * the files a control-plane daemon reads: `cert-chain.pem`, `key.pem` (0600),
 * `root-cert.pem` (upstream's /etc/certs layout). For the hub's --certFile etc.
 */
export async function writeWorkloadCertFiles(
  ca: MeshCa,
  namespace: string,
  serviceAccount: string,
  dir: string,
  trustDomain = "cluster.local",
): Promise<{ caCertFile: string; certFile: string; keyFile: string; identity: string }> {
  const identity = spiffeUri(trustDomain, namespace, serviceAccount);
  const wc = await requestWorkloadCertificate({
    address: ca.address,
    identity,
    keyAlgorithm: "ECDSA",
    auth: await ca.firstRequestAuth(namespace, serviceAccount),
  });
  mkdirSync(dir, { recursive: true });
  const files = { caCertFile: join(dir, "root-cert.pem"), certFile: join(dir, "cert-chain.pem"), keyFile: join(dir, "key.pem") };
  writeFileSync(files.caCertFile, wc.rootPem);
  writeFileSync(files.certFile, wc.certChainPem);
  writeFileSync(files.keyFile, wc.keyPem, { mode: 0o600 });
  return { ...files, identity };
}

export interface WorkloadOptions {
  name: string;
  namespace: string;
  /** The sidecar's configuration folder; ignored with `discoveryAddress`. */
  configDir: string;
  /** disco-discovery's address: the configuration over ADS instead of `configDir` (mutual TLS when the CA serves TLS). */
  discoveryAddress?: string;
  /**
   * The CA: the sidecar gets a token for its service account (--tokenPath),
   * the CA's root (--caRootCert) and `--controlPlaneAuthPolicy MUTUAL_TLS`
   * (or NONE when the CA runs --grpc-plaintext).
   */
  ca: MeshCa;
  serviceAccount?: string;
  labels?: Record<string, string>;
  /** Container port the sidecar's inbound listener stands for (default 80). */
  containerPort?: number;
  /** `--endpoint` values. */
  endpoints?: string[];
  meshConfigFile?: string;
  gateway?: boolean;
  /** Forward to this port instead of the echo app's (an app a test runs itself). */
  appPort?: number;
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

/** The `disco-agent` arguments of a workload's sidecar (startSecureWorkload's; a bench runs the agent its own way with them). */
export function secureWorkloadArgs(o: WorkloadOptions, appPort: number, tokenPath: string): string[] {
  const labels = Object.entries(o.labels ?? { app: o.name })
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const serviceAccount = o.serviceAccount ?? o.name;
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
    "--containerPort",
    String(o.containerPort ?? 80),
    ...(o.discoveryAddress ? ["--discoveryAddress", o.discoveryAddress] : ["--configDir", o.configDir]),
    "--caAddress",
    o.ca.address,
    "--tokenPath",
    tokenPath,
    "--caRootCert",
    o.ca.rootCertFile,
    "--controlPlaneAuthPolicy",
    o.ca.listening.grpcTls ? "MUTUAL_TLS" : "NONE",
    "--serviceAccount",
    serviceAccount,
    "--labels",
    labels,
    "--workloadKeyAlgorithm",
    "ECDSA",
    ...(o.meshConfigFile ? ["--meshConfigFile", o.meshConfigFile] : []),
    ...(o.gateway ? ["--gateway"] : []),
    ...(o.endpoints ?? []).flatMap((e) => ["--endpoint", e]),
    ...(o.extraArgs ?? []),
  ];
}

/** An echo app and its sidecar with the security path on (ECDSA workload keys, for speed). */
export async function startSecureWorkload(o: WorkloadOptions): Promise<SecureWorkload> {
  const ownApp = o.app === undefined;
  const app = o.app ?? (await startEchoApp());
  const serviceAccount = o.serviceAccount ?? o.name;
  let tokenPath: string;
  try {
    tokenPath = await o.ca.tokenFile(o.namespace, serviceAccount);
  } catch (e) {
    if (ownApp) app.server.close();
    throw e;
  }
  const args = secureWorkloadArgs(o, o.appPort ?? app.port, tokenPath);
  let sidecar: Daemon<SidecarListening>;
  try {
    sidecar = await startDaemon<SidecarListening>(AGENT_BIN, args, "disco-agent listening ", undefined, {
      ...process.env,
      POD_NAME: o.name,
      POD_NAMESPACE: o.namespace,
      ...(o.env ?? {}),
    });
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
