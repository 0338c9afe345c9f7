import { dirname, isAbsolute, resolve } from "node:path";
import type { CompileRegex, RegexMatcher } from "../../regex/engine.ts";
import { GRPC_CODES, GRPC_CODE_NAMES, type GrpcCodeName } from "../../wire/status_codes.ts";
import { Field } from "../decode.ts";
import type { ConfigError } from "../errors.ts";
import { type CollectingContext, attempt, attemptEach, noErrorsYet } from "../problems.ts";
import { resourceName, type SourceDocument } from "../documents.ts";
import { decodeMetricsSpec, type MetricsOverride } from "./hub_metrics.ts";

/** The group and version of the hub's configuration documents. */
export const HUB_API_VERSION = "config.mesh.io/v1alpha2";
export const HUB_KINDS = ["HubRule", "HubQuota", "HubAccessLog", "HubMetrics"] as const;
export type HubKind = (typeof HUB_KINDS)[number];

/** An attribute as a clause key names it: `request.path`, or `request.headers[x-user]` for one entry of a string map. */
export interface AttributeRef {
  readonly name: string;
  readonly key?: string;
  /** As written in the configuration. */
  readonly text: string;
}

export type StringMatch =
  | { readonly kind: "exact"; readonly value: string }
  | { readonly kind: "prefix"; readonly value: string }
  | { readonly kind: "regex"; readonly pattern: string; readonly matcher: RegexMatcher }
  /** `{}`: the attribute only has to be present as a string (upstream behaviour of an unset oneof). */
  | { readonly kind: "present" };

export interface Clause {
  readonly attribute: AttributeRef;
  readonly match: StringMatch;
}

/** Holds when all its clauses hold; no clauses holds for every request. */
export interface AttributeMatch {
  readonly clauses: readonly Clause[];
}

export type HubAction =
  | { readonly kind: "deny"; readonly code: number; readonly codeName: GrpcCodeName; readonly message: string }
  | { readonly kind: "allowList"; readonly attribute: AttributeRef; readonly values: ReadonlySet<string>; readonly blacklist: boolean }
  | { readonly kind: "quota"; readonly name: string };

export interface ResourceBase {
  readonly namespace: string;
  readonly name: string;
  /** `Kind namespace/name`. */
  readonly id: string;
  readonly file: string;
}

export interface HubRule extends ResourceBase {
  readonly kind: "HubRule";
  /** Any one suffices; empty matches every request. */
  readonly match: readonly AttributeMatch[];
  readonly actions: readonly HubAction[];
  readonly validDurationMs?: number;
  readonly validUseCount?: number;
}

export interface QuotaOverride {
  readonly dimensions: ReadonlyArray<readonly [AttributeRef, string]>;
  readonly maxAmount: number;
}

/** Upstream redisquota's `rateLimitAlgorithm` (FIXED_WINDOW is its enum's zero, hence the default). */
export const RATE_LIMIT_ALGORITHMS = ["FIXED_WINDOW", "ROLLING_WINDOW"] as const;
export type RateLimitAlgorithm = (typeof RATE_LIMIT_ALGORITHMS)[number];

export interface HubQuota extends ResourceBase {
  readonly kind: "HubQuota";
  /** The name requests ask for in CheckRequest.quotas. */
  readonly quotaName: string;
  readonly maxAmount: number;
  /** Length of the window. */
  readonly validDurationMs: number;
  readonly rateLimitAlgorithm: RateLimitAlgorithm;
  /** ROLLING_WINDOW: the precision with which allocations leave the window (0 < bucket < window); 0 for FIXED_WINDOW. */
  readonly bucketDurationMs: number;
  readonly overrides: readonly QuotaOverride[];
}

export interface HubAccessLog extends ResourceBase {
  readonly kind: "HubAccessLog";
  /** Absolute; a relative `spec.path` is resolved against the directory of its file. */
  readonly path: string;
}

/** The standard request metrics' labels (hub_metrics.ts); several documents apply in namespace/name order. */
export interface HubMetrics extends ResourceBase {
  readonly kind: "HubMetrics";
  readonly overrides: readonly MetricsOverride[];
  /** SECONDS (Mixer's mesh_request_duration_seconds, the default) or MILLISECONDS (telemetry v2's mesh_request_duration_milliseconds). */
  readonly requestDurationUnit?: "SECONDS" | "MILLISECONDS";
}

export type HubResource = HubRule | HubQuota | HubAccessLog | HubMetrics;

export interface HubDecodeOptions {
  /** Namespace of documents without metadata.namespace (`--configDefaultNamespace`). */
  defaultNamespace: string;
  compileRegex: CompileRegex;
}

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
const ATTRIBUTE_REF = /^([^[\]]+)\[([^[\]]+)\]$/;

export function isHubDocument(doc: SourceDocument): boolean {
  return doc.apiVersion === HUB_API_VERSION && (HUB_KINDS as readonly string[]).includes(doc.kind);
}

function attributeRef(field: Field, text: string): AttributeRef {
  if (text.length === 0 || /\s/.test(text))
    field.invalid(`expected an attribute name such as request.path or request.headers[x-user], got ${JSON.stringify(text)}`);
  const m = ATTRIBUTE_REF.exec(text);
  if (m) return Object.freeze({ name: m[1], key: m[2], text });
  if (text.includes("[") || text.includes("]")) field.invalid(`expected name or name[key], got ${JSON.stringify(text)}`);
  return Object.freeze({ name: text, text });
}

function stringMatch(field: Field, compileRegex: CompileRegex): StringMatch {
  // Strict: with `{}` meaning "present", a misspelt `exact` would silently widen the match.
  for (const key of Object.keys(field.object())) {
    if (key !== "exact" && key !== "prefix" && key !== "regex") field.get(key).invalid("unknown field in a StringMatch (known: exact, prefix, regex)");
  }
  const which = field.oneOf(["exact", "prefix", "regex"] as const, false);
  if (which === undefined) return { kind: "present" };
  const value = field.get(which).string();
  if (which !== "regex") return { kind: which, value };
  const compiled = compileRegex(value);
  if ("error" in compiled) return field.get("regex").invalid(`regex ${JSON.stringify(value)} is not supported: ${compiled.error}`);
  return { kind: "regex", pattern: value, matcher: compiled };
}

function decodeRule(spec: Field, base: ResourceBase, options: HubDecodeOptions): HubRule {
  // Parts are attempted one by one so `meshctl validate` reports every error (problems.ts).
  spec.allowOnly(["match", "actions", "validDuration", "validUseCount"]);
  const match = attemptEach(spec.get("match"), (m): AttributeMatch => {
    m.allowOnly(["clause"]);
    const clauses = m
      .get("clause")
      .entries()
      .map(
        ([key, f]): Clause => ({
          attribute: attributeRef(f, key),
          match: stringMatch(f, options.compileRegex),
        }),
      );
    return Object.freeze({ clauses: Object.freeze(clauses) });
  });
  const actionsField = spec.get("actions");
  const actions = attemptEach(actionsField, (a): HubAction => {
    a.allowOnly(["deny", "allowList", "quota"]);
    const which = a.oneOf(["deny", "allowList", "quota"] as const)!;
    const f = a.get(which);
    f.object();
    if (which === "deny") {
      f.allowOnly(["code", "message"]);
      const codes = GRPC_CODE_NAMES.filter((c) => c !== "OK");
      const codeName = f.get("code").enumOf(codes, "PERMISSION_DENIED");
      const message = f.get("message").optionalString() ?? `denied by ${base.id}`;
      return Object.freeze({ kind: "deny", code: GRPC_CODES[codeName], codeName, message });
    }
    if (which === "allowList") {
      f.allowOnly(["attribute", "values", "blacklist"]);
      const attrField = f.get("attribute");
      const attribute = attributeRef(attrField, attrField.nonEmptyString());
      const values = new Set(
        f
          .get("values")
          .list()
          .map((v) => v.string()),
      );
      return Object.freeze({ kind: "allowList", attribute, values, blacklist: f.get("blacklist").bool(false) });
    }
    f.allowOnly(["name"]);
    return Object.freeze({ kind: "quota", name: f.get("name").nonEmptyString() });
  });
  if (actions.length === 0 && noErrorsYet(actionsField)) actionsField.warn("no actions: the rule has no effect");
  const validDurationMs = attempt(spec.get("validDuration"), (vd) => {
    const ms = vd.present ? vd.durationMs() : undefined;
    if (ms !== undefined && ms <= 0) vd.fail("a positive duration");
    return ms;
  });
  const validUseCount = attempt(spec.get("validUseCount"), (f) => (f.present ? f.integer(1, 2_147_483_647) : undefined));
  return Object.freeze({ kind: "HubRule", ...base, match: Object.freeze(match), actions: Object.freeze(actions), validDurationMs, validUseCount });
}

function decodeQuota(spec: Field, base: ResourceBase, metadataName: string): HubQuota {
  spec.allowOnly(["name", "maxAmount", "validDuration", "rateLimitAlgorithm", "bucketDuration", "overrides"]);
  const quotaName = attempt(spec.get("name"), (f) => {
    const name = f.optionalString() ?? metadataName;
    if (name.length === 0) f.fail("a non-empty string");
    return name;
  });
  const maxAmount = attempt(spec.get("maxAmount"), (f) => f.integer(0, MAX_AMOUNT));
  const validDurationMs = attempt(spec.get("validDuration"), (vd) => {
    const ms = vd.durationMs();
    if (ms < 1) vd.fail("a duration of at least 1ms");
    return ms;
  });
  const rateLimitAlgorithm = attempt(spec.get("rateLimitAlgorithm"), (f) => f.enumOf(RATE_LIMIT_ALGORITHMS, "FIXED_WINDOW"));
  // As upstream's redisquota: a bucket is required for a rolling window and ignored by a fixed one.
  const bucketDurationMs = attempt(spec.get("bucketDuration"), (f) => {
    if (rateLimitAlgorithm !== "ROLLING_WINDOW") {
      if (f.present) f.warn("ignored: only ROLLING_WINDOW uses a bucketDuration");
      return 0;
    }
    if (!f.present) f.invalid("ROLLING_WINDOW needs a bucketDuration (above 0 and below validDuration), e.g. 500ms");
    const ms = f.durationMs();
    if (ms < 1 || (validDurationMs !== undefined && ms >= validDurationMs)) f.fail(`a duration of at least 1ms and below validDuration (${validDurationMs}ms)`);
    return ms;
  });
  const overrides = attemptEach(spec.get("overrides"), (o): QuotaOverride => {
    o.allowOnly(["dimensions", "maxAmount"]);
    const dims = o.get("dimensions").entries();
    if (dims.length === 0) o.get("dimensions").fail("a non-empty map of attribute to value");
    const dimensions = dims.map(([key, f]) => Object.freeze([attributeRef(f, key), f.string()] as const));
    return Object.freeze({ dimensions: Object.freeze(dimensions), maxAmount: o.get("maxAmount").integer(0, MAX_AMOUNT) });
  });
  return Object.freeze({
    kind: "HubQuota",
    ...base,
    quotaName,
    maxAmount,
    validDurationMs,
    rateLimitAlgorithm,
    bucketDurationMs,
    overrides: Object.freeze(overrides),
  });
}

function decodeAccessLog(spec: Field, base: ResourceBase): HubAccessLog {
  spec.allowOnly(["path"]);
  const path = spec.get("path").nonEmptyString();
  return Object.freeze({ kind: "HubAccessLog", ...base, path: isAbsolute(path) ? path : resolve(dirname(base.file), path) });
}

/**
 * Decodes one HubRule, HubQuota, HubAccessLog or HubMetrics document into a frozen typed
 * value. Throws ConfigError naming the file, the resource and the field path;
 * pushes unknown-field warnings onto `warnings`.
 *
 * @example decodeHubDocument(readDocuments("rules.yaml")[0], { defaultNamespace: "mesh-system", compileRegex }, [])
 */
export function decodeHubDocument(doc: SourceDocument, options: HubDecodeOptions, warnings: string[], errors?: ConfigError[]): HubResource {
  const namespace = doc.namespace ?? options.defaultNamespace;
  const id = resourceName({ kind: doc.kind, name: doc.name, namespace });
  // With `errors`, every error of the document is collected there (the value is then incomplete and must be dropped).
  const context: CollectingContext = { file: doc.file, resource: id, warnings, ...(errors ? { errors } : {}) };
  const root = Field.root(doc.body, context);
  root.allowOnly(["apiVersion", "kind", "metadata", "spec"]);
  const spec = root.get("spec");
  spec.object();
  const base: ResourceBase = { namespace, name: doc.name, id, file: doc.file };
  switch (doc.kind as HubKind) {
    case "HubRule":
      return decodeRule(spec, base, options);
    case "HubQuota":
      return decodeQuota(spec, base, doc.name);
    case "HubAccessLog":
      return decodeAccessLog(spec, base);
    case "HubMetrics": {
      const decoded = decodeMetricsSpec(spec);
      return Object.freeze({ kind: "HubMetrics", ...base, ...decoded, overrides: Object.freeze(decoded.overrides) });
    }
    default:
      return root.get("kind").fail(`one of ${HUB_KINDS.join(", ")}`);
  }
}
