import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { ConfigError } from "../../../config/errors.ts";
import type { SourceDocument } from "../../../config/documents.ts";
import { type Obj, componentLabels, daemonObjects } from "./components.ts";
import { customResourceDefinitions } from "./crds.ts";
import {
  COMPONENTS,
  type ComponentName,
  OPERATOR_API_VERSION,
  OPERATOR_KIND,
  type OperatorSpec,
  PROFILES,
  type Profile,
  overlay,
  parseSet,
  profileValues,
  setValue,
} from "./values.ts";
import { injectionWebhook, validationWebhook } from "./webhooks.ts";

/** Upstream's output folder and file name of each component (`-o DIR`: DIR/Base/Base.yaml …). */
export const COMPONENT_DIRS: Readonly<Record<ComponentName, string>> = { base: "Base", disco: "Disco", hub: "Hub", anchor: "Anchor" };

/**
 * The settings a command line asks for: the profile (`--set profile=…`, or a
 * file's `spec.profile`; default `default`), then each MeshOperator file's
 * `spec` left to right, then each `--set` in order; the CT variables
 * NAMESPACE and JWT_POLICY of `env` come before the files. With `force`, an item
 * that does not fit is skipped with a warning instead of failing.
 */
export function resolveSpec(
  files: readonly SourceDocument[],
  sets: readonly string[],
  force: boolean,
  warnings: string[],
  env: NodeJS.ProcessEnv = {},
): OperatorSpec {
  const items = sets.map(parseSet);
  let profile: Profile = "default";
  for (const doc of files) {
    checkOperatorDocument(doc);
    const p = (doc.body.spec as Obj | undefined)?.profile;
    if (p !== undefined) profile = profileName(p, `${doc.file}: ${doc.kind} ${doc.name}: spec.profile`);
  }
  for (const item of items) if (item.path.length === 1 && item.path[0] === "profile") profile = profileName(item.value, `--set ${item.text}`);
  let spec = profileValues(profile);
  const attempt = (apply: () => OperatorSpec) => {
    try {
      spec = apply();
    } catch (e) {
      if (!(force && e instanceof ConfigError)) throw e;
      warnings.push(`${e.message} (skipped: --force)`);
    }
  };
  // Spec 2 column CT: the namespace the components run in, and the token policy they use.
  if (env.NAMESPACE) spec = overlay(spec, { meshNamespace: env.NAMESPACE }, "NAMESPACE");
  if (env.JWT_POLICY) spec = overlay(spec, { values: { global: { jwtPolicy: env.JWT_POLICY } } }, "JWT_POLICY");
  for (const doc of files) {
    const body = (doc.body.spec ?? {}) as Obj;
    attempt(() => overlay(spec, body, `${doc.file}: ${doc.kind} ${doc.name}: spec`));
  }
  for (const item of items) attempt(() => overlay(spec, setValue(spec, item), `--set ${item.text}`));
  return spec;
}

function profileName(value: unknown, where: string): Profile {
  if (typeof value === "string" && (PROFILES as readonly string[]).includes(value)) return value as Profile;
  throw new ConfigError({}, where, `a profile: one of ${PROFILES.join(", ")}`, JSON.stringify(value));
}

function checkOperatorDocument(doc: SourceDocument): void {
  if (doc.apiVersion !== OPERATOR_API_VERSION || doc.kind !== OPERATOR_KIND) {
    throw new ConfigError(
      { file: doc.file, resource: `${doc.kind} ${doc.name}` },
      "apiVersion, kind",
      `${OPERATOR_API_VERSION} ${OPERATOR_KIND} (upstream's install.istio.io IstioOperator, renamed)`,
      `${doc.apiVersion} ${doc.kind}`,
    );
  }
}

/** Every object of the install, by component (enabled components only, in install order). */
export function renderManifests(spec: OperatorSpec): Map<ComponentName, Obj[]> {
  const out = new Map<ComponentName, Obj[]>();
  for (const name of COMPONENTS) {
    if (!spec.components[name].enabled) continue;
    if (name === "base") {
      out.set(name, customResourceDefinitions(componentLabels("base")));
      continue;
    }
    const objects = daemonObjects(name, spec);
    if (name === "disco") {
      if (spec.values.sidecarInjectorWebhook.enabled) objects.push(injectionWebhook(spec));
      if (spec.values.configValidation.enabled) objects.push(validationWebhook(spec));
    }
    out.set(name, objects);
  }
  return out;
}

export function manifestText(objects: readonly Obj[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join("---\n");
}

/** `-o DIR`: DIR/<Component>/<Component>.yaml per enabled component; returns the files written. */
export function writeManifests(dir: string, rendered: Map<ComponentName, Obj[]>): string[] {
  const files: string[] = [];
  for (const [name, objects] of rendered) {
    const folder = join(dir, COMPONENT_DIRS[name]);
    const file = join(folder, `${COMPONENT_DIRS[name]}.yaml`);
    try {
      mkdirSync(folder, { recursive: true });
      writeFileSync(file, manifestText(objects));
    } catch (e) {
      throw new ConfigError({ file }, "--output", "a writable folder", (e as NodeJS.ErrnoException).code ?? String(e));
    }
    files.push(file);
  }
  return files;
}
