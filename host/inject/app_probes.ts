import type { Field } from "../config/decode.ts";

/**
 * Application probe rewriting, as upstream's injector does (app_probe.go):
 * the orchestrator's probes of each app container (httpGet, tcpSocket,
 * grpc) would be captured and refused by the sidecar's mutual TLS, so they
 * are pointed at the agent's status port, path `/app-health/<container>/<kind>`,
 * and the originals travel to the agent in MESH_ORCH_APP_PROBERS (JSON keyed
 * by those paths), which it replays against the app (host/proxy/app_probers.ts).
 */

/** Spec 2's name of upstream's ISTIO_KUBE_APP_PROBERS. */
export const APP_PROBERS_ENV = "MESH_ORCH_APP_PROBERS";
/** Per-pod switch (upstream `sidecar.istio.io/rewriteAppHTTPProbers`). */
export const REWRITE_PROBES_ANNOTATION = "sidecar.mesh.io/rewriteAppHTTPProbers";

/** One original probe, with a named port resolved to its number. */
export interface AppProber {
  httpGet?: { path?: string; port: number; host?: string; scheme?: string; httpHeaders?: Array<{ name: string; value: string }> };
  tcpSocket?: { port: number; host?: string };
  grpc?: { port: number; service?: string };
  timeoutSeconds?: number;
}

const KINDS = [
  ["readinessProbe", "readyz"],
  ["livenessProbe", "livez"],
  ["startupProbe", "startupz"],
] as const;

/** Where the agent serves a container's probe of one kind. */
export function appHealthPath(container: string, kind: "readyz" | "livez" | "startupz"): string {
  return `/app-health/${container}/${kind}`;
}

export interface ProbeRewrite {
  /** Index of the container among the pod's containers. */
  container: number;
  field: "readinessProbe" | "livenessProbe" | "startupProbe";
  /** The probe that replaces the original. */
  probe: Record<string, unknown>;
}

/** A probe's port: a number, a decimal string, or the name of one of the container's ports; undefined when the name is unknown. */
function resolvePort(port: unknown, container: Field): number | undefined {
  if (typeof port === "number") return port;
  if (typeof port !== "string") return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  for (const p of container.get("ports").list()) if (p.get("name").value === port) return p.get("containerPort").integer(1, 65535);
  return undefined;
}

function original(probe: Record<string, unknown>, container: Field): AppProber | undefined {
  const timeout = typeof probe.timeoutSeconds === "number" ? { timeoutSeconds: probe.timeoutSeconds } : {};
  const http = probe.httpGet as Record<string, unknown> | undefined;
  if (http && typeof http === "object") {
    const port = resolvePort(http.port, container);
    if (port === undefined) return undefined;
    const { port: _named, ...rest } = http;
    return { httpGet: { ...(rest as Omit<NonNullable<AppProber["httpGet"]>, "port">), port }, ...timeout };
  }
  const tcp = probe.tcpSocket as Record<string, unknown> | undefined;
  if (tcp && typeof tcp === "object") {
    const port = resolvePort(tcp.port, container);
    if (port === undefined) return undefined;
    return { tcpSocket: { port, ...(typeof tcp.host === "string" ? { host: tcp.host } : {}) }, ...timeout };
  }
  const grpc = probe.grpc as Record<string, unknown> | undefined;
  if (grpc && typeof grpc === "object" && typeof grpc.port === "number") {
    return { grpc: { port: grpc.port, ...(typeof grpc.service === "string" ? { service: grpc.service } : {}) }, ...timeout };
  }
  return undefined;
}

/**
 * The rewrites of the app containers' probes (`containers`: the pod's
 * containers as decoded Fields) and the originals by path. Probes of another
 * kind (exec) and ports that name no container port are left as they are.
 */
export function rewriteAppProbes(containers: readonly Field[], statusPort: number): { rewrites: ProbeRewrite[]; probers: Record<string, AppProber> } {
  const rewrites: ProbeRewrite[] = [];
  const probers: Record<string, AppProber> = {};
  containers.forEach((container, index) => {
    const name = container.get("name").nonEmptyString();
    for (const [field, kind] of KINDS) {
      const probeField = container.get(field);
      if (!probeField.present) continue;
      const probe = probeField.object();
      const prober = original(probe, container);
      if (!prober) continue;
      const path = appHealthPath(name, kind);
      probers[path] = prober;
      const { httpGet: _h, tcpSocket: _t, grpc: _g, ...timing } = probe;
      rewrites.push({ container: index, field, probe: { httpGet: { path, port: statusPort }, ...timing } });
    }
  });
  return { rewrites, probers };
}

export type AppProbers = ReadonlyMap<string, AppProber>;

/** MESH_ORCH_APP_PROBERS (JSON `{path: probe}`) decoded; throws naming the variable and the bad entry. */
export function decodeAppProbers(text: string | undefined, variable = APP_PROBERS_ENV): AppProbers {
  if (text === undefined || text.trim() === "") return new Map();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`${variable}: expected JSON, got ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${variable}: expected a JSON object of probes by path`);
  const out = new Map<string, AppProber>();
  const port = (p: unknown) => typeof p === "number" && Number.isInteger(p) && p >= 1 && p <= 65535;
  for (const [path, probe] of Object.entries(value as Record<string, unknown>)) {
    const bad = (what: string) => new Error(`${variable}: ${path}: expected ${what}`);
    if (!path.startsWith("/app-health/") && !path.startsWith("/app-lifecycle/")) throw bad("a path under /app-health/");
    if (typeof probe !== "object" || probe === null) throw bad("a probe object");
    const p = probe as AppProber;
    const kinds = [p.httpGet, p.tcpSocket, p.grpc].filter((k) => k !== undefined);
    if (kinds.length !== 1) throw bad("exactly one of httpGet, tcpSocket, grpc");
    const action = kinds[0] as { port?: unknown };
    if (!port(action.port)) throw bad("a port from 1 to 65535");
    if (p.timeoutSeconds !== undefined && !(typeof p.timeoutSeconds === "number" && p.timeoutSeconds > 0)) throw bad("timeoutSeconds > 0");
    out.set(path, p);
  }
  return out;
}
