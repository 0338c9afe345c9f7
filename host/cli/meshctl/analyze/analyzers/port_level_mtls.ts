import type { Analyzer } from "../analyzer.ts";
import { PortLevelMtlsPortNotBound } from "../messages.ts";
import { selectedWorkloads, servicesOfWorkload, targetContainerPort } from "../model.ts";

/**
 * Spec 1, rule 6: a portLevelMtls entry is ignored when no Service targets
 * that container port of the selected workloads. A common cause is writing
 * the service port instead of the container port; the message says so when
 * the number is a service port of those workloads.
 */
export const portLevelMtlsAnalyzer: Analyzer = {
  name: "peerauthentication-port-level-mtls",
  description: "PeerAuthentication portLevelMtls entries for container ports no Service targets (ignored, spec 1 rule 6)",
  codes: [PortLevelMtlsPortNotBound],
  needs: ["Service", "Workload"],
  analyze(ctx) {
    for (const pa of ctx.catalog.byKind.PeerAuthentication) {
      const labels = pa.spec.selector?.matchLabels;
      if (!labels || Object.keys(labels).length === 0 || pa.spec.portLevelMtls.length === 0) continue;
      const workloads = selectedWorkloads(ctx.model, pa.kind, pa.namespace, labels);
      if (workloads.length === 0) continue; // NoMatchingWorkloadsFound says so
      const bound = new Set<number>();
      const servicePorts = new Map<number, { service: string; target: number | undefined }>();
      for (const w of workloads) {
        for (const s of servicesOfWorkload(ctx.model, w)) {
          for (const p of s.ports) {
            const cp = targetContainerPort(p, w);
            if (cp !== undefined) bound.add(cp);
            servicePorts.set(p.port, { service: s.name, target: cp });
          }
        }
      }
      for (const entry of pa.spec.portLevelMtls) {
        if (bound.has(entry.port)) continue;
        const sp = servicePorts.get(entry.port);
        const hint =
          sp && sp.target !== undefined && sp.target !== entry.port
            ? `; ${entry.port} is a port of service ${sp.service}, but portLevelMtls keys are container ports: its targetPort is ${sp.target}`
            : "";
        ctx.report(
          PortLevelMtlsPortNotBound,
          pa,
          `portLevelMtls for port ${entry.port} is ignored: no Service targets container port ${entry.port} of the selected workloads (spec rule 6)${hint}`,
          `spec.portLevelMtls[${entry.port}]`,
        );
      }
    }
  },
};
