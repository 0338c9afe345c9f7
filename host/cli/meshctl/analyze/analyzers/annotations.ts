import type { AnyResource } from "../../../../config/catalog.ts";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { AlphaAnnotation, DeprecatedAnnotation, InvalidAnnotation, MisplacedAnnotation, UnknownAnnotation } from "../messages.ts";

interface KnownAnnotation {
  /** Kinds whose metadata (or, for Pod, a Deployment's pod template) may carry it. */
  readonly kinds: readonly string[];
  readonly status?: "alpha" | "deprecated";
  readonly deprecation?: string;
  /** Values it takes, when a fixed set; a check of the value otherwise. */
  readonly values?: readonly string[];
  readonly check?: (value: string) => string | undefined;
}

const PORTS = (v: string) => (v === "*" || /^\s*(\d+\s*(,\s*\d+\s*)*)?$/.test(v) ? undefined : "expected a comma-separated list of port numbers, or *");
const CIDRS = (v: string) =>
  v === "*" || v.split(",").every((c) => c.trim() === "" || /^[0-9a-fA-F:.]+(\/\d+)?$/.test(c.trim()))
    ? undefined
    : "expected a comma-separated list of CIDR blocks, or *";
const POD = ["Pod"];

/**
 * The mesh's annotations (upstream's `*.istio.io` ones, renamed), by name.
 * Only annotations of mesh domains are checked: others are the
 * orchestrator's or other tools' business.
 */
export const MESH_ANNOTATIONS: Readonly<Record<string, KnownAnnotation>> = {
  "sidecar.mesh.io/inject": { kinds: POD, values: ["true", "false"] },
  "sidecar.mesh.io/status": { kinds: POD },
  "sidecar.mesh.io/rewriteAppHTTPProbers": { kinds: POD, values: ["true", "false"] },
  "sidecar.mesh.io/proxyImage": { kinds: POD },
  "sidecar.mesh.io/proxyCPU": { kinds: POD },
  "sidecar.mesh.io/proxyCPULimit": { kinds: POD },
  "sidecar.mesh.io/proxyMemory": { kinds: POD },
  "sidecar.mesh.io/proxyMemoryLimit": { kinds: POD },
  "sidecar.mesh.io/logLevel": { kinds: POD, values: ["trace", "debug", "info", "warning", "error", "critical", "off"] },
  "sidecar.mesh.io/componentLogLevel": { kinds: POD },
  "sidecar.mesh.io/interceptionMode": { kinds: POD, values: ["REDIRECT", "TPROXY", "NONE"] },
  "sidecar.mesh.io/statsInclusionPrefixes": { kinds: POD, status: "deprecated", deprecation: "; use proxy.mesh.io/config proxyStatsMatcher" },
  "sidecar.mesh.io/statsInclusionSuffixes": { kinds: POD, status: "deprecated", deprecation: "; use proxy.mesh.io/config proxyStatsMatcher" },
  "sidecar.mesh.io/statsInclusionRegexps": { kinds: POD, status: "deprecated", deprecation: "; use proxy.mesh.io/config proxyStatsMatcher" },
  "sidecar.mesh.io/extraStatTags": { kinds: POD, status: "alpha" },
  "sidecar.mesh.io/agentLogLevel": { kinds: POD, status: "alpha" },
  "sidecar.mesh.io/bootstrapOverride": { kinds: POD },
  "sidecar.mesh.io/discoveryAddress": { kinds: POD },
  "sidecar.mesh.io/userVolume": { kinds: POD },
  "sidecar.mesh.io/userVolumeMount": { kinds: POD },
  "sidecar.mesh.io/enableCoreDump": { kinds: POD, values: ["true", "false"] },
  "status.sidecar.mesh.io/port": { kinds: POD, check: (v) => (/^\d+$/.test(v) ? undefined : "expected a port number") },
  "readiness.status.sidecar.mesh.io/initialDelaySeconds": { kinds: POD, check: (v) => (/^\d+$/.test(v) ? undefined : "expected a number of seconds") },
  "readiness.status.sidecar.mesh.io/periodSeconds": { kinds: POD, check: (v) => (/^\d+$/.test(v) ? undefined : "expected a number of seconds") },
  "readiness.status.sidecar.mesh.io/failureThreshold": { kinds: POD, check: (v) => (/^\d+$/.test(v) ? undefined : "expected a number") },
  "readiness.status.sidecar.mesh.io/applicationPorts": { kinds: POD, check: PORTS },
  "traffic.sidecar.mesh.io/includeInboundPorts": { kinds: POD, check: PORTS },
  "traffic.sidecar.mesh.io/excludeInboundPorts": { kinds: POD, check: PORTS },
  "traffic.sidecar.mesh.io/includeOutboundPorts": { kinds: POD, check: PORTS },
  "traffic.sidecar.mesh.io/excludeOutboundPorts": { kinds: POD, check: PORTS },
  "traffic.sidecar.mesh.io/includeOutboundIPRanges": { kinds: POD, check: CIDRS },
  "traffic.sidecar.mesh.io/excludeOutboundIPRanges": { kinds: POD, check: CIDRS },
  "traffic.sidecar.mesh.io/kubevirtInterfaces": { kinds: POD },
  "proxy.mesh.io/config": { kinds: POD },
  "proxy.mesh.io/overrides": { kinds: POD, status: "alpha" },
  "prometheus.mesh.io/merge-metrics": { kinds: POD, values: ["true", "false"] },
  "mesh.io/rev": { kinds: POD },
  "networking.mesh.io/exportTo": { kinds: ["Service"] },
  "networking.mesh.io/traffic-distribution": { kinds: ["Service"], status: "alpha" },
  "policy.mesh.io/check": { kinds: POD, values: ["enable", "disable"] },
  "policy.mesh.io/checkRetries": { kinds: POD, check: (v) => (/^\d+$/.test(v) ? undefined : "expected a number") },
  "policy.mesh.io/checkBaseRetryWaitTime": { kinds: POD },
  "policy.mesh.io/checkMaxRetryWaitTime": { kinds: POD },
  "policy.mesh.io/lang": { kinds: POD },
  "kubernetes.io/ingress.class": { kinds: ["Ingress"] },
};

/** Annotations the mesh's own components set (upstream's always-ignored ones): never the user's doing. */
const SET_BY_THE_MESH: ReadonlySet<string> = new Set(["ambient.mesh.io/redirection", "gateway.mesh.io/controller-version"]);

/** Whether an annotation is checked: of a mesh domain (`mesh.io/…`, `*.mesh.io/…`), or the ingress class (upstream checks it too). */
const isChecked = (name: string) => name === "kubernetes.io/ingress.class" || /^([a-z0-9.-]+\.)?mesh\.io\//.test(name);

/** The kinds whose annotations upstream checks. */
const CHECKED_KINDS: ReadonlySet<string> = new Set(["Namespace", "Service", "Pod", "Deployment"]);

function check(ctx: AnalysisContext, r: AnyResource, kind: string, annotations: Readonly<Record<string, string>>, fieldPrefix: string): void {
  for (const [name, value] of Object.entries(annotations)) {
    if (!isChecked(name) || SET_BY_THE_MESH.has(name)) continue;
    const known = MESH_ANNOTATIONS[name];
    const at = `${fieldPrefix}.annotations[${name}]`;
    if (!known) {
      ctx.report(UnknownAnnotation, r, `Unknown annotation: ${name}`, at);
      continue;
    }
    if (known.status === "deprecated")
      ctx.report(
        DeprecatedAnnotation,
        r,
        `Annotation ${JSON.stringify(name)} has been deprecated${known.deprecation ?? ""} and may not work in future versions.`,
        at,
      );
    if (known.status === "alpha")
      ctx.report(AlphaAnnotation, r, `Annotation ${JSON.stringify(name)} is part of an alpha-phase feature and may be incompletely supported.`, at);
    if (!known.kinds.includes(kind)) {
      ctx.report(MisplacedAnnotation, r, `Misplaced annotation: ${name} can only be applied to ${known.kinds.join(", ")}`, at);
      continue;
    }
    const problem =
      known.values && !known.values.includes(value) ? `expected one of ${known.values.join(", ")}, got ${JSON.stringify(value)}` : known.check?.(value);
    if (problem) ctx.report(InvalidAnnotation, r, `Invalid annotation ${name}: ${problem}`, at);
  }
}

/**
 * Upstream's annotation analyzer (misannoted), on Namespaces, Services, Pods
 * and Deployments: annotations of mesh domains (and the ingress class) that
 * the mesh does not know, deprecated, of an alpha feature, on a kind they do
 * not apply to, or with a value they do not take. Those the mesh's own
 * components set are left alone. A Deployment's pod template is checked as a
 * Pod (upstream looks only at the Deployment's own metadata).
 */
export const annotationsAnalyzer: Analyzer = {
  name: "annotations",
  upstream: "annotations.K8sAnalyzer",
  description: "Unknown, misplaced, invalid, deprecated and alpha mesh annotations (*.mesh.io)",
  codes: [UnknownAnnotation, MisplacedAnnotation, InvalidAnnotation, DeprecatedAnnotation, AlphaAnnotation],
  needs: [],
  analyze(ctx) {
    for (const r of ctx.catalog.resources) {
      if (!CHECKED_KINDS.has(r.kind)) continue;
      check(ctx, r, r.kind, r.annotations, "metadata");
      if (r.kind === "Deployment") check(ctx, r, "Pod", r.spec.template.annotations, "spec.template.metadata");
    }
  },
};
