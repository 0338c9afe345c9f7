import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PeerCertificate } from "node:tls";
import {
  type CaCallAuth,
  type CertificateTransport,
  CertificateRotator,
  type WorkloadCertificate,
  type WorkloadCertificateRequest,
  requestWorkloadCertificate,
  splitPem,
} from "../anchor/client.ts";
import type { KeyAlgorithm } from "../anchor/keys.ts";
import { TlsConnector, type TlsOrigin } from "../wire/h1/tls_connector.ts";

/**
 * The sidecar's workload identity and certificates (issue 6 item 1; docs/mesh_ca.md
 * "The client"): a certificate for `spiffe://<td>/ns/<ns>/sa/<sa>` obtained
 * from mesh_ca at start and renewed by CertificateRotator. Listeners and
 * outbound connections read `current` per connection, so a rotation applies
 * to new connections at once; the outbound connections' TLS connector (its
 * credentials and session cache) is replaced on each rotation.
 */

export interface WorkloadTlsOptions {
  /** `HOST:PORT` of mesh_ca's gRPC port. */
  caAddress: string;
  identity: string;
  trustDomain: string;
  /** Requested lifetime in ms; 0 = the CA's default. */
  ttlMs: number;
  keyAlgorithm: KeyAlgorithm;
  /** How the sidecar proves its identity to mesh_ca; absent = no credential (the CA refuses). */
  auth?: ControlPlaneAuth;
  /** Deadline of each request to mesh_ca (`--connectTimeout`); default the client's. */
  timeoutMs?: number;
  /** SECRET_GRACE_DURATION: renew this long before expiry; absent = at the grace period mesh_ca states. */
  graceMs?: number;
  /** INITIAL_BACKOFF_MSEC: each request to mesh_ca first waits a random 0 … this many ms, so many sidecars started together do not reach the CA at once. */
  initialBackoffMs?: number;
  /** Injected for tests; default Math.random. */
  random?: () => number;
  onJitter?: (ms: number) => void;
  onRotated?: (cert: WorkloadCertificate) => void;
  onError?: (error: Error, retryInMs: number) => void;
  /** Each CSR sent to the CA: its outcome, latency (the agent's num_outgoing_requests, outgoing_latency) and what authenticated it. */
  onRequest?: (ok: boolean, latencyMs: number, authenticatedBy: "token" | "certificate") => void;
  /** How requests reach mesh_ca; default gRPC to caAddress (a CA in the same process: meshctl x simulate). */
  transport?: CertificateTransport;
  /**
   * How a certificate is obtained; default requestWorkloadCertificate (a key
   * and CSR of this sidecar's own). meshctl x simulate gives one that shares
   * a certificate among the sidecars of one identity in a run.
   */
  request?: (request: WorkloadCertificateRequest) => Promise<WorkloadCertificate>;
}

/** What /config_dump shows of a certificate. */
export interface CertificateSummary {
  subject: string;
  subjectAltName: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
}

export function summarize(pem: string): CertificateSummary {
  const c = new X509Certificate(pem);
  return {
    subject: c.subject,
    subjectAltName: c.subjectAltName ?? "",
    serialNumber: c.serialNumber,
    notBefore: new Date(c.validFrom).toISOString(),
    notAfter: new Date(c.validTo).toISOString(),
  };
}

/** The URI SAN values of a certificate (`URI:` entries of subjectAltName). */
export function uriSans(subjectAltName: string | undefined): string[] {
  return (subjectAltName ?? "")
    .split(", ")
    .filter((s) => s.startsWith("URI:"))
    .map((s) => s.slice(4));
}

/** Secure naming: the server's URI SANs must hold the expected identity, or one of the trust domain when none is expected. */
function secureNaming(expectedIdentity: string | undefined, trustDomain: string): (hostname: string, cert: PeerCertificate) => Error | undefined {
  return (_hostname, peer) => {
    const uris = uriSans(peer.subjectaltname);
    if (expectedIdentity !== undefined) {
      return uris.includes(expectedIdentity)
        ? undefined
        : new Error(`secure naming: server presented ${uris.join(" ") || "no URI SAN"}, expected ${expectedIdentity}`);
    }
    return uris.some((u) => u.startsWith(`spiffe://${trustDomain}/`))
      ? undefined
      : new Error(`secure naming: server presented ${uris.join(" ") || "no URI SAN"}, expected an identity of trust domain ${trustDomain}`);
  };
}

/** `--controlPlaneAuthPolicy` (spec 2, disco-agent): how the sidecar reaches mesh_ca and the hub. */
export type ControlPlaneAuthPolicy = "NONE" | "MUTUAL_TLS";

export interface ControlPlaneAuth {
  /** NONE: plain text, the token on every request; MUTUAL_TLS: TLS, the token for the first certificate, the certificate for renewals. */
  policy: ControlPlaneAuthPolicy;
  /** The service-account token file, re-read on each use (tokens are rotated by whoever writes them). */
  tokenPath: string;
  /** Roots that sign mesh_ca's TLS certificate (MUTUAL_TLS). */
  caRootCertFile: string;
  /** How the CA's certificate is checked instead of its name `mesh-ca` (disco-discovery as the CA: its SPIFFE identity, --discoIdentity). */
  caServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (e) {
    throw new Error(
      `service-account token ${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file (--tokenPath; mint one with mesh_ca token)" : (e as Error).message}`,
    );
  }
  if (!text) throw new Error(`service-account token ${path}: the file is empty`);
  return text;
}

/**
 * The credentials of one CreateCertificate call: with MUTUAL_TLS a renewal
 * presents the current, unexpired certificate (and no token); a first
 * request, or a retry after a failed renewal, sends the token. The CA's
 * certificate must chain to the root file or to the roots of the current
 * certificate.
 */
export function caCallAuth(auth: ControlPlaneAuth, current: WorkloadCertificate | undefined, lastAttemptFailed: boolean, now: number): CaCallAuth {
  if (auth.policy === "NONE") return { token: readTokenFile(auth.tokenPath) };
  const renewing = current !== undefined && current.expiresAt.getTime() > now && !lastAttemptFailed ? current : undefined;
  let fileRoots = "";
  try {
    fileRoots = readFileSync(auth.caRootCertFile, "utf8");
  } catch (e) {
    if (!current) throw new Error(`--caRootCert ${auth.caRootCertFile}: ${(e as Error).message}`);
  }
  const rootPem = [fileRoots.trim(), current?.rootPem.trim() ?? ""].filter(Boolean).join("\n") + "\n";
  return {
    token: renewing ? undefined : readTokenFile(auth.tokenPath),
    tls: {
      rootPem,
      clientKeyPem: renewing?.keyPem,
      clientCertChainPem: renewing?.certChainPem,
      ...(auth.caServerIdentity ? { checkServerIdentity: auth.caServerIdentity } : {}),
    },
  };
}

/** INITIAL_BACKOFF_MSEC as upstream's secret cache applies it before each CSR: a random wait in [0, max) ms. */
export function initialJitterMs(maxMs: number, random: () => number): number {
  return maxMs > 0 ? Math.floor(random() * maxMs) : 0;
}

/**
 * SECRET_GRACE_DURATION as upstream's SDS agent applies it: a certificate is
 * renewed that long before it expires. A certificate the CA made shorter than
 * the grace keeps the CA's renewal time (renewing at once would loop).
 */
export function withGraceDuration(cert: WorkloadCertificate, graceMs: number | undefined): WorkloadCertificate {
  if (graceMs === undefined || graceMs >= cert.expiresAt.getTime() - cert.notBefore.getTime()) return cert;
  return { ...cert, rotateAt: new Date(cert.expiresAt.getTime() - graceMs) };
}

export class WorkloadTls {
  private rotator: CertificateRotator;
  private cert: WorkloadCertificate | undefined;
  private leaf: X509Certificate | undefined;
  /** Outbound mutual TLS connections with the current certificate (host/wire/h1's client). */
  private connector: TlsConnector | undefined;
  rotations = 0;
  /** How the last certificate was asked for (`token` or `certificate`), for /config_dump. */
  lastAuthenticatedBy = "";
  private lastAttemptFailed = false;

  constructor(readonly options: WorkloadTlsOptions) {
    const fetch = async () => {
      const jitter = initialJitterMs(options.initialBackoffMs ?? 0, options.random ?? Math.random);
      if (jitter > 0) {
        options.onJitter?.(jitter);
        await new Promise((resolve) => setTimeout(resolve, jitter));
      }
      const started = performance.now();
      let by: "token" | "certificate" = "token";
      try {
        const auth = options.auth ? caCallAuth(options.auth, this.cert, this.lastAttemptFailed, Date.now()) : undefined;
        by = auth?.tls?.clientCertChainPem ? "certificate" : "token";
        const cert = withGraceDuration(
          await (options.request ?? requestWorkloadCertificate)({
            address: options.caAddress,
            identity: options.identity,
            ttl: options.ttlMs,
            keyAlgorithm: options.keyAlgorithm,
            auth,
            transport: options.transport,
            ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
          }),
          options.graceMs,
        );
        this.lastAuthenticatedBy = by;
        this.lastAttemptFailed = false;
        options.onRequest?.(true, performance.now() - started, by);
        return cert;
      } catch (e) {
        this.lastAttemptFailed = true;
        options.onRequest?.(false, performance.now() - started, by);
        throw e;
      }
    };
    this.rotator = new CertificateRotator({
      fetch,
      onCertificate: (c) => {
        this.cert = c;
        this.leaf = new X509Certificate(splitPem(c.certChainPem)[0]);
        const old = this.connector;
        this.connector = new TlsConnector({ key: c.keyPem, cert: c.certChainPem, ca: c.rootPem, rejectUnauthorized: true });
        // New requests go on connections with the new certificate (a new pool key); those made with the previous one finish what they carry.
        if (old) setTimeout(() => old.close(), 5000).unref();
        this.rotations++;
        options.onRotated?.(c);
      },
      onError: options.onError,
    });
  }

  /** Obtains the first certificate; throws when the CA refuses or cannot be reached. */
  async start(): Promise<void> {
    await this.rotator.start();
  }

  stop(): void {
    this.rotator.stop();
    this.connector?.close();
  }

  get current(): WorkloadCertificate {
    if (!this.cert) throw new Error("no workload certificate yet");
    return this.cert;
  }

  /** The sidecar's own leaf certificate (XFCC `By`, `connection.uri_san_local_certificate`). */
  get localCertificate(): X509Certificate {
    if (!this.leaf) throw new Error("no workload certificate yet");
    return this.leaf;
  }

  /** Key, chain and mesh roots for a TLS server context. */
  serverOptions(): { key: string; cert: string; ca: string } {
    const c = this.current;
    return { key: c.keyPem, cert: c.certChainPem, ca: c.rootPem };
  }

  /**
   * Options of an outbound mutual TLS connection: our certificate, the mesh
   * roots as the only trust anchors, SNI `outbound_.<port>_._.<host>`
   * (upstream's form), and secure naming: the server must present the
   * expected SPIFFE identity, or any identity of our trust domain when none
   * is expected (host-name checking does not apply to mesh certificates).
   */
  clientOptions(
    host: string,
    servicePort: number,
    expectedIdentity: string | undefined,
  ): {
    key: string;
    cert: string;
    ca: string;
    servername: string;
    rejectUnauthorized: true;
    checkServerIdentity: (hostname: string, cert: PeerCertificate) => Error | undefined;
  } {
    const c = this.current;
    return {
      key: c.keyPem,
      cert: c.certChainPem,
      ca: c.rootPem,
      servername: `outbound_.${servicePort}_._.${host}`,
      rejectUnauthorized: true,
      checkServerIdentity: secureNaming(expectedIdentity, this.options.trustDomain),
    };
  }

  /**
   * The same, for an HTTP upstream on the project's client (host/wire/h1):
   * connections made by the current certificate's connector, pooled and
   * resumed per endpoint, SNI and expected identity.
   */
  upstreamTls(host: string, servicePort: number, expectedIdentity: string | undefined): TlsOrigin {
    if (!this.connector) throw new Error("no workload certificate yet");
    return {
      connector: this.connector,
      servername: `outbound_.${servicePort}_._.${host}`,
      checkServerIdentity: secureNaming(expectedIdentity, this.options.trustDomain),
      name: expectedIdentity ?? `*.${this.options.trustDomain}`,
    };
  }

  /** The active certificate and roots, for /config_dump `secrets`. */
  secrets(): unknown {
    const c = this.current;
    return {
      certificates: [
        {
          name: "default",
          identity: c.identity,
          ...summarize(splitPem(c.certChainPem)[0]),
          rotateAt: c.rotateAt.toISOString(),
          chainLength: splitPem(c.certChainPem).length,
        },
        ...splitPem(c.rootPem).map((p, i) => ({ name: i === 0 ? "ROOTCA" : `ROOTCA.${i}`, ...summarize(p) })),
      ],
      caAddress: this.options.caAddress,
      controlPlaneAuthPolicy: this.options.auth?.policy ?? "NONE",
      lastAuthenticatedBy: this.lastAuthenticatedBy,
      rotations: this.rotations,
    };
  }
}
