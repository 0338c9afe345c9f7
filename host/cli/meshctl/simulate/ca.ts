import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CA_SERVER_NAME } from "../../../anchor/client.ts";
import { anchorEnvironment } from "../../../anchor/environment.ts";
import { exportPrivateKeyPem, generateKeyPair } from "../../../anchor/keys.ts";
import * as d from "../../../anchor/options.ts";
import { CA_CERT_FILE, CA_KEY_FILE, ROOT_CERT_FILE } from "../../../anchor/self_signed_ca.ts";
import { createSelfSignedRoot } from "../../../anchor/self_signed_root.ts";
import { pemOf } from "../../../anchor/signing_bundle.ts";
import { startAnchorServer } from "../../../anchor/server.ts";
import { tokenSettingsFrom } from "../../../anchor/service_account_token.ts";
import { DEFAULT_LOCAL_ISSUER, loadOrCreateIssuerKey, mintServiceAccountToken, writeTokenFile } from "../../../anchor/token_issuer.ts";
import { MemoryLogger } from "./memory_logger.ts";

/** The certificate authority every sidecar of a trust domain gets its workload certificate from. */
export interface SimulateCa {
  /** `127.0.0.1:<port>`: the sidecars' `--caAddress`. */
  readonly address: string;
  /** The root the sidecars trust (`--caRootCert`). */
  readonly rootCertFile: string;
  readonly listening: { readonly grpcTls: boolean };
  /** Mints a service-account token into a file and returns its path (`--tokenPath`). */
  tokenFile(namespace: string, serviceAccount: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts the CA a simulate run shares among all the scenarios of a trust
 * domain, inside meshctl: the server `mesh_ca` runs (anchor/server.ts, the
 * same code), with the settings that
 * `mesh_ca --self-signed-ca --self-signed-ca-cert-dir <dir>/ca --token-jwks <dir>/issuer/jwks.json
 * --grpc-port 0 --grpc-address 127.0.0.1 --monitoring-port 0 --ctrlz_port 0 --ctrlz_address 127.0.0.1 --trust-domain <domain>`
 * parses to (with TOKEN_ISSUER=mesh-token-issuer), as the demo's mesh_ca
 * process is started. In-process, it costs no Node start and no second load
 * of gRPC and the X.509 library; the sidecars reach it over gRPC with TLS
 * all the same.
 *
 * Its root is an EC P-256 key written to the certificate directory before
 * the CA starts, which mesh_ca loads as it loads any root it finds there
 * (docs/mesh_ca.md, `--self-signed-ca-cert-dir`): mesh_ca generates RSA (`--key-size`), whose key costs
 * 0.1–0.3 s of CPU and whose signatures cost more than P-256's on every
 * workload certificate; a scenario is about policy, not the root's key type.
 */
export async function startSimulateCa(trustDomain: string, dir: string): Promise<SimulateCa> {
  const certDir = join(dir, "ca");
  const tokensDir = join(dir, "tokens");
  mkdirSync(tokensDir, { recursive: true });
  const env = anchorEnvironment({ ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false" });
  const [issuer] = await Promise.all([loadOrCreateIssuerKey(join(dir, "issuer")), writeEcRoot(certDir, trustDomain, env.selfSignedCaCertTtlMs)]);
  const logger = new MemoryLogger(d.ANCHOR_LOG_SCOPES);
  let server;
  try {
    server = await startAnchorServer(
      {
        selfSignedCa: true,
        selfSignedCaCertDir: certDir,
        readSigningCertOnly: false,
        signingCert: "",
        signingKey: "",
        rootCert: "",
        certChain: "",
        trustDomain,
        workloadCertTtlMs: d.DEFAULT_WORKLOAD_CERT_TTL_MS,
        maxWorkloadCertTtlMs: d.DEFAULT_MAX_WORKLOAD_CERT_TTL_MS,
        workloadCertGracePeriodRatio: d.DEFAULT_GRACE_PERIOD_RATIO,
        keySize: d.DEFAULT_KEY_SIZE_BITS,
        pkcs8Keys: false,
        org: "",
        allowedNamespaces: [],
        dualUse: false,
        signCaCerts: false,
        upstreamCaAddress: "",
        upstreamCaToken: "",
        upstreamCaServerName: DEFAULT_CA_SERVER_NAME,
        requestedCaCertTtlMs: d.DEFAULT_REQUESTED_CA_CERT_TTL_MS,
        grpcPort: 0,
        grpcAddress: "127.0.0.1",
        grpcHostIdentities: d.DEFAULT_GRPC_HOST_IDENTITIES.split(","),
        grpcPlaintext: false,
        tokens: tokenSettingsFrom({ TOKEN_ISSUER: DEFAULT_LOCAL_ISSUER }, issuer.jwksFile),
        monitoringPort: 0,
        enableProfiling: false,
        livenessProbePath: "",
        livenessProbeIntervalMs: 0,
        probeCheckIntervalMs: d.DEFAULT_PROBE_CHECK_INTERVAL_MS,
        ctrlzPort: 0,
        ctrlzAddress: "127.0.0.1",
        ignored: Object.fromEntries(Object.entries(d.IGNORED_FLAGS).map(([k, v]) => [k, v.default])) as unknown as d.IgnoredFlags,
        env,
      },
      // Nothing probes or lists this CA: no health and reflection services (their libraries cost a quarter of a second to load).
      { logger, introspection: false },
    );
  } catch (e) {
    throw new Error(`the CA of trust domain ${trustDomain} did not start: ${(e as Error).message}${logger.lines.length > 0 ? `\n${logger.lines.join("\n")}` : ""}`);
  }
  let n = 0;
  let stopping: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${server.listeners.grpcPort}`,
    rootCertFile: join(certDir, "root-cert.pem"),
    listening: { grpcTls: server.listeners.grpcTls },
    async tokenFile(namespace, serviceAccount) {
      const path = join(tokensDir, `${namespace}.${serviceAccount}.${n++}.jwt`);
      writeTokenFile(path, await mintServiceAccountToken(issuer, { namespace, serviceAccount }));
      return path;
    },
    stop: () => (stopping ??= server.close()),
  };
}

/** What mesh_ca --self-signed-ca writes to its certificate directory, for a new P-256 root of the trust domain (subject O, as mesh_ca's). */
async function writeEcRoot(certDir: string, trustDomain: string, ttlMs: number): Promise<void> {
  const keys = await generateKeyPair("ECDSA");
  const root = await createSelfSignedRoot({ keys, org: trustDomain, ttlMs, now: Date.now() });
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, CA_KEY_FILE), await exportPrivateKeyPem(keys.privateKey, false), { mode: 0o600 });
  writeFileSync(join(certDir, CA_CERT_FILE), pemOf(root));
  writeFileSync(join(certDir, ROOT_CERT_FILE), pemOf(root));
}
