import { ConfigError } from "../../../config/errors.ts";
import { OPERATOR_API_VERSION, OPERATOR_KIND, type OperatorSpec, overlay, profileValues } from "./values.ts";

/**
 * `meshctl manifest migrate`: the older install settings in the operator
 * format (a MeshOperator document that `manifest generate -f` reads). Two
 * inputs, as upstream's: Helm values (upstream 1.4's values.yaml: `global`,
 * `pilot`, `mixer`, `security`, `galley`, `sidecarInjectorWebhook`, and this
 * mesh's names for the same components: `disco`, `hub`, `anchor`), and the
 * older control-plane resource (`install.mesh.io/v1alpha2`
 * MeshControlPlane, upstream's IstioControlPlane: `trafficManagement`,
 * `policy`, `telemetry`, `security`, `configManagement`, `autoInjection`,
 * `values`). A setting with no place in the operator format is named in a
 * warning, never dropped silently.
 */
type Obj = Record<string, unknown>;
export const CONTROL_PLANE_API_VERSION = "install.mesh.io/v1alpha2";
export const CONTROL_PLANE_KIND = "MeshControlPlane";

export function migrate(input: unknown, source: string, warnings: string[]): Obj {
  if (!isObject(input))
    throw new ConfigError(
      { file: source },
      "(document)",
      "Helm values or a MeshControlPlane (an object)",
      Array.isArray(input) ? "a list" : JSON.stringify(input),
    );
  const spec: Obj = {};
  if (input.kind === CONTROL_PLANE_KIND || input.apiVersion === CONTROL_PLANE_API_VERSION) {
    if (input.apiVersion !== CONTROL_PLANE_API_VERSION || input.kind !== CONTROL_PLANE_KIND) {
      throw new ConfigError(
        { file: source },
        "apiVersion, kind",
        `${CONTROL_PLANE_API_VERSION} ${CONTROL_PLANE_KIND}`,
        `${String(input.apiVersion)} ${String(input.kind)}`,
      );
    }
    controlPlane(isObject(input.spec) ? input.spec : {}, spec, "spec", warnings);
  } else {
    helmValues(input, spec, "", warnings);
  }
  // What generate would refuse, refused here: the result must be usable as is.
  const check: OperatorSpec = profileValues("default");
  overlay(check, { ...spec, profile: (spec.profile as string | undefined) ?? "default" }, source);
  return { apiVersion: OPERATOR_API_VERSION, kind: OPERATOR_KIND, metadata: { name: "installed-state" }, spec };
}

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function put(spec: Obj, path: string, value: unknown): void {
  if (value === undefined) return;
  const keys = path.split(".");
  let at = spec;
  for (const k of keys.slice(0, -1)) at = (at[k] = isObject(at[k]) ? at[k] : {}) as Obj;
  at[keys.at(-1)!] = value;
}

/** Moves each known key of `from` to its place; warns about the others (`where` prefixes their path). */
function take(from: Obj, where: string, known: Record<string, (v: unknown) => void>, warnings: string[]): void {
  for (const [key, value] of Object.entries(from)) {
    const move = known[key];
    if (move) move(value);
    else warnings.push(`${where ? `${where}.` : ""}${key}: no equivalent in the ${OPERATOR_KIND} format; not carried over`);
  }
}

function k8s(target: string, spec: Obj) {
  return {
    enabled: (v: unknown) => put(spec, `components.${target}.enabled`, v),
    replicaCount: (v: unknown) => put(spec, `components.${target}.k8s.replicaCount`, v),
    resources: (v: unknown) => put(spec, `components.${target}.k8s.resources`, v),
  };
}

function helmValues(values: Obj, spec: Obj, where: string, warnings: string[]): void {
  const at = (k: string) => (where ? `${where}.${k}` : k);
  const component =
    (target: string, extra: Record<string, (v: unknown) => void> = {}) =>
    (v: unknown) => {
      if (isObject(v)) take(v, at(target), { ...k8s(target, spec), ...extra }, warnings);
    };
  const anchor = component("anchor", {
    selfSigned: (v) => put(spec, "values.anchor.selfSigned", v),
    workloadCertTtl: (v) => put(spec, "values.anchor.workloadCertTtl", v),
  });
  take(
    values,
    where,
    {
      global: (v) => {
        if (!isObject(v)) return;
        take(
          v,
          at("global"),
          {
            hub: (x) => put(spec, "hub", x),
            tag: (x) => put(spec, "tag", typeof x === "number" ? String(x) : x),
            imagePullPolicy: (x) => put(spec, "values.global.imagePullPolicy", x),
            logging: (x) => put(spec, "values.global.logLevel", isObject(x) ? x.level : undefined),
            meshNamespace: (x) => put(spec, "meshNamespace", x),
            istioNamespace: (x) => put(spec, "meshNamespace", x),
            configRootNamespace: (x) => put(spec, "meshConfig.rootNamespace", x),
            trustDomain: (x) => put(spec, "meshConfig.trustDomain", x),
            configValidation: (x) => put(spec, "values.configValidation.enabled", x),
            proxy: (x) => {
              if (!isObject(x)) return;
              take(
                x,
                at("global.proxy"),
                {
                  clusterDomain: (y) => put(spec, "values.global.clusterDomain", y),
                  accessLogFile: (y) => put(spec, "meshConfig.accessLogFile", y),
                },
                warnings,
              );
            },
          },
          warnings,
        );
      },
      pilot: component("disco"),
      disco: component("disco"),
      hub: component("hub"),
      mixer: (v) => {
        if (!isObject(v)) return;
        take(
          v,
          at("mixer"),
          {
            policy: component("hub"),
            // One hubs daemon serves policy and telemetry: enabled when either was.
            telemetry: (t) => {
              if (isObject(t) && t.enabled === true) put(spec, "components.hub.enabled", true);
            },
          },
          warnings,
        );
      },
      security: anchor,
      citadel: anchor,
      anchor,
      galley: (v) => put(spec, "values.configValidation.enabled", isObject(v) ? v.enabled : undefined),
      sidecarInjectorWebhook: (v) => put(spec, "values.sidecarInjectorWebhook.enabled", isObject(v) ? v.enabled : undefined),
    },
    warnings,
  );
}

function controlPlane(cp: Obj, spec: Obj, where: string, warnings: string[]): void {
  const feature = (target: string | undefined, componentName: string | undefined) => (v: unknown) => {
    if (!isObject(v)) return;
    take(
      v,
      `${where}.${Object.keys(cp).find((k) => cp[k] === v)}`,
      {
        enabled: (x) => (target ? put(spec, target, x) : undefined),
        components: (c) => {
          if (!isObject(c) || !componentName) return;
          for (const [name, body] of Object.entries(c)) {
            if (!isObject(body)) continue;
            const to = name === "pilot" ? "disco" : name === "citadel" ? "anchor" : name === "policy" || name === "telemetry" ? "hub" : undefined;
            if (!to) {
              warnings.push(`${where}.components.${name}: no equivalent in the ${OPERATOR_KIND} format; not carried over`);
              continue;
            }
            take(
              body,
              `${where}.components.${name}`,
              {
                enabled: (x) => put(spec, `components.${to}.enabled`, x),
                k8s: (k) => {
                  if (isObject(k))
                    take(
                      k,
                      `${where}.components.${name}.k8s`,
                      {
                        replicaCount: (n) => put(spec, `components.${to}.k8s.replicaCount`, n),
                        resources: (r) => put(spec, `components.${to}.k8s.resources`, r),
                      },
                      warnings,
                    );
                },
              },
              warnings,
            );
          }
        },
      },
      warnings,
    );
  };
  take(
    cp,
    where,
    {
      profile: (v) => put(spec, "profile", v),
      hub: (v) => put(spec, "hub", v),
      tag: (v) => put(spec, "tag", v),
      trafficManagement: feature("components.disco.enabled", "disco"),
      policy: feature("components.hub.enabled", "hub"),
      telemetry: feature(undefined, "hub"),
      security: feature("components.anchor.enabled", "anchor"),
      configManagement: feature("values.configValidation.enabled", undefined),
      autoInjection: feature("values.sidecarInjectorWebhook.enabled", undefined),
      values: (v) => {
        if (isObject(v)) helmValues(v, spec, `${where}.values`, warnings);
      },
    },
    warnings,
  );
}
