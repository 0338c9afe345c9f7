import { AnchorError } from "./errors.ts";
import type { ServiceAccountTokenVerifier } from "./service_account_token.ts";
import type { SpiffeIdentity } from "./spiffe.ts";

/** What a CreateCertificate caller presented. */
export interface CallerCredentials {
  /** The `authorization: Bearer <token>` metadata value, without the scheme. */
  bearerToken?: string;
  /**
   * The URI SANs of the client certificate, present only when the TLS
   * handshake verified it against the CA's current roots.
   */
  verifiedCertificateUris?: readonly string[];
}

/** How the caller proved the identity it asked for (`registration-authority`: a trusted caller asked on the workload's behalf). */
export type AuthenticatedBy = "certificate" | "token" | "registration-authority";

/**
 * A request that names the workload it is for (metadata
 * `ImpersonatedIdentity`): upstream's rule for a trusted node agent, here a
 * registration authority (disco-discovery relaying its proxies' requests).
 * The caller must prove, by its client certificate, an identity whose
 * `<namespace>/<service-account>` is in `trusted` (--trusted-node-accounts),
 * and the CSR must ask for exactly the impersonated identity.
 */
export function authorizeImpersonation(
  requested: SpiffeIdentity,
  impersonated: string,
  credentials: CallerCredentials,
  trusted: ReadonlySet<string>,
): AuthenticatedBy {
  const uris = credentials.verifiedCertificateUris ?? [];
  if (uris.length === 0)
    throw new AnchorError(
      "UNAUTHENTICATED",
      `ImpersonatedIdentity ${impersonated}: only a trusted caller proving its identity by a client certificate may ask for another identity`,
    );
  const accounts = uris.flatMap((u) => {
    const m = /\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(u);
    return m ? [`${m[1]}/${m[2]}`] : [];
  });
  if (!accounts.some((a) => trusted.has(a)))
    throw new AnchorError(
      "IDENTITY_NOT_AUTHORIZED",
      `ImpersonatedIdentity: the caller ${uris.join(", ")} is not a trusted node account (--trusted-node-accounts / CA_TRUSTED_NODE_ACCOUNTS: ${[...trusted].join(",") || "none"})`,
    );
  if (impersonated !== requested.uri)
    throw new AnchorError("IDENTITY_NOT_AUTHORIZED", `ImpersonatedIdentity ${impersonated} differs from the identity the CSR asks for, ${requested.uri}`);
  return "registration-authority";
}

/** The token of an `authorization` metadata value (`Bearer <token>`, scheme case-insensitive). */
export function bearerTokenOf(authorization: string | undefined): string | undefined {
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization ?? "");
  return m?.[1];
}

/**
 * Upstream's rule for CreateCertificate: the caller is authenticated by its
 * current mesh certificate (renewal over mutual TLS) or else by a
 * service-account token, and the identity it proves must be the one the CSR
 * asks for. No credential, or one that does not verify, is UNAUTHENTICATED;
 * a proven identity other than the CSR's is IDENTITY_NOT_AUTHORIZED
 * (PERMISSION_DENIED). A certificate wins over a token, as upstream tries the
 * client-certificate authenticator first.
 */
export async function authorizeCaller(
  requested: SpiffeIdentity,
  credentials: CallerCredentials,
  tokens: ServiceAccountTokenVerifier | undefined,
): Promise<AuthenticatedBy> {
  const uris = credentials.verifiedCertificateUris ?? [];
  if (uris.length > 0) {
    if (uris.includes(requested.uri)) return "certificate";
    throw new AnchorError("IDENTITY_NOT_AUTHORIZED", `the client certificate proves ${uris.join(", ")}; it may not ask for ${requested.uri}`);
  }
  if (credentials.bearerToken !== undefined) {
    if (!tokens)
      throw new AnchorError("UNAUTHENTICATED", "service-account token refused: token authentication is not configured on this CA (--token-jwks / TOKEN_JWKS)");
    const caller = await tokens.verify(credentials.bearerToken);
    if (caller.namespace !== requested.namespace || caller.serviceAccount !== requested.serviceAccount) {
      throw new AnchorError(
        "IDENTITY_NOT_AUTHORIZED",
        `the token of ${caller.subject} may not ask for ${requested.uri} (namespace ${requested.namespace}, service account ${requested.serviceAccount})`,
      );
    }
    return "token";
  }
  throw new AnchorError(
    "UNAUTHENTICATED",
    `no credential: a first certificate needs a service-account token (metadata authorization: Bearer <token>), a renewal the current workload certificate over mutual TLS`,
  );
}
