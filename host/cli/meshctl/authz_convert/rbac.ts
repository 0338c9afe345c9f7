import { Field } from "../../../config/decode.ts";
import { type SourceDocument, resourceName } from "../../../config/documents.ts";

/**
 * Upstream's v1alpha1 RBAC resources (`rbac.mesh.io/v1alpha1`, renamed from
 * `rbac.istio.io`), decoded for `meshctl x authz convert`: ServiceRole,
 * ServiceRoleBinding and ClusterRbacConfig (its older name RbacConfig too),
 * plus the `v1` Services that map a role's service names to workload
 * selectors. Fields follow upstream's 1.4 proto; a field the converter cannot
 * carry over is decoded anyway so that convert.ts can refuse it by name
 * rather than drop it (a dropped restriction would grant more access).
 */
export const RBAC_API_VERSION = "rbac.mesh.io/v1alpha1";
export const RBAC_KINDS = ["ServiceRole", "ServiceRoleBinding", "ClusterRbacConfig", "RbacConfig"] as const;
export const RBAC_MODES = ["OFF", "ON", "ON_WITH_INCLUSION", "ON_WITH_EXCLUSION"] as const;
export type RbacMode = (typeof RBAC_MODES)[number];

/** Where a decoded value came from, for messages: `file: Kind ns/name: field`. */
export interface Origin {
  readonly file: string;
  readonly resource: string;
}

export interface Constraint {
  readonly key: string;
  readonly values: readonly string[];
  /** Field path, e.g. `spec.rules[0].constraints[1]`. */
  readonly path: string;
}

/** One v1alpha1 AccessRule (`ServiceRole.spec.rules[i]`). */
export interface AccessRule {
  readonly services: readonly string[];
  readonly hosts: readonly string[];
  readonly notHosts: readonly string[];
  readonly paths: readonly string[];
  readonly notPaths: readonly string[];
  readonly methods: readonly string[];
  readonly notMethods: readonly string[];
  readonly ports: readonly string[];
  readonly notPorts: readonly string[];
  readonly constraints: readonly Constraint[];
}

export interface ServiceRole {
  readonly name: string;
  readonly namespace: string;
  readonly origin: Origin;
  readonly rules: readonly AccessRule[];
}

/** One v1alpha1 Subject (`ServiceRoleBinding.spec.subjects[i]`). */
export interface Subject {
  readonly user: string;
  readonly group: string;
  /** In the document's order. */
  readonly properties: ReadonlyArray<readonly [string, string]>;
  readonly names: readonly string[];
  readonly notNames: readonly string[];
  readonly groups: readonly string[];
  readonly notGroups: readonly string[];
  readonly namespaces: readonly string[];
  readonly notNamespaces: readonly string[];
  readonly ips: readonly string[];
  readonly notIps: readonly string[];
}

export interface ServiceRoleBinding {
  readonly name: string;
  readonly namespace: string;
  readonly origin: Origin;
  readonly subjects: readonly Subject[];
  /** The ServiceRole it binds (`roleRef.name`, or upstream's inline `role: /name`). */
  readonly roleName: string;
  /** `mode: PERMISSIVE` (upstream's dry run): converted as enforced, with a warning. */
  readonly permissive: boolean;
}

export interface ClusterRbacConfig {
  readonly name: string;
  readonly origin: Origin;
  readonly mode: RbacMode;
  readonly inclusion: { readonly services: readonly string[]; readonly namespaces: readonly string[] };
  readonly exclusion: { readonly services: readonly string[]; readonly namespaces: readonly string[] };
  readonly permissive: boolean;
}

/** Service name → its selector (`spec.selector`), per namespace. */
export type ServiceSelectors = ReadonlyMap<string, ReadonlyMap<string, Readonly<Record<string, string>>>>;

export interface RbacInput {
  readonly roles: readonly ServiceRole[];
  readonly bindings: readonly ServiceRoleBinding[];
  readonly clusterRbacConfig?: ClusterRbacConfig;
}

export function isRbacDocument(doc: SourceDocument): boolean {
  return doc.apiVersion === RBAC_API_VERSION && (RBAC_KINDS as readonly string[]).includes(doc.kind);
}

/**
 * Decodes the RBAC documents among `docs` (others are skipped by the caller).
 * Throws a ConfigError naming the file, resource and field of the first bad
 * value; unknown fields become `warnings`.
 */
export function decodeRbac(docs: readonly SourceDocument[], defaultNamespace: string, warnings: string[]): RbacInput {
  const roles: ServiceRole[] = [];
  const bindings: ServiceRoleBinding[] = [];
  let clusterRbacConfig: ClusterRbacConfig | undefined;
  for (const doc of docs) {
    const namespace = doc.namespace ?? defaultNamespace;
    const origin: Origin = { file: doc.file, resource: resourceName({ ...doc, namespace: doc.kind.endsWith("RbacConfig") ? undefined : namespace }) };
    const spec = Field.root(doc.body.spec ?? {}, { ...origin, warnings }, "spec");
    spec.object();
    if (doc.kind === "ServiceRole") {
      spec.allowOnly(["rules"]);
      roles.push({ name: doc.name, namespace, origin, rules: spec.get("rules").list().map(accessRule) });
    } else if (doc.kind === "ServiceRoleBinding") {
      bindings.push(binding(doc.name, namespace, origin, spec));
    } else {
      if (clusterRbacConfig) {
        spec.invalid(
          `a second ${doc.kind} (${doc.name}); the mesh has one, already given in ${clusterRbacConfig.origin.file} as ${clusterRbacConfig.origin.resource}`,
        );
      }
      spec.allowOnly(["mode", "inclusion", "exclusion", "enforcementMode", "enforcement_mode"]);
      const target = (f: Field) => {
        f.allowOnly(["services", "namespaces"]);
        return { services: strings(f.get("services")), namespaces: strings(f.get("namespaces")) };
      };
      const enforcement = spec.get("enforcementMode").present ? spec.get("enforcementMode") : spec.get("enforcement_mode");
      clusterRbacConfig = {
        name: doc.name,
        origin,
        mode: spec.get("mode").enumOf(RBAC_MODES, "OFF"),
        inclusion: target(spec.get("inclusion")),
        exclusion: target(spec.get("exclusion")),
        permissive: enforcement.enumOf(["ENFORCED", "PERMISSIVE"], "ENFORCED") === "PERMISSIVE",
      };
    }
  }
  return { roles, bindings, clusterRbacConfig };
}

const RULE_FIELDS = ["services", "hosts", "notHosts", "paths", "notPaths", "methods", "notMethods", "ports", "notPorts", "constraints"];

function accessRule(rule: Field): AccessRule {
  rule.object();
  rule.allowOnly(RULE_FIELDS);
  const ports = (f: Field) => f.list().map((p) => String(p.integer(1, 65535)));
  return {
    services: strings(rule.get("services")),
    hosts: strings(rule.get("hosts")),
    notHosts: strings(rule.get("notHosts")),
    paths: strings(rule.get("paths")),
    notPaths: strings(rule.get("notPaths")),
    methods: strings(rule.get("methods")),
    notMethods: strings(rule.get("notMethods")),
    ports: ports(rule.get("ports")),
    notPorts: ports(rule.get("notPorts")),
    constraints: rule
      .get("constraints")
      .list()
      .map((c) => {
        c.allowOnly(["key", "values"]);
        return { key: c.get("key").nonEmptyString(), values: c.get("values").nonEmptyList().map(scalar), path: c.path };
      }),
  };
}

const SUBJECT_FIELDS = ["user", "group", "properties", "names", "notNames", "groups", "notGroups", "namespaces", "notNamespaces", "ips", "notIps"];

function binding(name: string, namespace: string, origin: Origin, spec: Field): ServiceRoleBinding {
  spec.allowOnly(["subjects", "roleRef", "role", "mode", "actions"]);
  if (spec.get("actions").present)
    spec.get("actions").invalid("inline access rules (actions) are not converted: write them as a ServiceRole and bind it with roleRef");
  const subjects = spec
    .get("subjects")
    .nonEmptyList()
    .map((s) => {
      s.object();
      s.allowOnly(SUBJECT_FIELDS);
      return {
        user: s.get("user").optionalString() ?? "",
        group: s.get("group").optionalString() ?? "",
        properties: s
          .get("properties")
          .entries()
          .map(([k, v]) => [k, scalar(v)] as const),
        names: strings(s.get("names")),
        notNames: strings(s.get("notNames")),
        groups: strings(s.get("groups")),
        notGroups: strings(s.get("notGroups")),
        namespaces: strings(s.get("namespaces")),
        notNamespaces: strings(s.get("notNamespaces")),
        ips: strings(s.get("ips")),
        notIps: strings(s.get("notIps")),
      };
    });
  let roleName: string;
  if (spec.get("roleRef").present) {
    const ref = spec.get("roleRef");
    ref.allowOnly(["kind", "name"]);
    const kind = ref.get("kind").optionalString() ?? "ServiceRole";
    if (kind !== "ServiceRole") ref.get("kind").fail('"ServiceRole"');
    roleName = ref.get("name").nonEmptyString();
  } else if (spec.get("role").present) {
    roleName = spec.get("role").nonEmptyString().replace(/^\//, "");
  } else {
    return spec.get("roleRef").fail("a roleRef naming the ServiceRole (roleRef.name)");
  }
  const permissive = spec.get("mode").enumOf(["ENFORCED", "PERMISSIVE"], "ENFORCED") === "PERMISSIVE";
  return { name, namespace, origin, subjects, roleName, permissive };
}

function strings(f: Field): string[] {
  return f.list().map((item) => item.nonEmptyString());
}

/** A string, or a number or boolean written without quotes (`source.ip: 10.0.0.1` is a string already). */
function scalar(f: Field): string {
  if (typeof f.value === "number" || typeof f.value === "boolean") return String(f.value);
  return f.string();
}

/** `v1` Service documents → name → selector, per namespace; a Service without selector maps to nothing (upstream ignored it too). */
export function serviceSelectors(docs: readonly SourceDocument[], defaultNamespace: string, warnings: string[]): ServiceSelectors {
  const out = new Map<string, Map<string, Readonly<Record<string, string>>>>();
  for (const doc of docs) {
    const namespace = doc.namespace ?? defaultNamespace;
    const context = { file: doc.file, resource: resourceName({ ...doc, namespace }), warnings };
    const selector = Field.root(doc.body.spec ?? {}, context, "spec")
      .get("selector")
      .stringMap();
    if (Object.keys(selector).length === 0) {
      warnings.push(`${doc.file}: ${context.resource}: ignored: the Service has no selector, so no workload can be named by it`);
      continue;
    }
    if (!out.has(namespace)) out.set(namespace, new Map());
    out.get(namespace)!.set(doc.name, Object.freeze({ ...selector }));
  }
  return out;
}
