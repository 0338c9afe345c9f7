import type { ClientTlsSettings } from "../../../../config/resources/networking.ts";
import type { Analyzer } from "../analyzer.ts";
import { NoServerCertificateVerificationDestinationLevel, NoServerCertificateVerificationPortLevel } from "../messages.ts";

/**
 * Upstream's rule: SIMPLE or MUTUAL without caCertificates is unverified,
 * unless the certificates come from a credentialName of a rule with a
 * workloadSelector (a gateway's own credential, which carries the CA).
 */
const unverified = (tls: ClientTlsSettings | undefined, selected: boolean) =>
  tls !== undefined && (tls.mode === "SIMPLE" || tls.mode === "MUTUAL") && !tls.caCertificates && !(tls.credentialName && selected);

/** Upstream's DestinationRule TLS check: TLS origination without a CA does not verify the server. */
export const destinationRuleTlsAnalyzer: Analyzer = {
  name: "destinationrule-tls-verification",
  upstream: "destinationrule.CaCertificateAnalyzer",
  description: "DestinationRules originating TLS without caCertificates (the server is not verified)",
  codes: [NoServerCertificateVerificationDestinationLevel, NoServerCertificateVerificationPortLevel],
  needs: [],
  analyze(ctx) {
    for (const dr of ctx.catalog.byKind.DestinationRule) {
      const tp = dr.spec.trafficPolicy;
      const selected = dr.spec.workloadSelector !== undefined;
      if (unverified(tp?.tls, selected)) {
        ctx.report(
          NoServerCertificateVerificationDestinationLevel,
          dr,
          `DestinationRule ${dr.namespace}/${dr.name} in namespace ${dr.namespace} has TLS mode set to ${tp!.tls!.mode} but no caCertificates are set to validate server identity for host: ${dr.spec.host}`,
          "spec.trafficPolicy.tls",
        );
      }
      tp?.portLevelSettings.forEach((p, i) => {
        if (!unverified(p.tls, selected)) return;
        ctx.report(
          NoServerCertificateVerificationPortLevel,
          dr,
          `DestinationRule ${dr.namespace}/${dr.name} in namespace ${dr.namespace} has TLS mode set to ${p.tls!.mode} but no caCertificates are set to validate server identity for host: ${dr.spec.host} at port ${p.port}`,
          `spec.trafficPolicy.portLevelSettings[${i}].tls`,
        );
      });
    }
  },
};
