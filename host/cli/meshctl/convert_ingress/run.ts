import type { Writable } from "node:stream";
import { stringify } from "yaml";
import { parseDocuments } from "../../../config/documents.ts";
import { ConfigError } from "../../../config/errors.ts";
import { EXIT_BAD_CONFIG, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { readSourceText, writeOutput } from "../../../config/source_text.ts";
import { convertIngresses, DEFAULT_GATEWAY_NAMESPACE } from "./convert.ts";
import { decodeIngress } from "./ingress.ts";

/** Namespace of Ingresses that name none (what `kubectl apply` would use without `-n`). */
export const DEFAULT_INGRESS_NAMESPACE = "default";

export interface ConvertIngressOptions {
  /** `-f`: input files, `-` for stdin. */
  filenames: string[];
  /** `-o`: output file, `-` (default) for stdout. */
  output?: string;
  /** Namespace of the generated Gateway (global `-i/--meshNamespace`). */
  gatewayNamespace?: string;
  /** Namespace of Ingresses without one (global `-n/--namespace`). */
  namespace?: string;
  stdout: Writable;
  stderr: Writable;
  stdin?: () => string;
}

/**
 * `meshctl convert-ingress -f FILE…`: prints a Gateway and VirtualServices
 * equivalent to the Ingresses, warnings on stderr. Exit 0, or 2 for bad input
 * (unreadable file, invalid Ingress, a document of another kind, no Ingress).
 *
 * Example: `meshctl convert-ingress -f ingress.yaml -o mesh-routes.yaml`
 */
export function runConvertIngress(o: ConvertIngressOptions): number {
  try {
    if (o.filenames.length === 0) throw new ConfigError({}, "--filenames", "at least one input file (-f FILE, - for stdin)");
    const warnings: string[] = [];
    const ingresses = o.filenames
      .flatMap((f) => {
        const { name, text } = readSourceText(f, o.stdin);
        return parseDocuments(text, name);
      })
      .map((doc) => decodeIngress(doc, o.namespace || DEFAULT_INGRESS_NAMESPACE, warnings));
    if (ingresses.length === 0) throw new ConfigError({ file: o.filenames.join(", ") }, "(input)", "at least one Ingress document", "none");
    const resources = convertIngresses(ingresses, { gatewayNamespace: o.gatewayNamespace || DEFAULT_GATEWAY_NAMESPACE });
    for (const w of warnings) o.stderr.write(`warning: ${w}\n`);
    writeOutput(o.output ?? "-", resources.map((r) => stringify(r, { lineWidth: 0, indentSeq: false })).join("---\n"), o.stdout);
    return EXIT_OK;
  } catch (e) {
    if (e instanceof ConfigError) {
      o.stderr.write(`error: ${e.message}\n`);
      return EXIT_BAD_CONFIG;
    }
    throw e;
  }
}
