import { isWhenKey } from "../../../config/resources/security.ts";
import type { AccessRule, ClusterRbacConfig, RbacInput, ServiceRole, ServiceRoleBinding, ServiceSelectors, Subject } from "./rbac.ts";
import { type Target, labelTargets, serviceTargets } from "./selectors.ts";
import { ConvertError } from "./convert_error.ts";

/**
 * v1alpha1 RBAC → v1beta1 AuthorizationPolicy, as upstream's `istioctl x
 * authz convert` (1.4/1.5) did: the ClusterRbacConfig becomes deny-all or
 * allow-all policies (root namespace, namespace, or a service's selector);
 * each ServiceRole with bindings becomes one policy per rule, service and
 * workload selector (`generated-<role>-rule<i>-svc<j>-target<k>`), whose rules
 * are the bindings' subjects (`from`, `when`) each with the access rule's
 * operation (`to`) and constraints (`when`). Where upstream would have
 * silently changed who gets access, this conversion refuses or warns instead:
 * a constraint key v1beta1 does not evaluate is an error naming it, a
 * subject field the old converter dropped (names, notNames, ips …) is carried
 * over, and a role in a namespace the ClusterRbacConfig did not enforce is
 * left out (its policy would start denying there).
 */
export interface GeneratedPolicy {
  readonly name: string;
  readonly namespace: string;
  /** Written above the document, as upstream's did. */
  readonly comment: string;
  readonly spec: PolicySpec;
}

export interface PolicySpec {
  selector?: { matchLabels: Record<string, string> };
  rules?: PolicyRule[];
}

interface PolicyRule {
  from?: Array<{ source: Record<string, string[]> }>;
  to?: Array<{ operation: Record<string, string[]> }>;
  when?: Array<{ key: string; values?: string[]; notValues?: string[] }>;
}

export interface ConvertOptions {
  readonly rootNamespace: string;
  readonly allowNoClusterRbacConfig: boolean;
}

/** `warnings` and `notes` (what was converted into what) collect lines for the log. */
export function convertRbac(
  input: RbacInput,
  services: ServiceSelectors,
  options: ConvertOptions,
  warnings: string[],
  notes: string[] = [],
): GeneratedPolicy[] {
  const out: GeneratedPolicy[] = [];
  const config = input.clusterRbacConfig;
  if (!config) {
    if (!options.allowNoClusterRbacConfig) {
      throw new ConvertError(
        undefined,
        "",
        "no ClusterRbacConfig in the given files: it says where RBAC is enforced; pass --allowNoClusterRbacConfig to convert the roles without one",
      );
    }
    warnings.push("no ClusterRbacConfig in the given files: converting every ServiceRole as if RBAC were enforced everywhere (--allowNoClusterRbacConfig)");
  } else {
    const generated = convertClusterRbacConfig(config, services, options.rootNamespace, warnings);
    out.push(...generated);
    notes.push(
      `converted ClusterRbacConfig with mode ${config.mode} to authorization policies: ${generated.map((p) => `${p.namespace}/${p.name}`).join(", ") || "none"}`,
    );
  }
  const bindingsOf = new Map<string, ServiceRoleBinding[]>();
  for (const b of input.bindings) {
    const key = `${b.namespace}/${b.roleName}`;
    bindingsOf.set(key, [...(bindingsOf.get(key) ?? []), b]);
    if (b.permissive) {
      warnings.push(
        `${b.origin.file}: ${b.origin.resource}: mode: PERMISSIVE (upstream's dry run) has no v1beta1 equivalent: converted as enforced; review before applying`,
      );
    }
  }
  for (const b of input.bindings) {
    if (!input.roles.some((r) => r.namespace === b.namespace && r.name === b.roleName)) {
      warnings.push(`${b.origin.file}: ${b.origin.resource}: ignored: it binds ServiceRole ${b.namespace}/${b.roleName}, which is not in the given files`);
    }
  }
  for (const role of input.roles) {
    const bindings = bindingsOf.get(`${role.namespace}/${role.name}`);
    if (!bindings) {
      warnings.push(`${role.origin.file}: ${role.origin.resource}: ignored: no ServiceRoleBinding binds it, so it granted nothing`);
      continue;
    }
    const kept: string[] = [];
    for (const policy of convertRole(role, bindings, services, warnings)) {
      const reason = config ? notEnforced(config, policy) : undefined;
      if (reason) warnings.push(`${role.origin.file}: ${role.origin.resource}: ${policy.policy.name} left out: ${reason}`);
      else {
        out.push(policy.policy);
        kept.push(policy.policy.name);
      }
    }
    notes.push(`converted ServiceRole ${role.namespace}/${role.name} to ${kept.length} authorization policies: ${kept.join(", ")}`);
  }
  warnings.push("PLEASE ALWAYS REVIEW THE CONVERTED POLICIES BEFORE APPLYING.");
  return out;
}

const ALLOW_ALL: PolicySpec = { rules: [{}] };
const DENY_ALL: PolicySpec = {};

function convertClusterRbacConfig(config: ClusterRbacConfig, services: ServiceSelectors, root: string, warnings: string[]): GeneratedPolicy[] {
  const out: GeneratedPolicy[] = [];
  const globalDeny = (mode: string): GeneratedPolicy => ({
    name: "generated-global-deny-all",
    namespace: root,
    comment: `Generated from ClusterRbacConfig with mode ${mode}. This policy is in root namespace and will deny all requests in the mesh by default.`,
    spec: DENY_ALL,
  });
  if (config.permissive) {
    warnings.push(
      `${config.origin.file}: ${config.origin.resource}: enforcementMode: PERMISSIVE (upstream's dry run) has no v1beta1 equivalent: converted as enforced; review before applying`,
    );
  }
  switch (config.mode) {
    case "OFF":
      out.push({
        name: "generated-global-allow-all",
        namespace: root,
        comment: "Generated from ClusterRbacConfig with mode OFF. This policy is in root namespace and will allow all requests in the mesh by default.",
        spec: ALLOW_ALL,
      });
      break;
    case "ON":
      out.push(globalDeny("ON"));
      break;
    case "ON_WITH_INCLUSION":
      config.inclusion.services.forEach((service, i) => {
        const found = configService(config, service, `spec.inclusion.services[${i}]`, services, warnings);
        if (found) {
          out.push({
            name: `generated-service-${found.name}-deny-all`,
            namespace: found.namespace,
            comment: `Generated from ClusterRbacConfig with mode ON_WITH_INCLUSION on service "${service}". This policy will deny all requests to service "${service}" by default.`,
            spec: { selector: { matchLabels: { ...found.labels } } },
          });
        }
      });
      for (const ns of config.inclusion.namespaces) {
        out.push({
          name: "generated-namespace-deny-all",
          namespace: ns,
          comment: `Generated from ClusterRbacConfig with mode ON_WITH_INCLUSION on namespace "${ns}". This policy will deny all requests to namespace "${ns}" by default.`,
          spec: DENY_ALL,
        });
      }
      break;
    case "ON_WITH_EXCLUSION":
      config.exclusion.services.forEach((service, i) => {
        const found = configService(config, service, `spec.exclusion.services[${i}]`, services, warnings);
        if (found) {
          out.push({
            name: `generated-service-${found.name}-allow-all`,
            namespace: found.namespace,
            comment: `Generated from ClusterRbacConfig with mode ON_WITH_EXCLUSION on service "${service}". This policy will allow all requests to service "${service}" by default.`,
            spec: { selector: { matchLabels: { ...found.labels } }, rules: [{}] },
          });
        }
      });
      out.push(globalDeny("ON_WITH_EXCLUSION"));
      for (const ns of config.exclusion.namespaces) {
        out.push({
          name: "generated-namespace-allow-all",
          namespace: ns,
          comment: `Generated from ClusterRbacConfig with mode ON_WITH_EXCLUSION on namespace "${ns}". This policy will allow all requests to namespace "${ns}" by default.`,
          spec: ALLOW_ALL,
        });
      }
      break;
  }
  return out;
}

/** A ClusterRbacConfig service (`name.namespace[.svc.cluster.local]`) and its one selector; undefined (warned) when no Service defines it. */
function configService(config: ClusterRbacConfig, service: string, path: string, services: ServiceSelectors, warnings: string[]) {
  const parts = service.split(".");
  if (parts.length < 2 || parts[0] === "" || parts[1] === "") {
    throw new ConvertError(config.origin, path, `expected a service as <name>.<namespace>[.svc.cluster.local], got ${JSON.stringify(service)}`);
  }
  if (service.includes("*"))
    throw new ConvertError(config.origin, path, `a wildcard is not supported in ClusterRbacConfig services, got ${JSON.stringify(service)}`);
  const labels = services.get(parts[1])?.get(parts[0]);
  if (!labels) {
    warnings.push(
      `${config.origin.file}: ${config.origin.resource}: ${path}: ignored service "${service}": no Service ${parts[1]}/${parts[0]} with a selector in the --service files`,
    );
    return undefined;
  }
  return { name: parts[0], namespace: parts[1], labels };
}

/** Why RBAC was not enforced where a role's policy would apply under `config` (then the role had no effect), or undefined. */
function notEnforced(config: ClusterRbacConfig, generated: { policy: GeneratedPolicy; target?: Target }): string | undefined {
  if (config.mode !== "ON_WITH_INCLUSION") return undefined;
  const ns = generated.policy.namespace;
  if (config.inclusion.namespaces.includes(ns)) return undefined;
  const service = generated.target?.service;
  if (service && config.inclusion.services.some((s) => s.split(".")[0] === service && s.split(".")[1] === ns)) return undefined;
  return `ClusterRbacConfig ON_WITH_INCLUSION does not enforce RBAC on ${service ? `service ${service}.${ns}` : `namespace ${ns}`}, so this rule had no effect there (a policy would start denying other requests)`;
}

function convertRole(role: ServiceRole, bindings: readonly ServiceRoleBinding[], services: ServiceSelectors, warnings: string[]) {
  const out: Array<{ policy: GeneratedPolicy; target?: Target }> = [];
  const subjects = bindings.flatMap((b) => b.subjects.map((s, i) => ({ subject: s, binding: b, path: `spec.subjects[${i}]` })));
  role.rules.forEach((rule, i) => {
    const access = accessRule(role, rule, warnings);
    const rules = subjects.map(({ subject, binding, path }) => withAccess(subjectRule(subject, binding, path, warnings), access));
    const byLabels = labelTargets(role, rule);
    if (rule.services.length === 0) {
      const targets = byLabels.length > 0 ? byLabels : [{ labels: {} }];
      targets.forEach((t, k) =>
        out.push(
          policyFor(
            role,
            `generated-${role.name}-rule${i}${targets.length > 1 ? `-target${k}` : ""}`,
            `Generated for ServiceRole "${role.name}" at rule ${i}`,
            rules,
            t,
          ),
        ),
      );
      return;
    }
    rule.services.forEach((service, j) => {
      const targets = serviceTargets(service, services.get(role.namespace), byLabels, role, `spec.rules[${i}].services[${j}]`);
      if (targets.length === 0)
        warnings.push(
          `${role.origin.file}: ${role.origin.resource}: spec.rules[${i}].services[${j}]: ignored service "${service}": no Service in namespace ${role.namespace} with a selector in the --service files`,
        );
      const short = service.split(".")[0];
      targets.forEach((t, k) =>
        out.push(
          policyFor(
            role,
            `generated-${role.name}-rule${i}-svc${j}-target${k}`,
            `Generated for service "${short}" found in ServiceRole "${role.name}" at rule ${i}`,
            rules,
            t,
          ),
        ),
      );
    });
  });
  return out;
}

function policyFor(role: ServiceRole, name: string, comment: string, rules: PolicyRule[], target: Target) {
  const spec: PolicySpec = { rules: structuredClone(rules) };
  if (Object.keys(target.labels).length > 0) spec.selector = { matchLabels: { ...target.labels } };
  return { policy: { name, namespace: role.namespace, comment, spec }, target };
}

interface Access {
  operation: Record<string, string[]>;
  when: NonNullable<PolicyRule["when"]>;
}

function accessRule(role: ServiceRole, rule: AccessRule, warnings: string[]): Access {
  const notStar = (values: readonly string[]) => values.filter((v) => v !== "*");
  const operation: Record<string, string[]> = {};
  const put = (key: string, values: readonly string[]) => {
    if (values.length > 0) operation[key] = [...(operation[key] ?? []), ...values];
  };
  put("hosts", notStar(rule.hosts));
  put("notHosts", rule.notHosts);
  put("paths", notStar(rule.paths));
  put("notPaths", rule.notPaths);
  put("methods", notStar(rule.methods));
  put("notMethods", rule.notMethods);
  put("ports", rule.ports);
  put("notPorts", rule.notPorts);
  const when: Access["when"] = [];
  for (const c of rule.constraints) {
    if (c.key.startsWith("destination.labels[")) continue; // a workload selector (labelTargets)
    if (c.key === "destination.ip" || c.key === "destination.user") {
      throw new ConvertError(role.origin, `${c.path}.key`, `${c.key} is no longer supported in v1beta1 authorization policy`);
    }
    if (c.key === "destination.port") {
      c.values.forEach((v) => {
        if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535)
          throw new ConvertError(role.origin, `${c.path}.values`, `expected ports 1-65535, got ${JSON.stringify(v)}`);
      });
      put("ports", c.values);
      continue;
    }
    if (c.key === "destination.namespace") {
      warnings.push(
        `${role.origin.file}: ${role.origin.resource}: ${c.path}: destination.namespace dropped: the policy is in namespace ${role.namespace} and applies only there`,
      );
      continue;
    }
    if (!isWhenKey(c.key)) {
      throw new ConvertError(
        role.origin,
        `${c.path}.key`,
        `${JSON.stringify(c.key)} cannot be converted: security.mesh.io/v1beta1 conditions take request.headers[…], source.ip, remote.ip, source.namespace, source.principal, request.auth.principal, request.auth.audiences, request.auth.presenter, request.auth.claims[…], destination.ip, destination.port, connection.sni`,
      );
    }
    const values = notStar(c.values);
    if (values.length === 0)
      warnings.push(
        `${role.origin.file}: ${role.origin.resource}: ${c.path}: constraint ${c.key} with only the wildcard value "*" dropped (it matched any value)`,
      );
    else when.push({ key: c.key, values });
  }
  return { operation, when };
}

/** Each `from.source` field and the condition key (negated or not) that tests the same attribute. */
const SOURCE_CONDITIONS = {
  principals: ["source.principal", false],
  notPrincipals: ["source.principal", true],
  namespaces: ["source.namespace", false],
  notNamespaces: ["source.namespace", true],
  ipBlocks: ["source.ip", false],
  notIpBlocks: ["source.ip", true],
  requestPrincipals: ["request.auth.principal", false],
} as const;

/** One v1beta1 rule for one subject: `from.source` and `when` conditions. */
function subjectRule(s: Subject, binding: ServiceRoleBinding, path: string, warnings: string[]): PolicyRule {
  const source: Record<string, string[]> = {};
  const when: NonNullable<PolicyRule["when"]> = [];
  // A v1alpha1 subject ANDs its fields; a source field ORs its values. So the
  // first value set of a field goes to `from.source`, a further one (user
  // and properties[source.principal], say) to a `when` condition on the same
  // attribute, which ANDs.
  const add = (key: keyof typeof SOURCE_CONDITIONS, values: readonly string[]) => {
    if (values.length === 0) return;
    if (!source[key]) source[key] = [...values];
    else {
      const [conditionKey, negated] = SOURCE_CONDITIONS[key];
      when.push(negated ? { key: conditionKey, notValues: [...values] } : { key: conditionKey, values: [...values] });
    }
  };
  if (s.user !== "" && s.user !== "*") add("principals", [s.user]);
  add("principals", s.names);
  add("notPrincipals", s.notNames);
  add("namespaces", s.namespaces);
  add("notNamespaces", s.notNamespaces);
  add("ipBlocks", s.ips);
  add("notIpBlocks", s.notIps);
  if (s.group !== "" && s.group !== "*") when.push({ key: "request.auth.claims[group]", values: [s.group] });
  if (s.groups.length > 0 || s.notGroups.length > 0) {
    when.push({
      key: "request.auth.claims[groups]",
      ...(s.groups.length > 0 ? { values: [...s.groups] } : {}),
      ...(s.notGroups.length > 0 ? { notValues: [...s.notGroups] } : {}),
    });
  }
  for (const [key, value] of s.properties) {
    if (key === "source.principal") {
      add("principals", [value]);
      continue;
    }
    if (value === "*") {
      warnings.push(`${binding.origin.file}: ${binding.origin.resource}: ${path}.properties[${key}]: the wildcard value "*" dropped (it matched any value)`);
      continue;
    }
    if (key === "source.ip") add("ipBlocks", [value]);
    else if (key === "source.namespace") add("namespaces", [value]);
    else if (key === "request.auth.principal") add("requestPrincipals", [value]);
    else if (isWhenKey(key)) when.push({ key, values: [value] });
    else
      throw new ConvertError(
        binding.origin,
        `${path}.properties[${key}]`,
        `${JSON.stringify(key)} cannot be converted: not a security.mesh.io/v1beta1 condition key`,
      );
  }
  const rule: PolicyRule = {};
  if (Object.keys(source).length > 0) rule.from = [{ source: sortKeys(source) }];
  if (when.length > 0) rule.when = when;
  return rule;
}

function withAccess(rule: PolicyRule, access: Access): PolicyRule {
  const out: PolicyRule = { ...rule };
  if (Object.keys(access.operation).length > 0) out.to = [{ operation: sortKeys(structuredClone(access.operation)) }];
  const when = [...(rule.when ?? []), ...structuredClone(access.when)].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (when.length > 0) out.when = when;
  else delete out.when;
  return out;
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}
