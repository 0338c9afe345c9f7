import type { ConfigProblem } from "../../../../config/problems.ts";
import type { Analyzer } from "../analyzer.ts";
import { VirtualServiceDestinationLabels } from "../messages.ts";

/**
 * Spec 1, MeshService: labels MUST be empty when used as a VirtualService
 * destination. The catalog refuses such a VirtualService; this names the
 * mistake with its own code instead of a generic schema error.
 */
export function isDestinationLabels(p: ConfigProblem): boolean {
  return p.severity === "error" && p.resource.startsWith("VirtualService ") && /\.destination\.labels$/.test(p.fieldPath);
}

export const destinationLabelsAnalyzer: Analyzer = {
  name: "virtualservice-destination-labels",
  description: "MeshService labels set on a VirtualService destination (must be empty; use a subset)",
  codes: [VirtualServiceDestinationLabels],
  needs: [],
  analyze(ctx) {
    for (const p of ctx.problems) {
      if (isDestinationLabels(p)) {
        ctx.reportProblem(
          VirtualServiceDestinationLabels,
          p,
          `${p.fieldPath}: labels must be empty on a VirtualService destination; select a version with subset and a DestinationRule subset`,
        );
      }
    }
  },
};
