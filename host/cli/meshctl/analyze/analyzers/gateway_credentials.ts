import { X509Certificate } from "node:crypto";
import type { Resource } from "../../../../config/catalog.ts";
import type { ServerTlsSettings } from "../../../../config/resources/networking.ts";
import { labelsMatch, selectorSelects } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { GatewayDuplicateCertificate, InvalidGatewayCredential, ReferencedResourceNotFound } from "../messages.ts";
import { isDefined } from "../model.ts";

type Gateway = Resource<"Gateway">;

/** Upstream's rule: the same credentialName, or (neither having one) the same serverCertificate and privateKey. */
function sameCertificate(a: ServerTlsSettings, b: ServerTlsSettings): boolean {
  if (a.credentialName && b.credentialName) return a.credentialName === b.credentialName;
  if (a.credentialName || b.credentialName) return false;
  return Boolean(a.serverCertificate && a.serverCertificate === b.serverCertificate && a.privateKey && a.privateKey === b.privateKey);
}

/**
 * Upstream's gateway certificate check: Gateways on the same workloads (one
 * selector within the other's; an empty selector takes every Gateway) with
 * servers using the same certificate. A client reusing an HTTP/2 connection
 * for the other Gateway's host then gets a 404.
 */
export const gatewayCertificateAnalyzer: Analyzer = {
  name: "gateway-certificate",
  upstream: "gateway.CertificateAnalyzer",
  description: "Gateways on the same workloads whose servers use the same certificate",
  codes: [GatewayDuplicateCertificate],
  needs: [],
  analyze(ctx) {
    const gws = ctx.catalog.byKind.Gateway;
    for (const gw of gws) {
      const peers = gws.filter((o) => o !== gw && (Object.keys(gw.spec.selector).length === 0 || labelsMatch(gw.spec.selector, o.spec.selector)));
      for (const other of peers) {
        for (const s of gw.spec.servers) {
          for (const t of other.spec.servers) {
            if (!s.tls || !t.tls || !sameCertificate(s.tls, t.tls)) continue;
            ctx.report(GatewayDuplicateCertificate, gw, `Duplicate certificate in multiple gateways [${gw.namespace}/${gw.name} ${other.namespace}/${other.name}] may cause 404s if clients re-use HTTP2 connections.`, "metadata.name");
          }
        }
      }
    }
  },
};

/** Whether a Secret holds a certificate the gateway can serve: `tls.crt` (or `cert`) parsing as X.509, with its key. */
export function usableCredential(data: Readonly<Record<string, string>>): boolean {
  const cert = data["tls.crt"] ?? data.cert;
  const key = data["tls.key"] ?? data.key;
  if (!cert || !key) return false;
  try {
    new X509Certificate(cert);
    return true;
  } catch {
    return false;
  }
}

/** The namespace of the first workload a Gateway selects (where its credentialName Secrets live). */
function gatewayNamespace(ctx: Parameters<Analyzer["analyze"]>[0], gw: Gateway): string | undefined {
  return ctx.model.workloads.find((w) => selectorSelects(gw.spec.selector, w.labels))?.namespace;
}

/**
 * Upstream's gateway secret check: a server's `credentialName` names a
 * Secret in the namespace of the gateway workloads; missing, it is a
 * reference not found; present (or refused by validation) without a
 * certificate and key, an invalid credential. A Gateway selecting no
 * workload is gateway-selector's finding.
 */
export const gatewaySecretAnalyzer: Analyzer = {
  name: "gateway-secret",
  upstream: "gateway.SecretAnalyzer",
  description: "Gateway servers whose credentialName Secret is missing or holds no usable certificate",
  codes: [ReferencedResourceNotFound, InvalidGatewayCredential],
  needs: [],
  analyze(ctx) {
    for (const gw of ctx.catalog.byKind.Gateway) {
      const ns = gatewayNamespace(ctx, gw);
      if (ns === undefined) continue;
      gw.spec.servers.forEach((server, i) => {
        const name = server.tls?.credentialName;
        if (!name) return;
        const at = `spec.servers[${i}].tls.credentialName`;
        const secret = ctx.catalog.byKind.Secret.find((s) => s.namespace === ns && s.name === name);
        if (!secret && !isDefined(ctx.catalog, ctx.model, "Secret", ns, name)) {
          ctx.report(ReferencedResourceNotFound, gw, `Referenced credentialName not found: ${JSON.stringify(name)} (a Secret in namespace ${ns}, where the gateway runs)`, at);
        } else if (!secret || !usableCredential(secret.spec.data)) {
          ctx.report(InvalidGatewayCredential, gw, `The credential referenced by the Gateway ${gw.name} in namespace ${ns} is invalid (Secret ${ns}/${name} has no parsable tls.crt with its tls.key), which can cause the traffic not to work as expected.`, at);
        }
      });
    }
  },
};
