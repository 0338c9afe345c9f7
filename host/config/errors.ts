/** Where a configuration value came from: file, resource and field path. */
export interface ConfigOrigin {
  file?: string;
  /** `Kind namespace/name`, or `Kind name` for cluster-scoped documents. */
  resource?: string;
}

/**
 * A configuration value that cannot be used. The message names the file, the
 * resource, the field path and what was expected, e.g.
 * `quota.yaml: QuotaSpec default/request-count: spec.rules[0].quotas[0].charge: expected an integer, got "one"`.
 */
export class ConfigError extends Error {
  readonly code = "CONFIG_INVALID";
  constructor(
    readonly origin: ConfigOrigin,
    readonly fieldPath: string,
    readonly expected: string,
    readonly got?: string,
  ) {
    super(formatProblem(origin, fieldPath, `expected ${expected}${got === undefined ? "" : `, got ${got}`}`));
    this.name = "ConfigError";
  }
}

export function formatProblem(origin: ConfigOrigin, fieldPath: string, text: string): string {
  const parts = [origin.file, origin.resource, fieldPath].filter((p): p is string => !!p);
  return `${parts.join(": ")}: ${text}`;
}

/** A short, quoted rendering of a bad value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
