import { X509Certificate, createPrivateKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type * as grpc from "@grpc/grpc-js";

/**
 * A control-plane daemon's own mutual TLS certificate, as files in
 * upstream's layout (`root-cert.pem`, `cert-chain.pem`, `key.pem`, issued by
 * mesh_ca): checked at start, then served through grpc-js's file watcher so
 * a renewed certificate is served without a restart. Shared by `hubs`
 * (`--caCertFile/--certFile/--keyFile`) and `disco-discovery`
 * (`--secureGrpcAddr`, `DISCO_CERT_DIR`).
 */

export interface TlsFiles {
  caCertFile: string;
  certFile: string;
  keyFile: string;
}

/** Where upstream mounts a control-plane daemon's certificate. */
export const DEFAULT_CERT_DIR = "/etc/certs";

/** The three files of a certificate directory. */
export function certDirFiles(dir: string): TlsFiles {
  return { caCertFile: join(dir, "root-cert.pem"), certFile: join(dir, "cert-chain.pem"), keyFile: join(dir, "key.pem") };
}

export function allExist(files: TlsFiles): boolean {
  return [files.caCertFile, files.certFile, files.keyFile].every((f) => existsSync(f));
}

/** How the daemon's errors name each file (its flag, or the variable that sets the directory). */
export type TlsFileNames = Readonly<Record<keyof TlsFiles, string>>;

/** How many times the files are re-read for a rotated certificate. */
export const CERT_FILE_REFRESH_MS = 60_000;

/** What the daemon proves and expects, read from the files at start. */
export interface TlsIdentity {
  /** The URI SANs of the daemon's own certificate. */
  uris: string[];
  /** The trust domain of its SPIFFE identity, when its certificate has one. */
  trustDomain?: string;
}

/** Reads and checks the files (readable, PEM, the key matches); throws naming the file. */
export function loadTlsFiles(files: TlsFiles, names: TlsFileNames): TlsIdentity {
  const read = (which: keyof TlsFiles) => {
    try {
      return readFileSync(files[which], "utf8");
    } catch (e) {
      throw new Error(`${names[which]} ${files[which]}: ${(e as Error).message}`);
    }
  };
  const roots = read("caCertFile");
  const chain = read("certFile");
  const key = read("keyFile");
  if (!/-----BEGIN CERTIFICATE-----/.test(roots)) throw new Error(`${names.caCertFile} ${files.caCertFile}: no PEM certificate`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(chain);
  } catch (e) {
    throw new Error(`${names.certFile} ${files.certFile}: not a PEM certificate: ${(e as Error).message}`);
  }
  try {
    if (!leaf.checkPrivateKey(createPrivateKey(key))) throw new Error(`the key does not match the certificate of ${names.certFile}`);
  } catch (e) {
    throw new Error(`${names.keyFile} ${files.keyFile}: ${(e as Error).message}`);
  }
  const uris = uriSansOf(leaf.subjectAltName);
  const trustDomain = uris.map((u) => /^spiffe:\/\/([^/]+)\//.exec(u)?.[1]).find(Boolean);
  return { uris, trustDomain };
}

/**
 * Server credentials from the files, watched; a client certificate chaining
 * to the roots is required (`requireClientCert`, default), or verified only
 * when offered (upstream's VerifyClientCertIfGiven: a port that also serves
 * callers without a certificate yet, who prove themselves by a token). Resolves once the files have been read: the
 * provider reads them asynchronously, and a daemon that listened before that
 * would fail its first handshakes (UNAVAILABLE to its first callers).
 */
export async function fileServerCredentials(files: TlsFiles, requireClientCert = true): Promise<grpc.ServerCredentials> {
  // Loaded here, not with the module: a daemon reads its default file names from it before it knows it will serve.
  // A CommonJS package: `default` is its exports where it is bundled (build/out, whose chunk has no named exports for it).
  const loaded: typeof import("@grpc/grpc-js") & { default?: typeof import("@grpc/grpc-js") } = await import("@grpc/grpc-js");
  const grpc = loaded.default ?? loaded;
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
  return grpc.experimental.createCertificateProviderServerCredentials(provider, provider, requireClientCert);
}

export function uriSansOf(subjectAltName: string | undefined): string[] {
  return (subjectAltName ?? "")
    .split(", ")
    .filter((s) => s.startsWith("URI:"))
    .map((s) => s.slice(4));
}

/**
 * The SAN check of a caller's certificate (the handshake already verified
 * its chain): a SPIFFE workload identity `spiffe://<td>/ns/<ns>/sa/<sa>`, of
 * `trustDomain` when given (else any). Returns why the caller is refused, or
 * undefined; `skippedBy` names the setting that turns the check off.
 */
export function workloadIdentityProblem(peerSubjectAltName: string | undefined, trustDomain: string | undefined, skippedBy: string): string | undefined {
  const uris = uriSansOf(peerSubjectAltName);
  const prefix = trustDomain ? `spiffe://${trustDomain}/` : "spiffe://";
  if (uris.some((u) => u.startsWith(prefix) && /\/ns\/[^/]+\/sa\/[^/]+$/.test(u))) return undefined;
  return `client certificate identity ${uris.join(" ") || "(no URI SAN)"} is not a workload identity of ${trustDomain ?? "any trust domain"} (${skippedBy} skips this check)`;
}
