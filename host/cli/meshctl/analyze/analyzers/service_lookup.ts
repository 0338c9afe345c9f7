import type { KnownService, MeshModel } from "../model.ts";
import { servicesForHost } from "../model.ts";

/** The annotation that limits where an orchestrator Service is visible (upstream's `networking.istio.io/exportTo`). */
export const SERVICE_EXPORT_TO_ANNOTATION = "networking.mesh.io/exportTo";

/** The namespaces a service is visible in (`*` for all): ServiceEntry `exportTo`, a Service's exportTo annotation; `.` is the service's own. */
export function serviceScopes(s: KnownService): string[] {
  let list: readonly string[] = [];
  if (s.resource?.kind === "ServiceEntry") list = s.resource.spec.exportTo;
  else if (s.resource?.kind === "Service") {
    const annotation = s.resource.annotations[SERVICE_EXPORT_TO_ANNOTATION];
    if (annotation)
      list = annotation
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean);
  }
  if (list.length === 0) return ["*"];
  return list.map((ns) => (ns === "." ? s.namespace : ns));
}

/**
 * Services a host stands for, as seen by a resource of `namespace` exported
 * to `exportTo` (upstream's destination lookup): services visible everywhere,
 * and those visible in the resource's namespace (or in one it is exported to).
 */
export function visibleServicesForHost(model: MeshModel, host: string, namespace: string, exportTo: readonly string[]): KnownService[] {
  const wanted = new Set(exportTo.length === 0 ? [namespace] : exportTo.map((e) => (e === "." ? namespace : e)));
  return servicesForHost(model, host).filter((s) => serviceScopes(s).some((scope) => scope === "*" || wanted.has(scope)));
}
