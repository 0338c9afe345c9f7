import { X509Certificate } from "node:crypto";
import { labelsMatch, selectorSelects } from "../../../../mesh/labels.ts";
import type { Analyzer } from "../analyzer.ts";
import { GatewayDuplicateCertificate, InvalidGatewayCredential, ReferencedResourceNotFound } from "../messages.ts";
import { isDefined } from "../model.ts";
import { type AnalyzedGateway as Gateway, type AnalyzedServer, gatewaysOf } from "./gateways.ts";

type ServerTlsSettings = NonNullable<AnalyzedServer["tls"]>;

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
    const gws = gatewaysOf(ctx);
    for (const gw of gws) {
      const peers = gws.filter((o) => o !== gw && (Object.keys(gw.selector).length === 0 || labelsMatch(gw.selector, o.selector)));
      for (const other of peers) {
        for (const s of gw.servers) {
          for (const t of other.servers) {
            if (!s.tls || !t.tls || !sameCertificate(s.tls, t.tls)) continue;
            gw.report(
              GatewayDuplicateCertificate,
              `Duplicate certificate in multiple gateways [${gw.namespace}/${gw.name} ${other.namespace}/${other.name}] may cause 404s if clients re-use HTTP2 connections.`,
              "metadata.name",
            );
          }
        }
      }
    }
  },
};

/** Whether a Secret holds a certificate the gateway can serve at `now`: `tls.crt` (or `cert`) parsing as X.509 and valid then, with its key. */
export function usableCredential(data: Readonly<Record<string, string>>, now: number): boolean {
  const cert = data["tls.crt"] ?? data.cert;
  const key = data["tls.key"] ?? data.key;
  if (!cert || !key) return false;
  try {
    const x = new X509Certificate(cert);
    return Date.parse(x.validFrom) <= now && now <= Date.parse(x.validTo);
  } catch {
    return false;
  }
}

/** The namespace of the first workload a Gateway selects (where its credentialName Secrets live). */
function gatewayNamespace(ctx: Parameters<Analyzer["analyze"]>[0], gw: Gateway): string | undefined {
  return ctx.model.workloads.find((w) => selectorSelects(gw.selector, w.labels))?.namespace;
}

/**
 * Upstream's gateway secret check: a server's `credentialName` names a
 * Secret in the namespace of the gateway workloads; missing, it is a
 * reference not found; present (or refused by validation) without a
 * certificate valid now and its key, an invalid credential. A Gateway selecting no
 * workload is gateway-selector's finding.
 */
export const gatewaySecretAnalyzer: Analyzer = {
  name: "gateway-secret",
  upstream: "gateway.SecretAnalyzer",
  description: "Gateway servers whose credentialName Secret is missing or holds no usable certificate",
  codes: [ReferencedResourceNotFound, InvalidGatewayCredential],
  needs: [],
  analyze(ctx) {
    for (const gw of gatewaysOf(ctx)) {
      const ns = gatewayNamespace(ctx, gw);
      if (ns === undefined) continue;
      gw.servers.forEach((server, i) => {
        const name = server.tls?.credentialName;
        if (!name) return;
        const at = `spec.servers[${i}].tls.credentialName`;
        const secret = ctx.catalog.byKind.Secret.find((s) => s.namespace === ns && s.name === name);
        if (!secret && !isDefined(ctx.catalog, ctx.model, "Secret", ns, name)) {
          gw.report(
            ReferencedResourceNotFound,
            `Referenced credentialName not found: ${JSON.stringify(name)} (a Secret in namespace ${ns}, where the gateway runs)`,
            at,
          );
        } else if (!secret || !usableCredential(secret.spec.data, ctx.now())) {
          gw.report(
            InvalidGatewayCredential,
            `The credential referenced by the Gateway ${gw.name} in namespace ${ns} is invalid (Secret ${ns}/${name} has no tls.crt valid now with its tls.key), which can cause the traffic not to work as expected.`,
            at,
          );
        }
      });
    }
  },
};
