import { AUTHN_PAYLOAD_PROPERTY, type AuthnResult } from "../../security/jwt/authenticator.ts";
import { type AuthorizationEngine, type Decision, RBAC_DENIED_BODY, RBAC_DENIED_STATUS } from "../../security/authz/engine.ts";
import type { ExtAuthzClient, ExtAuthzVerdict } from "../../security/authz/ext_authz.ts";
import type { LocalReply } from "../../wasm/abi_types.ts";
import type { MeshSettings } from "../mesh_config.ts";
import { type Authenticated, type InboundRequest, headerOf } from "./authn.ts";

/**
 * The authorization filters of the inbound path, in upstream's order:
 * CUSTOM policies first (the external authorizer named by the mesh config's
 * `extensionProviders` may deny, or add headers the rest sees), then the
 * DENY/ALLOW/AUDIT policies of the RBAC engine, on the request as
 * authentication left it.
 */

/** What the external authorizer of a CUSTOM policy answered (Envoy's ext_authz stats: ok, denied, error, failure_mode_allowed). */
export interface ExtAuthzOutcome {
  readonly provider: string;
  readonly outcome: "ok" | "denied" | "error" | "failure_mode_allowed";
  /** Why it erred (transport error, timeout, 5xx). */
  readonly error?: string;
}

/** The inbound stage's answer: a local reply, or the headers (and properties) to go on with. */
export type InboundResult =
  | { kind: "reply"; reply: LocalReply; stage: "authn" | "authz"; decision?: Decision; authn?: AuthnResult; extAuthz?: ExtAuthzOutcome }
  | {
      kind: "continue";
      headers: Array<[string, string]>;
      properties: Record<string, string>;
      decision: Decision;
      authn: AuthnResult;
      extAuthz?: ExtAuthzOutcome;
    };

export class Authorization {
  constructor(
    private readonly engine: AuthorizationEngine,
    private readonly providers: MeshSettings["extensionProviders"],
    /** The container port the listener stands for (authorization `ports`). */
    private readonly containerPort: number,
    /** Calls the external authorizers of CUSTOM policies; without it a CUSTOM policy that matches denies. */
    private readonly extAuthz?: ExtAuthzClient,
  ) {}

  /** CUSTOM, then RBAC, for a request authentication let through. */
  async authorize(request: InboundRequest, a: Authenticated): Promise<InboundResult> {
    const { forwardPath, authority, peerPrincipal, authn, mtls, pseudo, properties } = a;
    const containerPort = this.containerPort;
    const get = (name: string) => headerOf(request.headers, name);
    let headers = a.headers;
    const authzRequest = {
      method: get(":method"),
      path: forwardPath,
      host: authority,
      headers,
      sourceIp: request.socket.remoteAddress ?? "",
      destinationIp: request.socket.localAddress,
      destinationPort: containerPort,
      sni: a.properties["connection.requested_server_name"],
      peerPrincipal,
      requestPrincipal: authn.outcome === "authenticated" ? authn.principal : undefined,
      authPayload: authn.outcome === "authenticated" ? authn.payload : undefined,
    };
    // CUSTOM first (upstream's ext_authz filter before the RBAC filters): the authorizer may deny, or add headers the rest sees.
    const custom = this.engine.custom(authzRequest);
    let extAuthz: ExtAuthzOutcome | undefined;
    if (custom.kind !== "none") {
      const provider = custom.kind === "ask" ? this.providers.authorizers.get(custom.provider) : undefined;
      const verdict: ExtAuthzVerdict =
        custom.kind === "invalid" || !provider || !this.extAuthz
          ? {
              kind: "deny",
              status: RBAC_DENIED_STATUS,
              body: RBAC_DENIED_BODY,
              headers: [],
              error: custom.kind === "invalid" ? custom.why : `no external authorizer ${custom.provider}`,
            }
          : await this.extAuthz.check(provider, {
              method: authzRequest.method,
              path: forwardPath,
              authority,
              scheme: "http",
              headers,
              source: {
                address: request.socket.remoteAddress ?? "",
                port: request.socket.remotePort ?? 0,
                ...(peerPrincipal ? { principal: `spiffe://${peerPrincipal}` } : {}),
              },
              destination: {
                address: request.socket.localAddress ?? "",
                port: containerPort,
                ...(mtls ? { principal: a.properties["connection.uri_san_local_certificate"] } : {}),
              },
              requestId: get("x-request-id") || undefined,
            });
      const name = custom.kind === "ask" ? custom.provider : "-";
      if (verdict.kind === "deny") {
        extAuthz = { provider: name, outcome: verdict.error ? "error" : "denied", ...(verdict.error ? { error: verdict.error } : {}) };
        const match = custom.kind === "ask" ? custom.match : undefined;
        const decision: Decision = Object.freeze({
          allowed: false,
          policy: match?.policy ?? null,
          ruleIndex: match?.ruleIndex ?? null,
          action: "CUSTOM",
          reason: "denied_by_ext_authz",
          status: verdict.status,
          body: verdict.body,
        });
        return {
          kind: "reply",
          stage: "authz",
          decision,
          authn,
          extAuthz,
          reply: {
            status: verdict.status,
            details: verdict.error ? "ext_authz_error" : "ext_authz_denied",
            body: verdict.body,
            headers: verdict.headers.map(([k, v]) => [k, v]),
            grpcStatus: -1,
          },
        };
      }
      extAuthz = { provider: name, outcome: verdict.failedOpen ? "failure_mode_allowed" : "ok", ...(verdict.failedOpen ? { error: verdict.failedOpen } : {}) };
      const replaced = new Set([...verdict.removeHeaders, ...verdict.setHeaders.map(([k]) => k)]);
      headers = [...headers.filter(([k]) => !replaced.has(k)), ...verdict.setHeaders.map(([k, v]) => [k, v] as [string, string])];
    }
    const decision = this.engine.evaluate({ ...authzRequest, headers });
    if (!decision.allowed) {
      return {
        kind: "reply",
        stage: "authz",
        decision,
        authn,
        extAuthz,
        reply: { status: decision.status ?? 403, details: "rbac_access_denied", body: decision.body ?? "RBAC: access denied", headers: [], grpcStatus: -1 },
      };
    }
    if (authn.outcome === "authenticated") properties[AUTHN_PAYLOAD_PROPERTY.join(".")] = authn.payloadJson;
    const outPseudo = pseudo.map(([k, v]) => [k, k === ":path" ? forwardPath : v] as [string, string]);
    return { kind: "continue", headers: [...outPseudo, ...headers], properties, decision, authn, extAuthz };
  }
}
