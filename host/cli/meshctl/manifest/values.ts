import { ConfigError } from "../../../config/errors.ts";
import { DEFAULT_HUB, DEFAULT_TAG } from "../../../inject/settings.ts";

/**
 * The install settings `meshctl manifest generate` renders from: upstream's
 * IstioOperator spec, renamed (`install.mesh.io/v1alpha1` MeshOperator), with
 * the components of this mesh: `base` (CRDs and cluster roles), `disco`
 * (disco-discovery, upstream's pilot: xDS and the admission webhooks), `hub`
 * (hubs, upstream's mixer policy and telemetry) and `anchor` (mesh_ca,
 * upstream's citadel). A profile is a complete set of values; `-f` files and
 * `--set` overlay it.
 */
export const OPERATOR_API_VERSION = "install.mesh.io/v1alpha1";
export const OPERATOR_KIND = "MeshOperator";
export const PROFILES = ["default", "demo", "minimal"] as const;
export type Profile = (typeof PROFILES)[number];
export const COMPONENTS = ["base", "disco", "hub", "anchor"] as const;
export type ComponentName = (typeof COMPONENTS)[number];

export interface Resources {
  requests: { cpu: string; memory: string };
  limits?: { cpu: string; memory: string };
}

export interface ComponentSpec {
  enabled: boolean;
  k8s: { replicaCount: number; resources: Resources };
}

export interface OperatorSpec {
  profile: Profile;
  hub: string;
  tag: string;
  /** The namespace everything is installed in (the mesh's root namespace unless meshConfig says otherwise). */
  meshNamespace: string;
  meshConfig: { rootNamespace: string; trustDomain: string; accessLogFile: string; enableAutoMtls: boolean };
  components: Record<ComponentName, ComponentSpec>;
  values: {
    global: { imagePullPolicy: "Always" | "IfNotPresent" | "Never"; logLevel: string; clusterDomain: string; jwtPolicy: string };
    sidecarInjectorWebhook: { enabled: boolean };
    configValidation: { enabled: boolean };
    /** tokenJwks, tokenIssuer: mesh_ca's TOKEN_JWKS and TOKEN_ISSUER (the orchestrator's service-account token issuer); empty: not set. */
    anchor: { selfSigned: boolean; workloadCertTtl: string; tokenJwks: string; tokenIssuer: string };
  };
}

const small: Resources = { requests: { cpu: "10m", memory: "40Mi" } };
const component = (enabled: boolean, resources: Resources, replicaCount = 1): ComponentSpec => ({ enabled, k8s: { replicaCount, resources } });

function defaultProfile(): OperatorSpec {
  return {
    profile: "default",
    hub: DEFAULT_HUB,
    tag: DEFAULT_TAG,
    meshNamespace: "mesh-system",
    meshConfig: { rootNamespace: "mesh-system", trustDomain: "cluster.local", accessLogFile: "", enableAutoMtls: true },
    components: {
      base: component(true, small),
      disco: component(true, { requests: { cpu: "500m", memory: "2048Mi" } }),
      hub: component(true, { requests: { cpu: "1000m", memory: "1G" }, limits: { cpu: "4800m", memory: "4G" } }),
      anchor: component(true, { requests: { cpu: "10m", memory: "64Mi" } }),
    },
    values: {
      global: { imagePullPolicy: "IfNotPresent", logLevel: "default:info", clusterDomain: "cluster.local", jwtPolicy: "third-party-jwt" },
      sidecarInjectorWebhook: { enabled: true },
      configValidation: { enabled: true },
      anchor: { selfSigned: true, workloadCertTtl: "2160h", tokenJwks: "", tokenIssuer: "" },
    },
  };
}

/** The complete values of a profile (upstream's: demo turns everything on with small requests and access logs; minimal is discovery and validation only). */
export function profileValues(profile: Profile): OperatorSpec {
  const spec = defaultProfile();
  spec.profile = profile;
  if (profile === "demo") {
    for (const name of COMPONENTS) spec.components[name].k8s.resources = structuredClone(small);
    spec.meshConfig.accessLogFile = "/dev/stdout";
    spec.values.global.logLevel = "default:debug";
  }
  if (profile === "minimal") {
    spec.components.hub.enabled = false;
    spec.components.anchor.enabled = false;
    spec.values.sidecarInjectorWebhook.enabled = false;
  }
  return spec;
}

/** One `--set` item: `a.b.c=value` (a backslash escapes a dot inside a key). */
export interface SetItem {
  readonly path: readonly string[];
  readonly value: string;
  readonly text: string;
}

export function parseSet(text: string): SetItem {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new ConfigError({}, "--set", "<path>=<value>, e.g. profile=demo or components.hub.enabled=false", JSON.stringify(text));
  const path: string[] = [""];
  const key = text.slice(0, eq);
  for (let i = 0; i < key.length; i++) {
    if (key[i] === "\\" && key[i + 1] === ".") {
      path[path.length - 1] += ".";
      i++;
    } else if (key[i] === ".") path.push("");
    else path[path.length - 1] += key[i];
  }
  if (path.some((p) => p === "")) throw new ConfigError({}, "--set", "a dotted path without empty parts", JSON.stringify(key));
  // Upstream's `spec.` prefix is optional.
  return { path: path[0] === "spec" ? path.slice(1) : path, value: text.slice(eq + 1), text };
}

/**
 * Overlays `overlay` (a parsed MeshOperator spec from `-f`, or one `--set`)
 * on `base`: only known fields, each of the type the profile has; the error
 * names where it came from and the path.
 */
export function overlay(base: OperatorSpec, value: unknown, where: string): OperatorSpec {
  const out = structuredClone(base) as unknown as Record<string, unknown>;
  merge(out, value, [], where);
  validate(out as unknown as OperatorSpec, where);
  return out as unknown as OperatorSpec;
}

function merge(target: Record<string, unknown>, value: unknown, path: string[], where: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError({ file: where }, path.join(".") || "spec", "an object", Array.isArray(value) ? "a list" : JSON.stringify(value));
  }
  for (const [key, v] of Object.entries(value)) {
    const at = [...path, key];
    if (key === "resources" && path.at(-1) === "k8s") {
      // Orchestrator resources replace the profile's whole (limits may be absent from it).
      target[key] = resources(v, at.join("."), where);
      continue;
    }
    if (!Object.hasOwn(target, key)) {
      throw new ConfigError(
        { file: where },
        at.join("."),
        `a field of the MeshOperator spec (known here: ${Object.keys(target).join(", ")})`,
        "an unknown field",
      );
    }
    const current = target[key];
    if (typeof current === "object" && current !== null) merge(current as Record<string, unknown>, v, at, where);
    else if (typeof v !== typeof current) {
      throw new ConfigError({ file: where }, at.join("."), `a ${typeof current}`, JSON.stringify(v));
    } else target[key] = v;
  }
}

/** `k8s.resources`: `requests` and/or `limits`, each with `cpu` and/or `memory` quantities. */
function resources(value: unknown, path: string, where: string): Resources {
  const object = (v: unknown, at: string, known: readonly string[]) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ConfigError({ file: where }, at, "an object", JSON.stringify(v));
    for (const k of Object.keys(v))
      if (!known.includes(k)) throw new ConfigError({ file: where }, `${at}.${k}`, `one of ${known.join(", ")}`, "an unknown field");
    return v as Record<string, unknown>;
  };
  const out: Record<string, Record<string, string>> = {};
  for (const [kind, quantities] of Object.entries(object(value, path, ["requests", "limits"]))) {
    out[kind] = {};
    for (const [name, q] of Object.entries(object(quantities, `${path}.${kind}`, ["cpu", "memory"]))) {
      if ((typeof q !== "string" && typeof q !== "number") || !/^\d+(\.\d+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.test(String(q))) {
        throw new ConfigError({ file: where }, `${path}.${kind}.${name}`, "a quantity such as 500m or 128Mi", JSON.stringify(q));
      }
      out[kind][name] = String(q);
    }
  }
  return out as unknown as Resources;
}

/** `--set`'s text value typed as the field it sets (`true`, `3`, `demo`). */
export function setValue(base: OperatorSpec, item: SetItem): unknown {
  // k8s.resources.<requests|limits>.<cpu|memory> may name a quantity the profile does not set.
  const quantity = item.path.length === 6 && item.path[0] === "components" && item.path[2] === "k8s" && item.path[3] === "resources";
  if (quantity && Object.hasOwn(base.components, item.path[1])) {
    const current = structuredClone((base.components as Record<string, ComponentSpec>)[item.path[1]].k8s.resources) as unknown as Record<
      string,
      Record<string, string>
    >;
    current[item.path[4]] = { ...(current[item.path[4]] ?? {}), [item.path[5]]: item.value };
    return { components: { [item.path[1]]: { k8s: { resources: current } } } };
  }
  let node: unknown = base;
  for (const key of item.path) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) {
      throw new ConfigError({}, `--set ${item.text}`, `a path of the MeshOperator spec (${describeKnown(node)})`, JSON.stringify(item.path.join(".")));
    }
    node = (node as Record<string, unknown>)[key];
  }
  let typed: unknown = item.value;
  if (typeof node === "boolean") {
    if (item.value !== "true" && item.value !== "false") throw new ConfigError({}, `--set ${item.text}`, "true or false", JSON.stringify(item.value));
    typed = item.value === "true";
  } else if (typeof node === "number") {
    if (!/^\d+$/.test(item.value)) throw new ConfigError({}, `--set ${item.text}`, "a whole number", JSON.stringify(item.value));
    typed = Number(item.value);
  } else if (typeof node === "object") {
    throw new ConfigError({}, `--set ${item.text}`, `a path to a value, not to a group (${describeKnown(node)})`, JSON.stringify(item.path.join(".")));
  }
  const tree: Record<string, unknown> = {};
  let at = tree;
  item.path.forEach((key, i) => {
    if (i === item.path.length - 1) at[key] = typed;
    else at = (at[key] = {}) as Record<string, unknown>;
  });
  return tree;
}

function describeKnown(node: unknown): string {
  return typeof node === "object" && node !== null ? `known here: ${Object.keys(node).join(", ")}` : "a value has no fields";
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function validate(spec: OperatorSpec, where: string): void {
  const fail = (path: string, expected: string, got: unknown) => {
    throw new ConfigError({ file: where }, path, expected, JSON.stringify(got));
  };
  if (!(PROFILES as readonly string[]).includes(spec.profile)) fail("profile", `one of ${PROFILES.join(", ")}`, spec.profile);
  if (!DNS_LABEL.test(spec.meshNamespace)) fail("meshNamespace", "a DNS label (a namespace)", spec.meshNamespace);
  if (!DNS_LABEL.test(spec.meshConfig.rootNamespace)) fail("meshConfig.rootNamespace", "a DNS label (a namespace)", spec.meshConfig.rootNamespace);
  if (!["Always", "IfNotPresent", "Never"].includes(spec.values.global.imagePullPolicy))
    fail("values.global.imagePullPolicy", "Always, IfNotPresent or Never", spec.values.global.imagePullPolicy);
  if (!["third-party-jwt", "first-party-jwt"].includes(spec.values.global.jwtPolicy))
    fail("values.global.jwtPolicy", "third-party-jwt or first-party-jwt", spec.values.global.jwtPolicy);
  if (spec.hub === "" || /\s/.test(spec.hub)) fail("hub", "an image registry path such as docker.io/mesh", spec.hub);
  if (!/^[\w][\w.-]{0,127}$/.test(spec.tag)) fail("tag", "an image tag", spec.tag);
  for (const name of COMPONENTS) {
    const n = spec.components[name].k8s.replicaCount;
    if (n < 0 || !Number.isInteger(n)) fail(`components.${name}.k8s.replicaCount`, "a whole number", n);
  }
}
