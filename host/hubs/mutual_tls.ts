import { X509Certificate, createPrivateKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";

/**
 * Mutual TLS on the hub's gRPC port (spec 2, "hubs" and "Authentication";
 * docs/hubs.md "Mutual TLS"): the files of `--caCertFile`, `--certFile`,
 * `--keyFile`, re-read periodically so a rotated certificate is served
 * without a restart, a client certificate required and verified against the
 * roots, and its SPIFFE identity checked unless
 * `BYPASS_OOP_MTLS_SAN_VERIFICATION` is true.
 */

export const DEFAULT_CA_CERT_FILE = "/etc/certs/root-cert.pem";
export const DEFAULT_CERT_FILE = "/etc/certs/cert-chain.pem";
export const DEFAULT_KEY_FILE = "/etc/certs/key.pem";
/** How often the files are re-read for a rotated certificate. */
export const CERT_FILE_REFRESH_MS = 60_000;

export interface HubTlsFiles {
  caCertFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * Whether the hub serves mutual TLS: yes when any of the three flags was
 * given, or when all three default files exist (certificates mounted where
 * upstream mounts them); otherwise plain text (logged by the caller).
 */
export function chooseHubTls(files: HubTlsFiles, explicit: boolean): HubTlsFiles | undefined {
  if (explicit) return files;
  return [files.caCertFile, files.certFile, files.keyFile].every((f) => existsSync(f)) ? files : undefined;
}

/** What the hub proves and expects, read from the files at start; throws naming the file. */
export interface HubTlsIdentity {
  /** The URI SANs of the hub's own certificate. */
  uris: string[];
  /** The trust domain client identities must belong to: the hub's own, when its certificate has a SPIFFE ID. */
  trustDomain?: string;
}

export function loadHubTls(files: HubTlsFiles): HubTlsIdentity {
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (e) {
      throw new Error(`${flag} ${file}: ${(e as Error).message}`);
    }
  };
  const roots = read("--caCertFile", files.caCertFile);
  const chain = read("--certFile", files.certFile);
  const key = read("--keyFile", files.keyFile);
  if (!/-----BEGIN CERTIFICATE-----/.test(roots)) throw new Error(`--caCertFile ${files.caCertFile}: no PEM certificate`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(chain);
  } catch (e) {
    throw new Error(`--certFile ${files.certFile}: not a PEM certificate: ${(e as Error).message}`);
  }
  try {
    if (!leaf.checkPrivateKey(createPrivateKey(key))) throw new Error("the key does not match the certificate of --certFile");
  } catch (e) {
    throw new Error(`--keyFile ${files.keyFile}: ${(e as Error).message}`);
  }
  const uris = uriSansOf(leaf.subjectAltName);
  const td = uris.map((u) => /^spiffe:\/\/([^/]+)\//.exec(u)?.[1]).find(Boolean);
  return { uris, trustDomain: td };
}

/**
 * Server credentials: the files, watched; a client certificate chaining to
 * the roots is required. Resolves once the files have been read: the
 * provider reads them asynchronously, and a hub that listened before that
 * would fail its first handshakes (UNAVAILABLE to its first callers).
 */
export async function hubServerCredentials(files: HubTlsFiles): Promise<grpc.ServerCredentials> {
  const provider = new grpc.experimental.FileWatcherCertificateProvider({
    certificateFile: files.certFile,
    privateKeyFile: files.keyFile,
    caCertificateFile: files.caCertFile,
    refreshIntervalMs: CERT_FILE_REFRESH_MS,
  });
  // The listeners stay: removing the last one would stop the provider's watch.
  await Promise.all([
    new Promise<void>((resolve) => provider.addIdentityCertificateListener((update) => update && resolve())),
    new Promise<void>((resolve) => provider.addCaCertificateListener((update) => update && resolve())),
  ]);
  return grpc.experimental.createCertificateProviderServerCredentials(provider, provider, true);
}

export function uriSansOf(subjectAltName: string | undefined): string[] {
  return (subjectAltName ?? "").split(", ").filter((s) => s.startsWith("URI:")).map((s) => s.slice(4));
}

/**
 * The SAN check of a call's client certificate (the handshake already
 * verified its chain): a SPIFFE workload identity, of the hub's trust domain
 * when the hub has one. Returns why the caller is refused, or undefined.
 */
export function clientSanProblem(peerSubjectAltName: string | undefined, identity: HubTlsIdentity): string | undefined {
  const uris = uriSansOf(peerSubjectAltName);
  const prefix = identity.trustDomain ? `spiffe://${identity.trustDomain}/` : "spiffe://";
  if (uris.some((u) => u.startsWith(prefix) && /\/ns\/[^/]+\/sa\/[^/]+$/.test(u))) return undefined;
  return `client certificate identity ${uris.join(" ") || "(no URI SAN)"} is not a workload identity of ${identity.trustDomain ?? "any trust domain"} (BYPASS_OOP_MTLS_SAN_VERIFICATION skips this check)`;
}
