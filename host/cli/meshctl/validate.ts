import type { Writable } from "node:stream";
import { type CatalogChecks, decodeDocuments, filterChecks } from "../../config/catalog.ts";
import { type ConfigProblem, formatConfigProblem } from "../../config/problems.ts";
import { loadSources } from "../../config/sources.ts";
import { FilterModule } from "../../wasm/filter_module.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../daemon/exit_codes.ts";

export const VALIDATE_DEPRECATION =
  "meshctl validate is deprecated and will be removed in a later release: use `meshctl analyze`, which runs the same schema checks and the cross-resource analyzers.";

export interface ValidateOptions {
  /** Files, directories (read recursively) and `-` for stdin. */
  files: string[];
  /** `-x`: also check references between resources (see docs/meshctl.md#validate). */
  referential: boolean;
  /** Namespace of documents without metadata.namespace (`-n`); default `default`. */
  namespace?: string;
  output: Writable;
  errors: Writable;
  checks?: CatalogChecks;
  stdin?: () => string;
}

/** `Error: <file>: <Kind ns/name>: <field path>: <message>` (or `Warning: …`). */
export function formatValidateLine(p: ConfigProblem): string {
  return `${p.severity === "error" ? "Error" : "Warning"}: ${formatConfigProblem(p)}`;
}

/**
 * `meshctl validate -f FILE… [-x]`: decodes every document through the
 * catalog and prints each problem. Exit 0 when every document is valid
 * (warnings allowed), 1 when any is not, 2 when a path cannot be read.
 */
export function runValidate(o: ValidateOptions): number {
  o.errors.write(`${VALIDATE_DEPRECATION}\n`);
  const loaded = loadSources(o.files, { recursive: true, stdin: o.stdin });
  if (loaded.unreadable.length > 0) {
    for (const u of loaded.unreadable) o.errors.write(`Error: meshctl validate: cannot read ${JSON.stringify(u.path)}: ${u.reason}\n`);
    return EXIT_BAD_CONFIG;
  }
  const checks = o.checks ?? filterChecks(FilterModule.load());
  const catalog = decodeDocuments(loaded.documents, checks, { defaultNamespace: o.namespace, referential: o.referential });
  const problems = [...loaded.problems, ...catalog.problems];
  for (const p of problems) o.errors.write(`${formatValidateLine(p)}\n`);
  const badFiles = new Set(problems.filter((p) => p.severity === "error").map((p) => p.file));
  const files = [...new Set([...loaded.documents.map((d) => d.file), ...problems.map((p) => p.file)])];
  for (const file of files) if (!badFiles.has(file)) o.output.write(`${JSON.stringify(file)} is valid\n`);
  if (files.length === 0) o.errors.write("Warning: meshctl validate: no documents found\n");
  return badFiles.size > 0 ? EXIT_FAILURE : EXIT_OK;
}
