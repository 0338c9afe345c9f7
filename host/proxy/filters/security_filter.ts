import type { X509Certificate } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { XFCC_HEADER } from "../../security/mtls/xfcc.ts";
import type { ScopedLogger } from "../../telemetry/logger.ts";
import type { HeaderList } from "../../wasm/abi_types.ts";
import type { Counters } from "../counters.ts";
import type { SecurityFilter, SecurityStageResult } from "../http/connection_manager.ts";
import type { InboundSecurity } from "./inbound_security.ts";

/**
 * The security filters as the listeners run them: inbound, the applied
 * configuration's InboundSecurity with every decision logged in its scope
 * (`authn`, `rbac`) and counted (`rbac.*`, `jwt_authn.*`, `ext_authz.*`);
 * outbound, the app's XFCC dropped (SANITIZE). The sidecar hands each new
 * configuration to `configure`.
 */
export class InboundSecurityFilter implements SecurityFilter {
  private security: InboundSecurity | undefined;

  constructor(
    private readonly tls: { readonly localCertificate: X509Certificate },
    /** A gateway's HTTPS is server-only TLS, not mesh mutual TLS. */
    private readonly gateway: boolean,
    private readonly counters: Counters,
    private readonly logs: Record<"default" | "authn" | "rbac", ScopedLogger>,
  ) {}

  configure(security: InboundSecurity): void {
    this.security = security;
  }

  /** The inbound security stage: mTLS identity, XFCC, JWT, authorization; every denial logged with its reason and counted. */
  async decode(req: IncomingMessage, headers: HeaderList): Promise<SecurityStageResult> {
    const policy = this.security;
    if (!policy) throw new Error("no security configuration applied");
    const socket = req.socket as TLSSocket;
    const r = await policy.inbound({ headers, socket }, socket, socket.encrypted ? this.tls.localCertificate : undefined);
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    if (this.logs.authn.enabled("debug")) {
      this.logs.authn.debug(
        `${req.method} ${req.url} from ${peer}: ${socket.encrypted ? "mutual TLS" : "plain text"} (peer authentication ${policy.serverMode.mode})${r.authn ? `, request authentication ${r.authn.outcome}` : ""}`,
      );
    }
    if (r.authn) this.counters.bump(`jwt_authn.${r.authn.outcome}`);
    if (r.extAuthz) {
      const x = r.extAuthz;
      this.counters.bump(`ext_authz.${x.outcome}`);
      if (x.error) this.logs.default.warn(`ext_authz ${x.provider} ${x.outcome} for ${req.method} ${req.url} from ${peer}: ${x.error}`);
    }
    if (r.decision?.audited) {
      const a = r.decision.audited;
      this.counters.bump("rbac.audited");
      this.logs.rbac.info(`rbac audited ${req.method} ${req.url} from ${peer}: policy=${a.policy} rule=${a.ruleIndex}`);
    }
    const accessLogHint = r.decision?.audited !== undefined;
    if (r.decision) {
      const d = r.decision;
      this.counters.bump(`rbac.${d.allowed ? "allowed" : "denied"}`);
      this.counters.bump(`rbac.reason.${d.reason}`);
      if (d.policy) this.counters.bump(`rbac.policy.${d.policy}.rule_${d.ruleIndex}.${d.allowed ? "allowed" : "denied"}`);
      const line = `rbac ${d.allowed ? "allowed" : "denied"} ${req.method} ${req.url} from ${peer}: reason=${d.reason} policy=${d.policy ?? "-"} rule=${d.ruleIndex ?? "-"} action=${d.action ?? "-"}`;
      if (d.allowed) this.logs.rbac.debug(line);
      else this.logs.rbac.info(line);
    }
    if (r.kind === "reply") {
      if (r.stage === "authn" && r.authn?.outcome === "denied")
        this.logs.authn.info(`jwt_authn denied ${req.method} ${req.url} from ${peer}: ${r.authn.status} ${r.authn.body}`);
      return { kind: "reply", reply: r.reply, accessLogHint };
    }
    this.counters.bump(socket.encrypted ? "inbound.mtls_requests" : "inbound.plaintext_requests");
    // A gateway's HTTPS is server-only TLS, not mesh mutual TLS.
    return {
      kind: "continue",
      headers: r.headers,
      properties: r.properties,
      mtls: socket.encrypted === true && !this.gateway,
      accessLogHint,
    };
  }
}

export class OutboundSecurityFilter implements SecurityFilter {
  /** Outbound requests: the app's XFCC is always dropped (SANITIZE). */
  async decode(_req: IncomingMessage, headers: HeaderList): Promise<SecurityStageResult> {
    return { kind: "continue", headers: headers.filter(([k]) => k !== XFCC_HEADER), properties: {}, mtls: false };
  }
}
