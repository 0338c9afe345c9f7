import type { Catalog, Resource } from "../../../../config/catalog.ts";
import type { ClientTlsMode } from "../../../../config/resources/networking.ts";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { DisabledWorkloadNeedsDestinationRule, type MessageType, MtlsPolicyConflict, StrictWorkloadNeedsDestinationRule } from "../messages.ts";
import { destinationRuleForAnyClient, tlsForPort } from "../../../../mesh/destination_rules.ts";
import { type KnownService, type MeshModel, effectiveMtls, targetContainerPort, workloadsOfService } from "../model.ts";

/**
 * Spec 1, rules 5–7, in the spec's (1.5/1.6-era) semantics: auto mutual TLS
 * infers the server mode from mesh and namespace policies only, so
 * - a workload (or port) policy STRICT wants a DestinationRule MESH_MUTUAL for
 *   the services of its workloads (rule 5), a Warning: it works only while
 *   the namespace or mesh is not DISABLE;
 * - a workload (or port) policy DISABLE under a namespace or mesh that is not
 *   DISABLE needs a DestinationRule DISABLE (rule 7), else proxied clients
 *   send mutual TLS and fail with 503: an Error;
 * - a DestinationRule DISABLE towards a STRICT server, or MESH_MUTUAL towards
 *   a DISABLE server, always fails: MTLSPolicyConflict (upstream IST0113).
 * With `enableAutoMtls: false` clients send plain text without a
 * DestinationRule, so namespace and mesh STRICT also want one.
 */
export const peerAuthnDestinationRuleAnalyzer: Analyzer = {
  name: "peerauthentication-destinationrule",
  description: "PeerAuthentication modes against the DestinationRule tls mode clients use for the same service ports (spec 1, rules 5-7)",
  codes: [MtlsPolicyConflict, StrictWorkloadNeedsDestinationRule, DisabledWorkloadNeedsDestinationRule],
  needs: ["Service"],
  analyze(ctx) {
    const findings = new Map<string, Finding>();
    const add = (f: Omit<Finding, "ports">, port: number) => {
      const key = `${f.type.code}|${f.on.id}|${f.fieldPath}|${f.service.fqdn}|${f.other?.id ?? ""}`;
      const existing = findings.get(key) ?? { ...f, ports: [] };
      if (!existing.ports.includes(port)) existing.ports.push(port);
      findings.set(key, existing);
    };
    for (const service of ctx.model.services) {
      if (service.source !== "Service") continue; // ServiceEntry hosts and the assumed ingress gateway
      const workloads = workloadsOfService(ctx.model, service);
      const dr = destinationRuleFor(ctx.catalog, ctx.model, service);
      for (const port of service.ports) {
        const client = clientTls(dr, port.port);
        for (const w of workloads.length > 0 ? workloads : [undefined]) {
          const cp = targetContainerPort(port, w);
          const eff = effectiveMtls(ctx.catalog, ctx.model.config, service.namespace, w?.labels, cp);
          const pa = eff.policy;
          if (!pa) continue;
          const paField = eff.scope === "port" ? `spec.portLevelMtls[${cp}]` : "spec.mtls.mode";
          const workloadScoped = eff.scope === "workload" || eff.scope === "port";
          if (dr && ((eff.mode === "STRICT" && client.mode === "DISABLE") || (eff.mode === "DISABLE" && client.mode === "MESH_MUTUAL"))) {
            add(
              { type: MtlsPolicyConflict, on: dr, fieldPath: client.fieldPath, service, other: pa, serverMode: eff.mode, clientMode: client.mode },
              port.port,
            );
          } else if (client.mode === undefined && eff.mode === "STRICT" && (workloadScoped || !ctx.model.config.enableAutoMtls)) {
            add(
              { type: StrictWorkloadNeedsDestinationRule, on: pa, fieldPath: paField, service, serverMode: eff.mode, inherited: eff.inherited, workloadScoped },
              port.port,
            );
          } else if (client.mode === undefined && eff.mode === "DISABLE" && workloadScoped && eff.inherited !== "DISABLE" && ctx.model.config.enableAutoMtls) {
            add(
              {
                type: DisabledWorkloadNeedsDestinationRule,
                on: pa,
                fieldPath: paField,
                service,
                serverMode: eff.mode,
                inherited: eff.inherited,
                workloadScoped,
              },
              port.port,
            );
          }
        }
      }
    }
    for (const f of findings.values()) report(ctx, f);
  },
};

interface Finding {
  readonly type: MessageType;
  readonly on: Resource<"DestinationRule"> | Resource<"PeerAuthentication">;
  readonly fieldPath: string;
  readonly service: KnownService;
  readonly other?: Resource<"PeerAuthentication">;
  readonly serverMode: string;
  readonly clientMode?: ClientTlsMode;
  readonly inherited?: string;
  readonly workloadScoped?: boolean;
  readonly ports: number[];
}

function report(ctx: AnalysisContext, f: Finding): void {
  const where = `${f.service.fqdn} (port ${f.ports.sort((a, b) => a - b).join(", ")})`;
  let text: string;
  if (f.type === MtlsPolicyConflict) {
    const server = f.serverMode === "STRICT" ? "requires STRICT mutual TLS" : "sets DISABLE (mutual TLS off)";
    text = `A DestinationRule and PeerAuthentication are in conflict about mutual TLS for ${where}: the DestinationRule sets tls mode ${f.clientMode} but ${f.other!.id} ${server} on the workloads behind it; requests from proxied clients fail`;
  } else if (f.type === StrictWorkloadNeedsDestinationRule) {
    text = f.workloadScoped
      ? `This workload policy requires STRICT mutual TLS for the workloads of ${where}, but no DestinationRule for that host sets tls mode MESH_MUTUAL: workload policies are not aggregated for outbound mutual TLS (spec rule 5)` +
        (f.inherited === "DISABLE" ? `; clients infer DISABLE from the namespace or mesh policy and their requests fail` : "")
      : `This policy requires STRICT mutual TLS for ${where}, but no DestinationRule for that host sets tls mode MESH_MUTUAL and auto mutual TLS is off (enableAutoMtls: false): clients send plain text and fail`;
  } else {
    text = `This workload policy sets DISABLE for the workloads of ${where} under a ${f.inherited} namespace or mesh policy, but no DestinationRule for that host sets tls mode DISABLE: proxied clients still send mutual TLS and fail (spec rule 7)`;
  }
  ctx.report(f.type, f.on, text, f.fieldPath);
}

/** The DestinationRule a service's clients use (the mesh model's lookup; the client's namespace is not known offline). */
export function destinationRuleFor(catalog: Catalog, model: MeshModel, service: KnownService): Resource<"DestinationRule"> | undefined {
  return destinationRuleForAnyClient(catalog.byKind.DestinationRule, service.fqdn, service.namespace, model.config.rootNamespace);
}

/** The tls mode the rule gives a service port (the mesh model's answer) and the field that says it. */
export function clientTls(dr: Resource<"DestinationRule"> | undefined, servicePort: number): { mode?: ClientTlsMode; fieldPath: string } {
  const { tls, portLevelIndex: i } = tlsForPort(dr?.spec.trafficPolicy, servicePort);
  if (i >= 0) return { mode: tls?.mode, fieldPath: `spec.trafficPolicy.portLevelSettings[${i}]${tls ? ".tls.mode" : ""}` };
  return { mode: tls?.mode, fieldPath: tls ? "spec.trafficPolicy.tls.mode" : "spec.host" };
}
