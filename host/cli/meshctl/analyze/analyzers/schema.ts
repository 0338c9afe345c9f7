import type { ConfigProblem } from "../../../../config/problems.ts";
import type { Analyzer } from "../analyzer.ts";
import { SchemaValidationError, SchemaWarning } from "../messages.ts";
import { isDestinationLabels } from "./destination_labels.ts";
import { isRegexRefusal } from "./regex.ts";

const UNKNOWN_KIND = /^unknown kind "[^"]*" \(apiVersion (.*)\): not checked$/;

/**
 * Documents of kinds the mesh does not know and whose apiVersion is not a mesh
 * group (ConfigMap, ServiceAccount, StatefulSet…) are not analyzed and not
 * reported, as upstream ignores kinds it has no schema for; an unknown kind
 * in a `*.mesh.io` group is likely a typo and stays a warning.
 */
export function isIgnoredKind(p: ConfigProblem): boolean {
  const m = p.fieldPath === "kind" ? UNKNOWN_KIND.exec(p.message) : null;
  return m !== null && !m[1].includes("mesh.io/");
}

/** Every schema problem the catalog and the YAML reader found, except those another analyzer names more precisely. */
export const schemaAnalyzer: Analyzer = {
  name: "schema",
  upstream: "schema.ValidationAnalyzer",
  description: "Schema errors (the resource is refused) and warnings (unknown fields, ignored values) of every document",
  codes: [SchemaValidationError, SchemaWarning],
  needs: [],
  analyze(ctx) {
    for (const p of ctx.problems) {
      if (isRegexRefusal(p) || isDestinationLabels(p) || isIgnoredKind(p)) continue;
      const where = p.fieldPath === "(document)" ? "" : `${p.fieldPath}: `;
      if (p.severity === "error") ctx.reportProblem(SchemaValidationError, p, `Schema validation error: ${where}${p.message}`);
      else ctx.reportProblem(SchemaWarning, p, `Schema validation warning: ${where}${p.message}`);
    }
  },
};
