import { Gauge, type Registry } from "prom-client";
import type { BuildInfo } from "../daemon/version.ts";

/** `mesh_build{component,tag,revision}` = 1 (spec 2: LastValue, component build info). */
export function registerBuildMetric(registry: Registry, component: string, info: BuildInfo): void {
  const g = new Gauge({ name: "mesh_build", help: "Mesh component build info", labelNames: ["component", "tag", "revision"], registers: [registry] });
  g.set({ component, tag: info.tag, revision: info.revision }, 1);
}
