import type { Writable } from "node:stream";
import { stringify } from "yaml";
import type { SourceDocument } from "../../../config/documents.ts";
import { ConfigError } from "../../../config/errors.ts";
import { loadSources } from "../../../config/sources.ts";
import { SECURITY_API_VERSION } from "../../../config/resources/security.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { type GeneratedPolicy, convertRbac } from "./convert.ts";
import { ConvertError } from "./convert_error.ts";
import { RBAC_API_VERSION, decodeRbac, isRbacDocument, serviceSelectors } from "./rbac.ts";
import type { MeshctlLog } from "../log.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";

export interface AuthzConvertOptions {
  /** `-f`: v1alpha1 RBAC files or directories (`-` for stdin). */
  files: readonly string[];
  /** `-s`: files with the `v1` Services that map service names to workload selectors. */
  serviceFiles: readonly string[];
  rootNamespace: string;
  allowNoClusterRbacConfig: boolean;
  /** Namespace of documents without one (global `-n`, else `default`). */
  namespace: string;
  stdout: Writable;
  stderr: Writable;
  stdin: () => string;
  /** Where warnings and notes go (`--log_output_level`, scope default). */
  log: MeshctlLog;
}

/**
 * `meshctl x authz convert -f rbac.yaml -s services.yaml`: prints the
 * AuthorizationPolicies (security.mesh.io/v1beta1) equivalent to the
 * v1alpha1 RBAC resources, each under a comment saying where it came from;
 * notes and warnings on stderr. Exit 0; 2 for unreadable or invalid input;
 * 1 when something cannot be converted faithfully (named on stderr).
 */
export function runAuthzConvert(o: AuthzConvertOptions): number {
  const fail = (message: string, code: number) => {
    o.stderr.write(`Error: meshctl experimental authz convert: ${message}\n`);
    return code;
  };
  // Upstream read the cluster's policies without -f.
  if (o.files.length === 0)
    return needsOrchestrator("experimental authz convert", "`-f rbac.yaml -s services.yaml` (the v1alpha1 policies and the Services, as files)", o.stderr);
  if (o.serviceFiles.length === 0)
    return fail("-s/--service: required with -f: the files with the Services that map a role's service names to workload selectors", EXIT_BAD_CONFIG);
  if (o.rootNamespace === "") return fail("-r/--rootNamespace: must not be empty", EXIT_BAD_CONFIG);
  const policies = loadSources(o.files, { stdin: o.stdin });
  const services = loadSources(o.serviceFiles, { stdin: o.stdin });
  const unreadable = [...policies.unreadable, ...services.unreadable];
  if (unreadable.length > 0) return fail(unreadable.map((u) => `${u.path}: ${u.reason}`).join("; "), EXIT_BAD_CONFIG);
  const problems = [...policies.problems, ...services.problems];
  if (problems.length > 0) return fail(problems.map((p) => `${p.file}: ${p.resource}: ${p.fieldPath}: ${p.message}`).join("\n"), EXIT_BAD_CONFIG);

  const warnings: string[] = [];
  const rbacDocs: SourceDocument[] = [];
  const serviceDocs: SourceDocument[] = [];
  const isService = (doc: SourceDocument) => doc.apiVersion === "v1" && doc.kind === "Service";
  // -s files are often whole application manifests: only their Services matter.
  serviceDocs.push(...services.documents.filter(isService));
  for (const doc of policies.documents) {
    if (isRbacDocument(doc)) rbacDocs.push(doc);
    else if (isService(doc)) serviceDocs.push(doc);
    else if (doc.apiVersion.startsWith("rbac.istio.io/")) {
      return fail(
        `${doc.file}: ${doc.kind} ${doc.name}: apiVersion: expected ${RBAC_API_VERSION} (this mesh's group for upstream's rbac.istio.io), got ${JSON.stringify(doc.apiVersion)}`,
        EXIT_BAD_CONFIG,
      );
    } else warnings.push(`${doc.file}: ${doc.kind} ${doc.name}: ignored: neither a ${RBAC_API_VERSION} resource nor a v1 Service`);
  }
  try {
    const input = decodeRbac(rbacDocs, o.namespace || "default", warnings);
    const selectors = serviceSelectors(serviceDocs, o.namespace || "default", warnings);
    const notes: string[] = [];
    const generated = convertRbac(input, selectors, { rootNamespace: o.rootNamespace, allowNoClusterRbacConfig: o.allowNoClusterRbacConfig }, warnings, notes);
    for (const n of notes) o.log.info("default", n);
    for (const w of warnings) o.log.warn("default", w);
    o.stdout.write(generated.map(policyDocument).join(""));
    return EXIT_OK;
  } catch (e) {
    for (const w of warnings) o.log.warn("default", w);
    if (e instanceof ConfigError) return fail(e.message, EXIT_BAD_CONFIG);
    if (e instanceof ConvertError) return fail(e.message, EXIT_FAILURE);
    throw e;
  }
}

/** One policy as upstream printed it: a comment line, the document, `---`. */
export function policyDocument(p: GeneratedPolicy): string {
  const doc = { apiVersion: SECURITY_API_VERSION, kind: "AuthorizationPolicy", metadata: { name: p.name, namespace: p.namespace }, spec: p.spec };
  return `# ${p.comment}\n${stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })}---\n`;
}
