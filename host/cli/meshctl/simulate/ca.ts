import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { authorizeCaller } from "../../../anchor/caller_authentication.ts";
import { CertificateAuthority } from "../../../anchor/certificate_authority.ts";
import {
  type CertificateTransport,
  CertificateRequestError,
  type WorkloadCertificate,
  type WorkloadCertificateRequest,
  requestWorkloadCertificate,
} from "../../../anchor/client.ts";
import { anchorEnvironment } from "../../../anchor/environment.ts";
import { AnchorError } from "../../../anchor/errors.ts";
import { STATUS_OF } from "../../../anchor/grpc_service.ts";
import { generateKeyPair } from "../../../anchor/keys.ts";
import { AnchorMetrics } from "../../../anchor/metrics.ts";
import * as d from "../../../anchor/options.ts";
import { ROOT_CERT_FILE } from "../../../anchor/self_signed_ca.ts";
import { createSelfSignedRoot } from "../../../anchor/self_signed_root.ts";
import { ServiceAccountTokenVerifier, tokenSettingsFrom } from "../../../anchor/service_account_token.ts";
import { pemOf } from "../../../anchor/signing_bundle.ts";
import { DEFAULT_LOCAL_ISSUER, loadOrCreateIssuerKey, mintServiceAccountToken, writeTokenFile } from "../../../anchor/token_issuer.ts";

/** `--caAddress` of the sidecars: the CA is in this process (no port), reached through `transport`. */
export const IN_PROCESS_CA_ADDRESS = "in-process:0";

/** The certificate authority every sidecar of a trust domain gets its workload certificate from. */
export interface SimulateCa {
  /** The sidecars' `--caAddress`. */
  readonly address: string;
  /** The root the sidecars trust (`--caRootCert`). */
  readonly rootCertFile: string;
  /** How the sidecars' certificate requests reach this CA (startProxy's `caTransport`). */
  readonly transport: CertificateTransport;
  /**
   * A sidecar's workload certificate (startProxy's `requestCertificate`):
   * the first sidecar of an identity asks this CA for one as any sidecar does
   * (its key, its CSR, its token, through `transport`); the run's later
   * sidecars of that identity get the same key and certificate.
   */
  certificate(request: WorkloadCertificateRequest): Promise<WorkloadCertificate>;
  /** Mints a service-account token into a file and returns its path (`--tokenPath`). */
  tokenFile(namespace: string, serviceAccount: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The CA a simulate run shares among all the scenarios of a trust domain:
 * mesh_ca's certificate authority (anchor/certificate_authority.ts, the code
 * behind its CreateCertificate) with mesh_ca's defaults and a self-signed
 * root, inside meshctl. A sidecar's request is what it sends mesh_ca (its own
 * key, a CSR with its SPIFFE identity, its service-account token), checked
 * as mesh_ca checks it (the token against the issuer's key set, the identity
 * against the token's service account); only the gRPC transport is left
 * out: a scenario is about the policy of the requests between workloads,
 * and a gRPC server, its TLS certificate and a handshake per sidecar cost
 * more CPU than the rest of a scenario's start.
 *
 * Its root is an EC P-256 key (mesh_ca's own default is RSA, `--key-size`,
 * whose key costs 0.1–0.3 s of CPU and whose signatures cost more on every
 * workload certificate); a scenario is about policy, not the root's key type.
 */
export async function startSimulateCa(trustDomain: string, dir: string): Promise<SimulateCa> {
  const tokensDir = join(dir, "tokens");
  mkdirSync(tokensDir, { recursive: true });
  const env = anchorEnvironment({});
  const [issuer, keys] = await Promise.all([loadOrCreateIssuerKey(join(dir, "issuer")), generateKeyPair("ECDSA")]);
  const root = await createSelfSignedRoot({ keys, org: trustDomain, ttlMs: env.selfSignedCaCertTtlMs, now: Date.now() });
  const rootCertFile = join(dir, ROOT_CERT_FILE);
  writeFileSync(rootCertFile, pemOf(root));
  const authority = new CertificateAuthority(
    {
      trustDomain,
      org: "",
      defaultTtlMs: d.DEFAULT_WORKLOAD_CERT_TTL_MS,
      maxTtlMs: d.DEFAULT_MAX_WORKLOAD_CERT_TTL_MS,
      allowedNamespaces: new Set(),
      dualUse: false,
      signCaCerts: false,
    },
    { ratio: d.DEFAULT_GRACE_PERIOD_RATIO, minGraceMs: env.workloadCertMinGracePeriodMs },
    new AnchorMetrics(),
  );
  authority.setBundle({ signingKey: keys.privateKey, signingPublicKey: keys.publicKey, signingCert: root, chain: [], roots: [root] });
  const tokens = new ServiceAccountTokenVerifier(tokenSettingsFrom({ TOKEN_ISSUER: DEFAULT_LOCAL_ISSUER }, issuer.jwksFile));
  const transport: CertificateTransport = async (_address, csrPem, validitySeconds, _timeoutMs, auth) => {
    try {
      const { issued: _issued, ...response } = await authority.createCertificate(csrPem, validitySeconds, async (identity) => {
        await authorizeCaller(identity, { bearerToken: auth?.token }, tokens);
      });
      return response;
    } catch (e) {
      if (e instanceof AnchorError) throw new CertificateRequestError(STATUS_OF[e.code], e.message);
      throw e;
    }
  };
  // Replicas of one workload would each have a key of their own; a scenario is about the policy between
  // identities, and a key, a CSR and an issuance per sidecar were a third of a run's CPU (docs/benchmarks.md).
  const certificates = new Map<string, Promise<WorkloadCertificate>>();
  const certificate = async (request: WorkloadCertificateRequest): Promise<WorkloadCertificate> => {
    const key = JSON.stringify([request.identity, request.keyAlgorithm, request.keySize, request.ttl, request.forCa]);
    const shared = certificates.get(key);
    if (shared) {
      const c = await shared.catch(() => undefined);
      if (c && c.rotateAt.getTime() > Date.now()) return c;
      // Refused, or due for renewal: this sidecar asks anew.
      if (certificates.get(key) === shared) certificates.delete(key);
      return certificate(request);
    }
    const made = requestWorkloadCertificate({ ...request, transport });
    certificates.set(key, made);
    return made;
  };
  let n = 0;
  return {
    address: IN_PROCESS_CA_ADDRESS,
    rootCertFile,
    transport,
    certificate,
    async tokenFile(namespace, serviceAccount) {
      const path = join(tokensDir, `${namespace}.${serviceAccount}.${n++}.jwt`);
      writeTokenFile(path, await mintServiceAccountToken(issuer, { namespace, serviceAccount }));
      return path;
    },
    stop: async () => undefined,
  };
}
