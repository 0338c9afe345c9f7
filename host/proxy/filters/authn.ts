import type { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";
import type { AuthnResult, Authenticator } from "../../security/jwt/authenticator.ts";
import { applyXfcc, xfccFor } from "../../security/mtls/xfcc.ts";
import type { LocalReply } from "../../wasm/abi_types.ts";

/**
 * The authentication filter of the inbound path (docs/security.md "Order on
 * the inbound path"): who the peer is (the mutual TLS certificate's URI SAN,
 * as the `connection.*` properties), the `X-Forwarded-Client-Cert` header
 * (SANITIZE_SET: a client-supplied one is never passed on), then the
 * RequestAuthentication JWT rules, which may deny, remove the token, set
 * claim headers and rewrite nothing else.
 */

export interface InboundRequest {
  headers: ReadonlyArray<readonly [string, string]>;
  socket: { remoteAddress?: string; remotePort?: number; localAddress?: string };
}

/** What authentication established: the request as it goes on, and who sent it. */
export interface Authenticated {
  readonly kind: "continue";
  /** The request's headers without pseudo-headers, XFCC and JWT effects applied. */
  readonly headers: Array<[string, string]>;
  readonly pseudo: Array<[string, string]>;
  /** `connection.*` properties for the filter. */
  readonly properties: Record<string, string>;
  /** Mutual TLS with a peer certificate. */
  readonly mtls: boolean;
  /** `<trust domain>/ns/<ns>/sa/<sa>` of a SPIFFE peer. */
  readonly peerPrincipal?: string;
  readonly forwardPath: string;
  readonly authority: string;
  readonly authn: AuthnResult;
}

export type AuthnOutcome = Authenticated | { readonly kind: "reply"; readonly reply: LocalReply; readonly authn: AuthnResult };

export function headerOf(headers: ReadonlyArray<readonly [string, string]>, name: string): string {
  return headers.find(([k]) => k === name)?.[1] ?? "";
}

const uriSan = (cert: X509Certificate) =>
  (cert.subjectAltName ?? "")
    .split(", ")
    .find((s) => s.startsWith("URI:"))
    ?.slice(4) ?? "";

/** Peer identity, XFCC and JWT for one request on `socket` (`local`: this sidecar's certificate when it terminated TLS). */
export async function authenticate(
  authenticator: Authenticator,
  request: InboundRequest,
  socket: TLSSocket | { encrypted?: undefined },
  local: X509Certificate | undefined,
): Promise<AuthnOutcome> {
  const tlsSocket = socket.encrypted ? (socket as TLSSocket) : undefined;
  const peer = tlsSocket?.getPeerX509Certificate();
  const mtls = peer !== undefined && local !== undefined;
  const get = (name: string) => headerOf(request.headers, name);
  const properties: Record<string, string> = {};
  const peerUri = mtls ? uriSan(peer!) : "";
  if (mtls) {
    properties["connection.uri_san_peer_certificate"] = peerUri;
    properties["connection.uri_san_local_certificate"] = uriSan(local!);
    const sni = (tlsSocket as unknown as { servername?: string | false }).servername;
    if (sni) properties["connection.requested_server_name"] = sni;
  }
  // XFCC: never pass a client-supplied one; on mutual TLS set our element (security.md §3).
  const pseudo = request.headers.filter(([k]) => k.startsWith(":")).map(([k, v]) => [k, v] as [string, string]);
  let headers = applyXfcc(
    request.headers.filter(([k]) => !k.startsWith(":")),
    mtls ? xfccFor(local!, peer!) : undefined,
  );
  const path = get(":path") || "/";
  const authority = get(":authority");
  const authn = await authenticator.authenticate({ method: get(":method"), path, host: authority, scheme: "http", headers });
  if (authn.outcome === "denied") {
    return {
      kind: "reply",
      authn,
      reply: {
        status: authn.status,
        details: `jwt_authn_access_denied{${authn.body.replace(/ /g, "_")}}`,
        body: authn.body,
        headers: Object.entries(authn.responseHeaders),
        grpcStatus: -1,
      },
    };
  }
  const removed = new Set(authn.effects.removeHeaders.map((h) => h.toLowerCase()));
  headers = [...headers.filter(([k]) => !removed.has(k)), ...authn.effects.setHeaders.map(([k, v]) => [k, v] as [string, string])];
  return {
    kind: "continue",
    headers,
    pseudo,
    properties,
    mtls,
    ...(mtls && peerUri.startsWith("spiffe://") ? { peerPrincipal: peerUri.slice("spiffe://".length) } : {}),
    forwardPath: authn.effects.path,
    authority,
    authn,
  };
}
