import { envReader } from "../daemon/env_values.ts";
import type * as grpc from "@grpc/grpc-js";
import {
  DEFAULT_CERT_DIR,
  type TlsFiles,
  type TlsIdentity,
  allExist,
  certDirFiles,
  fileServerCredentials,
  loadTlsFiles,
  uriSansOf,
  workloadIdentityProblem,
} from "../security/mtls/cert_files.ts";
import type { StreamAccess } from "./ads_server.ts";

/**
 * `--secureGrpcAddr`: xDS over mutual TLS (spec 2, "disco-discovery";
 * docs/discovery.md "Secure xDS"). disco-discovery presents a certificate
 * issued by mesh_ca (`DISCO_CERT_PROVIDER` `anchor`), read from
 * `DISCO_CERT_DIR` (default `/etc/certs`, upstream's mount) in upstream's
 * layout and re-read as it is renewed (the same file handling as the hub's).
 * An xDS caller must present a certificate chaining to its roots, carrying a
 * SPIFFE workload identity of the trust domain (any trust domain with
 * `DISCO_SKIP_VALIDATE_TRUST_DOMAIN`), else its stream is refused
 * (PERMISSION_DENIED); that identity is the proxy's for what only it may be
 * served (its namespace's Secrets: mesh_snapshot.ts). The handshake asks for
 * a certificate without requiring one, as upstream's 15012 does: a proxy
 * asks for its first certificate there with a token (certificate_relay.ts).
 */

export const CERT_PROVIDER = "anchor";
/** The path of a workload identity: `/ns/<namespace>/sa/<service-account>`. */
const WORKLOAD_PATH = /^spiffe:\/\/[^/]+\/ns\/([^/]+)\/sa\/([^/]+)$/;

/** What the variables say, read at start. */
export interface SecureXdsSettings {
  files: TlsFiles;
  /** Whether the files must exist (DISCO_CERT_DIR or --secureGrpcAddr given): if not, failing to read them is fatal. */
  required: boolean;
  skipTrustDomainCheck: boolean;
}

/** DISCO_CERT_DIR, DISCO_CERT_PROVIDER, DISCO_SKIP_VALIDATE_TRUST_DOMAIN; throws naming the variable. */
export function secureXdsSettings(env: NodeJS.ProcessEnv, addressGiven: boolean): SecureXdsSettings {
  const provider = env.DISCO_CERT_PROVIDER || CERT_PROVIDER;
  if (provider !== CERT_PROVIDER)
    throw new Error(
      `DISCO_CERT_PROVIDER=${JSON.stringify(provider)}: expected ${CERT_PROVIDER} (the certificate is issued by mesh_ca; there is no orchestrator CA and disco-discovery signs no certificate of its own)`,
    );
  // Go's strconv.ParseBool spellings, as every boolean variable.
  const skip = envReader(env).bool("DISCO_SKIP_VALIDATE_TRUST_DOMAIN", false);
  return {
    files: certDirFiles(env.DISCO_CERT_DIR || DEFAULT_CERT_DIR),
    required: addressGiven || Boolean(env.DISCO_CERT_DIR),
    skipTrustDomainCheck: skip,
  };
}

/** Whether the secure listener can be served: its files exist, or were asked for (then reading them fails loudly). */
export function secureXdsAvailable(s: SecureXdsSettings): boolean {
  return s.required || allExist(s.files);
}

export interface SecureXds {
  credentials: grpc.ServerCredentials;
  identity: TlsIdentity;
  /** The trust domain callers must belong to (undefined: any). */
  clientTrustDomain?: string;
  access: StreamAccess;
}

/**
 * Reads the certificate (throws naming the file) and builds the listener's
 * credentials and caller check. `trustDomain` (`--trust-domain`) overrides
 * the trust domain of disco-discovery's own certificate.
 */
export async function secureXds(s: SecureXdsSettings, trustDomain?: string): Promise<SecureXds> {
  const names = { caCertFile: "DISCO_CERT_DIR root-cert.pem", certFile: "DISCO_CERT_DIR cert-chain.pem", keyFile: "DISCO_CERT_DIR key.pem" };
  const identity = loadTlsFiles(s.files, names);
  const clientTrustDomain = s.skipTrustDomainCheck ? undefined : trustDomain || identity.trustDomain;
  return {
    credentials: await fileServerCredentials(s.files, false),
    identity,
    clientTrustDomain,
    access: {
      peerProblem: (san) => workloadIdentityProblem(san, clientTrustDomain, "DISCO_SKIP_VALIDATE_TRUST_DOMAIN"),
      peerIdentity: (san) => {
        const prefix = clientTrustDomain ? `spiffe://${clientTrustDomain}/` : "spiffe://";
        const uri = uriSansOf(san).find((u) => u.startsWith(prefix) && WORKLOAD_PATH.test(u));
        const m = uri === undefined ? null : WORKLOAD_PATH.exec(uri);
        return uri && m ? { uri, namespace: m[1], serviceAccount: m[2] } : undefined;
      },
    },
  };
}
