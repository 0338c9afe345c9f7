/** A workload certificate as a CA issued it (host/anchor/client.ts requestWorkloadCertificate), with its key; what CertificateRotator renews. */
export interface WorkloadCertificate {
  identity: string;
  /** PKCS#8 PEM of the workload's private key (never left this process). */
  keyPem: string;
  /** The workload certificate then any intermediates: what a TLS endpoint presents (`cert`). */
  certChainPem: string;
  /** The roots to trust (`ca`); several while a rotated root overlaps the previous one. */
  rootPem: string;
  notBefore: Date;
  expiresAt: Date;
  /** When to renew: expiresAt minus the CA's grace period (ratio × lifetime, at least its minimum). */
  rotateAt: Date;
  serialNumber: string;
}
