import type { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";
import type { Catalog } from "../../config/catalog.ts";
import { AuthorizationEngine, authorizationPoliciesFor } from "../../security/authz/engine.ts";
import type { ExtAuthzClient } from "../../security/authz/ext_authz.ts";
import { Authenticator, jwtRulesFor } from "../../security/jwt/authenticator.ts";
import type { JwksCache } from "../../security/jwt/jwks.ts";
import { type ServerMtls, serverMtls } from "../../security/mtls/peer_authn.ts";
import type { Workload } from "../../security/workload.ts";
import type { MeshSettings } from "../mesh_config.ts";
import { type InboundRequest, authenticate } from "./authn.ts";
import { Authorization, type InboundResult } from "./authz.ts";

/**
 * The sidecar's inbound security for one configuration (issue 6 items 2–4;
 * docs/security.md "Order on the inbound path"): the server mTLS mode of the
 * container port, then authentication (authn.ts) and authorization
 * (authz.ts). Built once when a configuration is applied, read by every
 * request. `:path` arrives normalized (the listener edge,
 * request_target.ts); what authorization checks is what is forwarded.
 */

export interface SecurityIdentity {
  /** The workload this sidecar runs for (labels, namespace, service account, container ports). */
  workload: Workload;
  /** The container port the inbound listener stands for (PeerAuthentication portLevelMtls, authorization `ports`). */
  containerPort: number;
  gateway: boolean;
}

export class InboundSecurity {
  readonly serverMode: ServerMtls;
  private readonly authenticator: Authenticator;
  private readonly engine: AuthorizationEngine;
  private readonly authorization: Authorization;

  constructor(
    catalog: Catalog,
    readonly mesh: MeshSettings,
    readonly identity: SecurityIdentity,
    jwks: JwksCache,
    clockSkewSeconds: number,
    extAuthz?: ExtAuthzClient,
  ) {
    const k = catalog.byKind;
    const w = identity.workload;
    // A gateway's listener speaks the Gateway server's protocol (HTTP): no mesh mTLS on it.
    this.serverMode = identity.gateway
      ? Object.freeze({ mode: "DISABLE", scope: "default", policy: null })
      : serverMtls(k.PeerAuthentication, w, identity.containerPort, k.Service, mesh.rootNamespace);
    this.authenticator = Authenticator.create(jwtRulesFor(k.RequestAuthentication, w, mesh.rootNamespace), { jwks, clockSkewSeconds });
    this.engine = AuthorizationEngine.create(authorizationPoliciesFor(k.AuthorizationPolicy, w, mesh.rootNamespace));
    this.authorization = new Authorization(this.engine, mesh.extensionProviders, identity.containerPort, extAuthz);
  }

  /** What /config_dump shows of the decisions. */
  describe(): unknown {
    const { extensionProviders, ...mesh } = this.mesh;
    return {
      serverMtls: this.serverMode,
      authorization: { ...this.engine.size, providers: this.engine.customProviders },
      mesh: {
        ...mesh,
        extensionProviders: [...extensionProviders.authorizers.values(), ...[...extensionProviders.other].map(([name, kind]) => ({ name, kind }))],
      },
      workload: this.identity.workload,
      containerPort: this.identity.containerPort,
      gateway: this.identity.gateway,
    };
  }

  /** Inbound (and gateway) request stage, before the Wasm filter: XFCC (SANITIZE_SET), JWT, authorization. */
  async inbound(request: InboundRequest, socket: TLSSocket | { encrypted?: undefined }, local: X509Certificate | undefined): Promise<InboundResult> {
    const a = await authenticate(this.authenticator, request, socket, local);
    if (a.kind === "reply") return { kind: "reply", stage: "authn", authn: a.authn, reply: a.reply };
    return this.authorization.authorize(request, a);
  }
}
