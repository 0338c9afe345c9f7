import { parseGoDuration } from "../daemon/duration.ts";
import { AnchorConfigError } from "./errors.ts";
import type { AnchorEnvironment } from "./options.ts";

/** Spec 2, "Environment variables", the CA rows, with their defaults. */
export const ENV_DEFAULTS = Object.freeze({
  ANCHOR_SELF_SIGNED_CA_CERT_TTL: "87600h0m0s",
  ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: "1h0m0s",
  ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: "20",
  ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "true",
  ANCHOR_WORKLOAD_CERT_MIN_GRACE_PERIOD: "10m0s",
  ANCHOR_ENABLE_NAMESPACES_BY_DEFAULT: "true",
});

type Name = keyof typeof ENV_DEFAULTS;

/**
 * Reads the ANCHOR_* variables. A value that does not parse is a
 * configuration error naming the variable (upstream logged and fell back to
 * the default, which hides typos in a security setting).
 */
export function anchorEnvironment(env: NodeJS.ProcessEnv = process.env): AnchorEnvironment {
  const raw = (name: Name) => {
    const v = env[name];
    return v === undefined || v === "" ? ENV_DEFAULTS[name] : v;
  };
  const duration = (name: Name, allowNegative: boolean) => {
    const v = raw(name);
    const ms = parseGoDuration(v);
    if (ms === undefined || (!allowNegative && ms < 0))
      throw new AnchorConfigError(`${name}=${JSON.stringify(v)}: expected a ${allowNegative ? "" : "non-negative "}duration such as "1h0m0s" or "30s"`);
    return ms;
  };
  const bool = (name: Name) => {
    const v = raw(name);
    // Go's strconv.ParseBool
    if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
    if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) return false;
    throw new AnchorConfigError(`${name}=${JSON.stringify(v)}: expected true or false`);
  };
  const percentile = raw("ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE");
  if (!/^\d+$/.test(percentile) || Number(percentile) > 100) {
    throw new AnchorConfigError(`ANCHOR_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE=${JSON.stringify(percentile)}: expected an integer from 0 to 100`);
  }
  const caTtl = duration("ANCHOR_SELF_SIGNED_CA_CERT_TTL", false);
  if (caTtl === 0) throw new AnchorConfigError("ANCHOR_SELF_SIGNED_CA_CERT_TTL must be positive");
  return {
    selfSignedCaCertTtlMs: caTtl,
    rootCertCheckIntervalMs: duration("ANCHOR_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL", true),
    rootCertGracePeriodPercentile: Number(percentile),
    rotatorJitter: bool("ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR"),
    workloadCertMinGracePeriodMs: duration("ANCHOR_WORKLOAD_CERT_MIN_GRACE_PERIOD", false),
    enableNamespacesByDefault: bool("ANCHOR_ENABLE_NAMESPACES_BY_DEFAULT"),
  };
}
