import type { Resource } from "../../../../config/catalog.ts";
import type { PodSpec } from "../../../../config/resources/orch.ts";
import { selectorSelects } from "../../../../mesh/labels.ts";
import { DEFAULT_CONTAINER_NAME } from "../../../../inject/settings.ts";
import { INJECT_ANNOTATION } from "../../../../inject/sidecar.ts";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { DeploymentAssociatedToMultipleServices, DeploymentConflictingPorts, InvalidApplicationUID } from "../messages.ts";

/** The user ID the sidecar proxy runs as (upstream's 1337): traffic of that user is not captured. */
export const PROXY_UID = 1337;

/** Upstream's application UID check: a pod, or one of its containers, running as the proxy's user. */
export const applicationUidAnalyzer: Analyzer = {
  name: "application-uid",
  upstream: "deployment.ApplicationUIDAnalyzer",
  description: `Pods and Deployments whose pod or containers run as user ${PROXY_UID}, the sidecar proxy's`,
  codes: [InvalidApplicationUID],
  needs: [],
  analyze(ctx) {
    const check = (r: Resource<"Pod"> | Resource<"Deployment">, spec: PodSpec, prefix: string) => {
      if (spec.runAsUser === PROXY_UID)
        ctx.report(
          InvalidApplicationUID,
          r,
          `User ID (UID) ${PROXY_UID} is reserved for the sidecar proxy (pod securityContext.runAsUser).`,
          `${prefix}.securityContext.runAsUser`,
        );
      spec.containers.forEach((c, i) => {
        if (c.runAsUser === PROXY_UID)
          ctx.report(
            InvalidApplicationUID,
            r,
            `User ID (UID) ${PROXY_UID} is reserved for the sidecar proxy (container ${c.name}).`,
            `${prefix}.containers[${i}].securityContext.runAsUser`,
          );
      });
    };
    for (const p of ctx.catalog.byKind.Pod) check(p, p.spec, "spec");
    for (const d of ctx.catalog.byKind.Deployment) check(d, d.spec.template.spec, "spec.template.spec");
  },
};

/**
 * Whether a Deployment's pods are in the mesh, as upstream decides: they run
 * the proxy container, or their template says `sidecar.mesh.io/inject`
 * (label, then annotation), or a Namespace document labels their namespace
 * `mesh-injection=enabled`.
 */
function deploymentInMesh(ctx: AnalysisContext, d: Resource<"Deployment">): boolean {
  const t = d.spec.template;
  if (t.spec.containers.some((c) => c.name === DEFAULT_CONTAINER_NAME)) return true;
  const inject = t.labels[INJECT_ANNOTATION] ?? t.annotations[INJECT_ANNOTATION];
  if (inject !== undefined) return inject === "true";
  return ctx.catalog.byKind.Namespace.find((n) => n.name === d.namespace)?.labels["mesh-injection"] === "enabled";
}

/**
 * Upstream's deployment/service association, for Deployments in the mesh:
 * the Services (of its namespace) that select a Deployment's pods must agree
 * per port on the protocol, and must not map one targetPort from different
 * ports.
 */
export const serviceAssociationAnalyzer: Analyzer = {
  name: "deployment-services",
  upstream: "deployment.MultiServiceAnalyzer",
  description: "Deployments selected by several Services that disagree on a port's protocol or map one targetPort from different ports",
  codes: [DeploymentAssociatedToMultipleServices, DeploymentConflictingPorts],
  needs: [],
  analyze(ctx) {
    for (const d of ctx.catalog.byKind.Deployment) {
      if (!deploymentInMesh(ctx, d)) continue;
      const services = ctx.catalog.byKind.Service.filter((s) => s.namespace === d.namespace && selectorSelects(s.spec.selector, d.spec.template.labels));
      const byPort = new Map<number, Map<string, string[]>>();
      const byTarget = new Map<string, Map<number, string>>();
      for (const s of services) {
        const name = `${s.namespace}/${s.name}`;
        for (const p of s.spec.ports) {
          const protocols = byPort.get(p.port) ?? new Map<string, string[]>();
          protocols.set(p.protocol, [...(protocols.get(p.protocol) ?? []), name]);
          byPort.set(p.port, protocols);
          const target = String(p.targetPort);
          const ports = byTarget.get(target) ?? new Map<number, string>();
          ports.set(p.port, name);
          byTarget.set(target, ports);
        }
      }
      for (const [port, protocols] of byPort) {
        if (protocols.size < 2) continue;
        const names = [...protocols.values()].flat().sort();
        ctx.report(
          DeploymentAssociatedToMultipleServices,
          d,
          `This deployment ${d.name} is associated with multiple services using port ${port} but different protocols: [${names.join(" ")}]`,
          "metadata.name",
        );
      }
      for (const [target, ports] of byTarget) {
        if (ports.size < 2) continue;
        const names = [...new Set(ports.values())].sort();
        const numbers = [...ports.keys()].sort((a, b) => a - b);
        ctx.report(
          DeploymentConflictingPorts,
          d,
          `This deployment ${d.name} is associated with multiple services [${names.join(" ")}] using targetPort ${JSON.stringify(target)} but different ports: [${numbers.join(" ")}].`,
          "metadata.name",
        );
      }
    }
  },
};
