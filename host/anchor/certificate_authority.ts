import { AnchorError } from "./errors.ts";
import { identityOfCsr, issueCertificate, parseCsr, type IssuePolicy } from "./issuer.ts";
import type { AnchorMetrics } from "./metrics.ts";
import type { CreateCertificateResponse } from "./protocol.ts";
import { pemOf, rootBundlePem, type SigningBundle } from "./signing_bundle.ts";
import type { SpiffeIdentity } from "./spiffe.ts";

export interface GracePolicy {
  /** `--workload-cert-grace-period-ratio`. */
  ratio: number;
  /** ANCHOR_WORKLOAD_CERT_MIN_GRACE_PERIOD. */
  minGraceMs: number;
}

export interface IssueEvent {
  identity: string;
  serial: string;
  notAfter: Date;
}

/**
 * The CA: the current signing bundle (swapped whole on root rotation), the
 * issuing policy and the anchor_server_* counters. Requests in flight keep
 * the bundle they started with.
 */
export class CertificateAuthority {
  private bundle?: SigningBundle;
  lastIssued?: IssueEvent;

  constructor(
    readonly policy: IssuePolicy,
    readonly grace: GracePolicy,
    private readonly metrics: AnchorMetrics,
    private readonly now: () => number = Date.now,
  ) {}

  current(): SigningBundle | undefined {
    return this.bundle;
  }

  setBundle(bundle: SigningBundle): void {
    this.bundle = bundle;
    this.metrics.rootCertExpiry.set(Math.floor(bundle.roots[0].notAfter.getTime() / 1000));
  }

  /**
   * CreateCertificate: counts the CSR, verifies it, lets `authorize` decide
   * whether the caller may have the CSR's identity (it throws AnchorError
   * UNAUTHENTICATED or IDENTITY_NOT_AUTHORIZED; the gRPC service always
   * passes one), issues, and answers `[leaf, …intermediates, root bundle]`
   * with the rotation hints. Throws AnchorError (already counted).
   */
  async createCertificate(
    csrPem: string,
    validitySeconds: number,
    authorize?: (identity: SpiffeIdentity) => Promise<void>,
  ): Promise<CreateCertificateResponse & { issued: IssueEvent }> {
    this.metrics.csrs.inc();
    try {
      const bundle = this.bundle;
      if (!bundle) throw new AnchorError("CA_NOT_READY", "the CA has no signing key yet");
      const csr = await parseCsr(csrPem);
      if (authorize) await authorize(identityOfCsr(csr, this.policy));
      const issued = await issueCertificate(bundle, this.policy, csr, validitySeconds, this.now());
      this.metrics.issued.inc();
      const event = { identity: issued.identity.uri, serial: issued.cert.serialNumber, notAfter: issued.notAfter };
      this.lastIssued = event;
      return {
        certChain: [pemOf(issued.cert), ...bundle.chain.map(pemOf), rootBundlePem(bundle)],
        gracePeriodRatio: this.grace.ratio,
        minGracePeriodSeconds: Math.round(this.grace.minGraceMs / 1000),
        issued: event,
      };
    } catch (e) {
      if (e instanceof AnchorError) this.metrics.refused(e.code);
      else this.metrics.refused("CERT_GENERATION_FAILED");
      throw e;
    }
  }
}
