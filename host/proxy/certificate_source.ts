import { createPrivateKey } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { CertificateTransport, WorkloadCertificate } from "../anchor/client.ts";
import type { Logger, ScopedLogger } from "../telemetry/logger.ts";
import type { AgentMetrics } from "./agent_metrics.ts";
import type { AgentEnvironment, AgentOptions } from "./agent_options.ts";
import type { CertificateSource } from "./control_plane_auth.ts";
import { type ControlPlaneAuth, WorkloadTls, type WorkloadTlsOptions } from "./workload_tls.ts";

/**
 * OUTPUT_KEY_CERT_TO_DIRECTORY (spec 2): the workload key, certificate chain
 * and roots as files (`key.pem`, `cert-chain.pem`, `root-cert.pem`, the key
 * mode 0600), rewritten on each rotation. Keys are PKCS#1 (RSA) or SEC1 (EC)
 * unless PKCS8_KEY is true. A failed write is logged; serving goes on.
 */
export function writeKeyAndCertificates(dir: string, c: WorkloadCertificate, pkcs8: boolean, log: ScopedLogger): void {
  try {
    mkdirSync(dir, { recursive: true });
    const key = createPrivateKey(c.keyPem);
    const keyPem = pkcs8 ? c.keyPem : (key.export({ format: "pem", type: key.asymmetricKeyType === "ec" ? "sec1" : "pkcs1" }) as string);
    writeFileSync(join(dir, "key.pem"), keyPem, { mode: 0o600 });
    writeFileSync(join(dir, "cert-chain.pem"), c.certChainPem);
    writeFileSync(join(dir, "root-cert.pem"), c.rootPem);
  } catch (e) {
    log.error(`OUTPUT_KEY_CERT_TO_DIRECTORY ${dir}: ${(e as Error).message}`);
  }
}

/** What the workload certificate's rotation reports to, besides its own log scopes. */
export interface CertificateEvents {
  metrics: AgentMetrics;
  /** Each new certificate, after the files (OUTPUT_KEY_CERT_TO_DIRECTORY) are written: control-plane channels renew their credentials. */
  onRotated: () => void;
}

/**
 * The sidecar's workload certificate from `source` (mesh_ca, or disco-discovery
 * relaying to it), with its logging and the agent's counters; not started.
 */
export function workloadCertificate(
  opts: Pick<AgentOptions, "connectTimeout" | "secretGraceDuration" | "initialBackoffMs">,
  settings: { identity: string; trustDomain: string; ttlMs: number; keyAlgorithm: "RSA" | "ECDSA" },
  source: CertificateSource,
  auth: ControlPlaneAuth,
  env: AgentEnvironment,
  logger: Logger,
  events: CertificateEvents,
  shared: { caTransport?: CertificateTransport; requestCertificate?: WorkloadTlsOptions["request"] },
): WorkloadTls {
  const log = logger.scope("default");
  const caName = source.controlPlane ? "disco-discovery" : "mesh_ca";
  return new WorkloadTls({
    caAddress: source.address,
    identity: settings.identity,
    trustDomain: settings.trustDomain,
    ttlMs: settings.ttlMs,
    keyAlgorithm: settings.keyAlgorithm,
    auth,
    transport: shared.caTransport,
    request: shared.requestCertificate,
    ...(typeof opts.connectTimeout === "number" ? { timeoutMs: opts.connectTimeout } : {}),
    ...(typeof opts.secretGraceDuration === "number" ? { graceMs: opts.secretGraceDuration } : {}),
    ...(typeof opts.initialBackoffMs === "number" && opts.initialBackoffMs > 0 ? { initialBackoffMs: opts.initialBackoffMs } : {}),
    onJitter: (ms) => logger.scope("anchorclient").info(`waiting ${ms} ms before the certificate request (INITIAL_BACKOFF_MSEC)`),
    onRotated: (c: WorkloadCertificate) => {
      logger
        .scope("cache")
        .debug(`workload certificate cached: serial ${c.serialNumber}, expires ${c.expiresAt.toISOString()}, renewal at ${c.rotateAt.toISOString()}`);
      events.onRotated();
      events.metrics.certificatePushed();
      if (env.OUTPUT_KEY_CERT_TO_DIRECTORY) writeKeyAndCertificates(env.OUTPUT_KEY_CERT_TO_DIRECTORY, c, env.PKCS8_KEY === "true", log);
    },
    onError: (e, retryInMs) => {
      events.metrics.secretUpdateFailed();
      events.metrics.outgoingRetry("csr");
      logger.scope("anchorclient").warn(`workload certificate renewal failed: ${e.message}; retrying in ${retryInMs} ms`);
    },
    onRequest: (ok, latencyMs, by) => {
      events.metrics.outgoingRequest("csr", ok, latencyMs);
      if (by === "token")
        logger.scope("token").debug(`service-account token ${auth.tokenPath} presented to ${caName} (JWT_POLICY ${env.JWT_POLICY || "third-party-jwt"})`);
      logger
        .scope("anchorclient")
        .debug(
          `CSR for ${settings.identity} to ${caName} ${source.address} (authenticated by ${by}): ${ok ? "certificate issued" : "failed"} in ${Math.round(latencyMs)} ms`,
        );
    },
  });
}

/**
 * Obtains the first certificate before any listener opens; false (logged,
 * naming the flag of the CA and its reason) when the CA refuses or does not
 * answer within --connectTimeout: the agent then exits 1.
 */
export async function firstCertificate(tls: WorkloadTls, source: CertificateSource, auth: ControlPlaneAuth, log: ScopedLogger): Promise<boolean> {
  try {
    await tls.start();
    log.info(
      `workload certificate for ${tls.options.identity} from ${source.controlPlane ? "disco-discovery " : ""}${source.address} (${auth.policy === "MUTUAL_TLS" ? "TLS" : "plain text"}, token ${auth.tokenPath}): expires ${tls.current.expiresAt.toISOString()}, renewal at ${tls.current.rotateAt.toISOString()}`,
    );
    return true;
  } catch (e) {
    const hint =
      auth.policy === "NONE" && (e as { code?: number }).code === grpc.status.UNAVAILABLE
        ? " (with --controlPlaneAuthPolicy NONE the CA is dialled in plain text: mesh_ca serves TLS unless --grpc-plaintext; use MUTUAL_TLS)"
        : "";
    const flag = source.controlPlane ? "--discoveryAddress" : "--caAddress";
    log.error(`${flag} ${source.address}: no workload certificate${source.controlPlane ? " from the control plane" : ""}: ${(e as Error).message}${hint}`);
    tls.stop();
    return false;
  }
}
