import type { PeerCertificate } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import type { HubTlsOptions } from "../hub/hub_connection.ts";
import type { AgentEnvironment, AgentOptions } from "./agent_options.ts";
import { type ControlPlaneAuth, type ControlPlaneAuthPolicy, type WorkloadTls, uriSans } from "./workload_tls.ts";

/** Upstream's token paths per JWT_POLICY (renamed): a projected token, or the legacy service-account token. */
export const DEFAULT_TOKEN_PATHS = {
  "third-party-jwt": "./var/run/secrets/tokens/mesh-token",
  "first-party-jwt": "/var/run/secrets/orch.io/serviceaccount/token",
} as const;
/** Spec 2, "Authentication": the root certificate path of disco-agent with mesh_ca as its CA (`--caAddress`). */
export const DEFAULT_CA_ROOT_CERT = "/etc/certs/root-cert.pem";
/** Upstream's mount of the mesh root (the `mesh-ca-root-cert` ConfigMap) when the control plane is the CA. */
export const DEFAULT_CONTROL_PLANE_ROOT_CERT = "/var/run/secrets/mesh/root-cert.pem";

/** Where the workload certificate comes from (docs/sidecar.md "Joining through the control plane"). */
export interface CertificateSource {
  /** `HOST:PORT` CreateCertificate is called on. */
  address: string;
  /** true: disco-discovery's --secureGrpcAddr (the CA address defaults to --discoveryAddress, as upstream's CA_ADDR does). */
  controlPlane: boolean;
}

/**
 * The CA: `--caAddress` (CA_ADDR), else disco-discovery at `--discoveryAddress`
 * unless the control plane is reached in plain text by choice
 * (`--controlPlaneAuthPolicy NONE` given): then there is none, and the
 * sidecar runs without workload certificates (local development).
 */
export function certificateSource(opts: Pick<AgentOptions, "caAddress" | "discoveryAddress" | "controlPlaneAuthPolicy">): CertificateSource | undefined {
  const discovery = opts.discoveryAddress || undefined;
  if (opts.caAddress) return { address: opts.caAddress, controlPlane: opts.caAddress === discovery };
  if (discovery && opts.controlPlaneAuthPolicy !== "NONE") return { address: discovery, controlPlane: true };
  return undefined;
}

/**
 * `--controlPlaneAuthPolicy`, `--tokenPath`, `--caRootCert` (docs/sidecar.md
 * "Control-plane authentication"); throws naming the flag or variable. With
 * the control plane as the CA the policy defaults to MUTUAL_TLS (it serves
 * certificates only over TLS) and the root to upstream's mount.
 */
export function controlPlaneAuth(
  opts: Pick<AgentOptions, "controlPlaneAuthPolicy" | "tokenPath" | "caRootCert">,
  env: AgentEnvironment,
  ca?: CertificateSource,
): ControlPlaneAuth {
  const policy = (opts.controlPlaneAuthPolicy ?? (ca?.controlPlane ? "MUTUAL_TLS" : "NONE")) as ControlPlaneAuthPolicy;
  if (policy !== "NONE" && policy !== "MUTUAL_TLS") throw new Error(`--controlPlaneAuthPolicy: expected NONE or MUTUAL_TLS, got ${JSON.stringify(policy)}`);
  if (policy === "NONE" && ca?.controlPlane)
    throw new Error(
      `--controlPlaneAuthPolicy NONE: the CA is disco-discovery (${ca.address}), which serves certificates only over TLS (--secureGrpcAddr): use MUTUAL_TLS, or --caAddress for a plain-text mesh_ca`,
    );
  const jwtPolicy = env.JWT_POLICY || "third-party-jwt";
  if (jwtPolicy !== "third-party-jwt" && jwtPolicy !== "first-party-jwt")
    throw new Error(`JWT_POLICY: expected third-party-jwt or first-party-jwt, got ${JSON.stringify(jwtPolicy)}`);
  return {
    policy,
    tokenPath: opts.tokenPath || DEFAULT_TOKEN_PATHS[jwtPolicy],
    caRootCertFile: opts.caRootCert || (ca?.controlPlane ? DEFAULT_CONTROL_PLANE_ROOT_CERT : DEFAULT_CA_ROOT_CERT),
  };
}

/** `--hubIdentity` is a suffix of the hub's SPIFFE ID on a path boundary (`mesh-hub-service-account`, `sa/hub`, `/ns/mesh-system/sa/hub`) or the whole ID. */
export function hubIdentityMatches(uri: string, suffix: string): boolean {
  return uri === suffix || uri.endsWith(`/${suffix.replace(/^\/+/, "")}`);
}

/**
 * Credentials of a control-plane channel under MUTUAL_TLS (the hub, disco-discovery):
 * the current workload certificate, the mesh roots as the only trust
 * anchors, and the peer's URI SAN checked instead of its host name: it must
 * end with `identitySuffix` (`--hubIdentity`, `--discoIdentity`) when given,
 * else be any identity of the trust domain. `peer` names it in errors.
 */
export function controlPlaneChannelCredentials(tls: WorkloadTls, identitySuffix: string, peer: "hub" | "discovery"): grpc.ChannelCredentials {
  const c = tls.current;
  return grpc.credentials.createSsl(Buffer.from(c.rootPem), Buffer.from(c.keyPem), Buffer.from(c.certChainPem), {
    checkServerIdentity: controlPlaneIdentityCheck(tls.options.trustDomain, identitySuffix, peer),
  });
}

/** The check of a control-plane peer's certificate: a URI SAN of `trustDomain` ending with `identitySuffix` (any identity there when empty). */
export function controlPlaneIdentityCheck(
  trustDomain: string,
  identitySuffix: string,
  peer: "hub" | "discovery",
): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => {
    const uris = uriSans(cert.subjectaltname);
    const ok = uris.some((u) => u.startsWith(`spiffe://${trustDomain}/`) && (!identitySuffix || hubIdentityMatches(u, identitySuffix)));
    return ok
      ? undefined
      : new Error(
          `${peer} identity: the ${peer} presented ${uris.join(" ") || "no URI SAN"}, expected ${identitySuffix ? `an identity of ${trustDomain} ending with ${identitySuffix}` : `an identity of trust domain ${trustDomain}`}`,
        );
  };
}

/** The hub connections' mutual TLS under MUTUAL_TLS (`--hubIdentity`): the current workload certificate, the mesh roots, the hub's identity checked. */
export function hubTlsOptions(tls: WorkloadTls, hubIdentity: string): HubTlsOptions {
  const c = tls.current;
  return { ca: c.rootPem, cert: c.certChainPem, key: c.keyPem, checkServerIdentity: controlPlaneIdentityCheck(tls.options.trustDomain, hubIdentity, "hub") };
}
