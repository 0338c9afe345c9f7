/**
 * Why the CA refused a request. Each code maps to one gRPC status and one
 * `anchor_server_*` counter (docs/mesh_ca.md, "Errors").
 */
export type AnchorErrorCode =
  /** The CSR is not PEM/DER PKCS#10, or its signature does not verify. */
  | "CSR_INVALID"
  /** No usable SPIFFE identity in the CSR, or one outside the trust domain. */
  | "IDENTITY_INVALID"
  /** The identity's namespace is not in --allowed-namespaces. */
  | "NAMESPACE_NOT_ALLOWED"
  /** The caller presented no credential, or one that does not verify (token, client certificate). */
  | "UNAUTHENTICATED"
  /** The caller proved an identity other than the one its CSR asks for. */
  | "IDENTITY_NOT_AUTHORIZED"
  /** The CSR asks for a CA certificate and this CA does not sign them (--sign-ca-certs off). */
  | "CA_CERT_NOT_ALLOWED"
  /** The requested TTL is negative or above --max-workload-cert-ttl. */
  | "TTL_INVALID"
  /** No signing key is loaded (yet). */
  | "CA_NOT_READY"
  /** Building or signing the certificate failed. */
  | "CERT_GENERATION_FAILED";

export class AnchorError extends Error {
  constructor(
    readonly code: AnchorErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AnchorError";
  }
}

/** A problem with flags, environment variables or CA files: the daemon exits 2. */
export class AnchorConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AnchorConfigError";
  }
}
