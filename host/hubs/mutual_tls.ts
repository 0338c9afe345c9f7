import type * as grpc from "@grpc/grpc-js";
import {
  DEFAULT_CERT_DIR,
  type TlsFiles,
  type TlsIdentity,
  allExist,
  certDirFiles,
  fileServerCredentials,
  loadTlsFiles,
  workloadIdentityProblem,
} from "../security/mtls/cert_files.ts";

/**
 * Mutual TLS on the hub's gRPC port (spec 2, "hubs" and "Authentication";
 * docs/hubs.md "Mutual TLS"): the files of `--caCertFile`, `--certFile`,
 * `--keyFile`, re-read periodically so a rotated certificate is served
 * without a restart, a client certificate required and verified against the
 * roots, and its SPIFFE identity checked unless
 * `BYPASS_OOP_MTLS_SAN_VERIFICATION` is true. The file handling is shared
 * with disco-discovery (host/security/mtls/cert_files.ts).
 */

const DEFAULTS = certDirFiles(DEFAULT_CERT_DIR);
export const DEFAULT_CA_CERT_FILE = DEFAULTS.caCertFile;
export const DEFAULT_CERT_FILE = DEFAULTS.certFile;
export const DEFAULT_KEY_FILE = DEFAULTS.keyFile;

export type HubTlsFiles = TlsFiles;
export type HubTlsIdentity = TlsIdentity;

/**
 * Whether the hub serves mutual TLS: yes when any of the three flags was
 * given, or when all three default files exist (certificates mounted where
 * upstream mounts them); otherwise plain text (logged by the caller).
 */
export function chooseHubTls(files: HubTlsFiles, explicit: boolean): HubTlsFiles | undefined {
  if (explicit) return files;
  return allExist(files) ? files : undefined;
}

/** What the hub proves and expects, read from the files at start; throws naming the flag and file. */
export function loadHubTls(files: HubTlsFiles): HubTlsIdentity {
  return loadTlsFiles(files, { caCertFile: "--caCertFile", certFile: "--certFile", keyFile: "--keyFile" });
}

/** Server credentials: the files, watched; a client certificate chaining to the roots is required. */
export function hubServerCredentials(files: HubTlsFiles): Promise<grpc.ServerCredentials> {
  return fileServerCredentials(files);
}

/**
 * The SAN check of a call's client certificate: a SPIFFE workload identity,
 * of the hub's trust domain when the hub has one. Returns why the caller is
 * refused, or undefined.
 */
export function clientSanProblem(peerSubjectAltName: string | undefined, identity: HubTlsIdentity): string | undefined {
  return workloadIdentityProblem(peerSubjectAltName, identity.trustDomain, "BYPASS_OOP_MTLS_SAN_VERIFICATION");
}
