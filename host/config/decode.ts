import { ConfigError, type ConfigOrigin, describeValue, formatProblem } from "./errors.ts";

/** Collects warnings (unknown fields and the like) while decoding. */
export interface DecodeContext extends ConfigOrigin {
  warnings: string[];
  /**
   * Unknown fields are errors, not warnings: upstream's strict proto decoding,
   * for the resources where a dropped typo weakens security (`mtls: {mdoe:
   * STRICT}` would leave the workload PERMISSIVE).
   */
  strictFields?: boolean;
}

const DURATION = /^(-)?(\d+(?:\.\d+)?)(h|m|s|ms|us|µs|ns)$/;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/**
 * A position in an untyped document (parsed YAML or JSON) that knows its field
 * path, so every decoding failure can say exactly where and what was expected.
 * Decoders walk documents with it once, at the edge, and return typed values.
 */
export class Field {
  constructor(
    readonly value: unknown,
    readonly path: string,
    readonly context: DecodeContext,
  ) {}

  static root(value: unknown, context: DecodeContext, path = ""): Field {
    return new Field(value, path, context);
  }

  get present(): boolean {
    return this.value !== undefined && this.value !== null;
  }

  /** The named member of this object (absent members have value undefined). */
  get(name: string): Field {
    const obj = this.value !== undefined && this.value !== null ? this.object() : {};
    return new Field(obj[name], this.path ? `${this.path}.${name}` : name, this.context);
  }

  fail(expected: string): never {
    throw new ConfigError(this.context, this.path || "(document)", expected, describeValue(this.value));
  }

  /** A problem that is not a type mismatch, e.g. a template the parser refused. */
  invalid(reason: string): never {
    const error = new ConfigError(this.context, this.path, reason);
    error.message = formatProblem(this.context, this.path, reason);
    throw error;
  }

  warn(text: string): void {
    this.context.warnings.push(formatProblem(this.context, this.path || "(document)", text));
  }

  object(): Record<string, unknown> {
    const v = this.value;
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail("an object");
    return v as Record<string, unknown>;
  }

  /**
   * Warns about members not in `known`: likely typos that would otherwise be
   * silently ignored. With `context.strictFields`, refuses the first instead.
   * `unsupported`: upstream fields this mesh does not implement, named as such.
   */
  allowOnly(known: readonly string[], unsupported: readonly string[] = []): this {
    if (!this.present) return this;
    for (const key of Object.keys(this.object())) {
      if (known.includes(key)) continue;
      const problem = unsupported.includes(key)
        ? "not supported: an upstream field this mesh does not implement"
        : `unknown field (known: ${known.join(", ")})`;
      if (this.context.strictFields) this.get(key).invalid(problem);
      this.get(key).warn(problem);
    }
    return this;
  }

  string(): string {
    if (typeof this.value !== "string") this.fail("a string");
    return this.value;
  }

  nonEmptyString(): string {
    const s = this.string();
    if (s.length === 0) this.fail("a non-empty string");
    return s;
  }

  optionalString(): string | undefined {
    return this.present ? this.string() : undefined;
  }

  bool(defaultValue = false): boolean {
    if (!this.present) return defaultValue;
    if (typeof this.value !== "boolean") this.fail("true or false");
    return this.value;
  }

  /** An integer within [min, max]; YAML and JSON may carry it as a number or a decimal string (int64 in proto JSON). */
  integer(min: number, max: number, defaultValue?: number): number {
    if (!this.present) {
      if (defaultValue !== undefined) return defaultValue;
      this.fail(`an integer from ${min} to ${max}`);
    }
    const v = typeof this.value === "string" && /^-?\d+$/.test(this.value) ? Number(this.value) : this.value;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) this.fail(`an integer from ${min} to ${max}`);
    return v;
  }

  enumOf<T extends string>(values: readonly T[], defaultValue?: T): T {
    if (!this.present && defaultValue !== undefined) return defaultValue;
    if (typeof this.value !== "string" || !values.includes(this.value as T)) this.fail(`one of ${values.join(", ")}`);
    return this.value as T;
  }

  /**
   * A duration in milliseconds: protobuf JSON form (`"1.5s"`) or Go form
   * (`"1m30s"` is not accepted; use one unit), or a `{seconds, nanos}` object.
   */
  durationMs(defaultValue?: number): number {
    if (!this.present) {
      if (defaultValue !== undefined) return defaultValue;
      this.fail('a duration such as "1s" or "250ms"');
    }
    const v = this.value;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      const seconds = this.get("seconds").integer(-315_576_000_000, 315_576_000_000, 0);
      const nanos = this.get("nanos").integer(-999_999_999, 999_999_999, 0);
      return seconds * 1000 + nanos / 1e6;
    }
    const m = typeof v === "string" ? DURATION.exec(v) : null;
    if (!m) this.fail('a duration such as "1s" or "250ms"');
    const ms = Number(m[2]) * UNIT_MS[m[3]];
    return m[1] ? -ms : ms;
  }

  list(): Field[] {
    if (!this.present) return [];
    if (!Array.isArray(this.value)) this.fail("a list");
    return this.value.map((item, i) => new Field(item, `${this.path}[${i}]`, this.context));
  }

  nonEmptyList(): Field[] {
    const items = this.list();
    if (items.length === 0) this.fail("a non-empty list");
    return items;
  }

  /** Members of a map-valued field, each with its path `field[key]`. */
  entries(): Array<[string, Field]> {
    if (!this.present) return [];
    return Object.entries(this.object()).map(([k, v]) => [k, new Field(v, `${this.path}[${k}]`, this.context)]);
  }

  stringMap(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, field] of this.entries()) out[key] = field.string();
    return out;
  }

  /**
   * Exactly one of `names` must be present; returns which. Used for the
   * oneof fields of the spec (APIKey, StringMatch, HTTPAPISpecPattern).
   */
  oneOf<T extends string>(names: readonly T[], required = true): T | undefined {
    const present = names.filter((n) => this.get(n).present);
    if (present.length > 1) this.invalid(`expected exactly one of ${names.join(", ")}, got ${present.join(" and ")}`);
    if (present.length === 0) {
      if (required) this.invalid(`expected exactly one of ${names.join(", ")}, got none`);
      return undefined;
    }
    return present[0];
  }
}
