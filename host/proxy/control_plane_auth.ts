import * as grpc from "@grpc/grpc-js";
import type { AgentEnvironment, AgentOptions } from "./agent_options.ts";
import { type ControlPlaneAuth, type ControlPlaneAuthPolicy, type WorkloadTls, uriSans } from "./workload_tls.ts";

/** Upstream's token paths per JWT_POLICY (renamed): a projected token, or the legacy service-account token. */
export const DEFAULT_TOKEN_PATHS = {
  "third-party-jwt": "./var/run/secrets/tokens/mesh-token",
  "first-party-jwt": "/var/run/secrets/orch.io/serviceaccount/token",
} as const;
/** Spec 2, "Authentication": the root certificate path of disco-agent. */
export const DEFAULT_CA_ROOT_CERT = "/etc/certs/root-cert.pem";

/**
 * `--controlPlaneAuthPolicy`, `--tokenPath`, `--caRootCert` (docs/sidecar.md
 * "Control-plane authentication"); throws naming the flag or variable.
 */
export function controlPlaneAuth(opts: Pick<AgentOptions, "controlPlaneAuthPolicy" | "tokenPath" | "caRootCert">, env: AgentEnvironment): ControlPlaneAuth {
  const policy = (opts.controlPlaneAuthPolicy ?? "NONE") as ControlPlaneAuthPolicy;
  if (policy !== "NONE" && policy !== "MUTUAL_TLS") throw new Error(`--controlPlaneAuthPolicy: expected NONE or MUTUAL_TLS, got ${JSON.stringify(policy)}`);
  const jwtPolicy = env.JWT_POLICY || "third-party-jwt";
  if (jwtPolicy !== "third-party-jwt" && jwtPolicy !== "first-party-jwt")
    throw new Error(`JWT_POLICY: expected third-party-jwt or first-party-jwt, got ${JSON.stringify(jwtPolicy)}`);
  return {
    policy,
    tokenPath: opts.tokenPath || DEFAULT_TOKEN_PATHS[jwtPolicy],
    caRootCertFile: opts.caRootCert || DEFAULT_CA_ROOT_CERT,
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
  const td = tls.options.trustDomain;
  return grpc.credentials.createSsl(Buffer.from(c.rootPem), Buffer.from(c.keyPem), Buffer.from(c.certChainPem), {
    checkServerIdentity: (_host, cert) => {
      const uris = uriSans(cert.subjectaltname);
      const ok = uris.some((u) => u.startsWith(`spiffe://${td}/`) && (!identitySuffix || hubIdentityMatches(u, identitySuffix)));
      return ok
        ? undefined
        : new Error(
            `${peer} identity: the ${peer} presented ${uris.join(" ") || "no URI SAN"}, expected ${identitySuffix ? `an identity of ${td} ending with ${identitySuffix}` : `an identity of trust domain ${td}`}`,
          );
    },
  });
}

/** The hub channels' credentials under MUTUAL_TLS (`--hubIdentity`). */
export function hubChannelCredentials(tls: WorkloadTls, hubIdentity: string): grpc.ChannelCredentials {
  return controlPlaneChannelCredentials(tls, hubIdentity, "hub");
}
