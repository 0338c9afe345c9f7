import { X509Certificate } from "node:crypto";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { issueCertificate } from "./issuer.ts";
import { generateKeyPair } from "./keys.ts";
import { nodeCert, pemOf, type SigningBundle } from "./signing_bundle.ts";
import { spiffeUri } from "./spiffe.ts";
import { x509 } from "./x509.ts";
import { DEFAULT_ROOT_NAMESPACE } from "../config/mesh_config.ts";

/** The identity of the throwaway certificate the self-check signs. */
export const LIVENESS_SERVICE_ACCOUNT = "mesh-ca-liveness-probe";
export const LIVENESS_NAMESPACE = DEFAULT_ROOT_NAMESPACE;
const LIVENESS_TTL_SECONDS = 60;

/**
 * The CA's liveness check (upstream: the CA liveness probe run every
 * `--probe-check-interval`): sign a throwaway CSR with the current signing
 * key and verify the result against the served roots. It runs in-process,
 * so it is not counted in anchor_server_*.
 */
export class CaSelfCheck {
  private timer?: NodeJS.Timeout;
  private csr?: InstanceType<typeof x509.Pkcs10CertificateRequest>;
  healthy = false;

  constructor(
    private readonly bundle: () => SigningBundle | undefined,
    private readonly trustDomain: string,
    private readonly log: ScopedLogger,
    private readonly now: () => number = Date.now,
  ) {}

  async check(): Promise<boolean> {
    try {
      const bundle = this.bundle();
      if (!bundle) throw new Error("no signing key");
      if (!this.csr) {
        const keys = await generateKeyPair("ECDSA");
        this.csr = await x509.Pkcs10CertificateRequestGenerator.create({
          keys,
          signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
          extensions: [
            new x509.SubjectAlternativeNameExtension([{ type: "url", value: spiffeUri(this.trustDomain, LIVENESS_NAMESPACE, LIVENESS_SERVICE_ACCOUNT) }]),
          ],
        });
      }
      const ttl = Math.max(1, Math.min(LIVENESS_TTL_SECONDS, Math.floor((bundle.signingCert.notAfter.getTime() - this.now()) / 1000)));
      const issued = await issueCertificate(
        bundle,
        {
          trustDomain: this.trustDomain,
          org: "",
          defaultTtlMs: ttl * 1000,
          maxTtlMs: ttl * 1000,
          allowedNamespaces: new Set(),
          dualUse: false,
          signCaCerts: false,
        },
        this.csr,
        ttl,
        this.now(),
      );
      const leaf = new X509Certificate(pemOf(issued.cert));
      const issuer = nodeCert(bundle.chain[0] ?? bundle.signingCert);
      if (!leaf.verify(issuer.publicKey)) throw new Error("a certificate just signed does not verify with the signing certificate");
      if (!this.healthy) this.log.info("CA self-check passed");
      this.healthy = true;
    } catch (e) {
      this.log.error(`CA self-check failed: ${(e as Error).message}`);
      this.healthy = false;
    }
    return this.healthy;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
