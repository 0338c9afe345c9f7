import { isIP } from "node:net";
import type { Field } from "../decode.ts";
import { attempt } from "../problems.ts";

/**
 * Value syntaxes shared by the mesh and orchestrator resources: names, label
 * maps, DNS names with `*` prefixes, ports, CIDRs. Each decoder fails with the
 * field path and the expected form.
 */

export const MIN_PORT = 1;
export const MAX_PORT = 65_535;

/** RFC 1123 label as the orchestrator uses it for namespaces and service names: lower case, ≤ 63. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Label key name part and label values: ≤ 63, alphanumeric at both ends, `-_.` inside. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** IANA service name (container port names): ≤ 15, lower-case alphanumerics and `-`, a letter somewhere, no `--`, no `-` at the ends. */
const IANA_SVC_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A host label in a DNS name: case-insensitive (RFC 4343), so upper case is allowed. */
const HOST_LABEL = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;
/** RFC 7230 token: header names and HTTP methods. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: string): boolean {
  return s.length > 0 && s.length <= 253 && s.split(".").every(isDns1123Label);
}

export function isIanaServiceName(s: string): boolean {
  return s.length <= 15 && IANA_SVC_NAME.test(s) && /[a-z]/.test(s) && !s.includes("--");
}

export function isHttpToken(s: string): boolean {
  return HTTP_TOKEN.test(s);
}

/** A DNS name: labels of letters, digits and `-`, ≤ 63 each, ≤ 253 in all; a trailing dot is not allowed. */
export function isDnsName(s: string): boolean {
  return s.length > 0 && s.length <= 253 && s.split(".").every((l) => l.length <= 63 && HOST_LABEL.test(l));
}

/** A DNS name, optionally `*` or `*.`-prefixed (`*.example.com`, `*`), as mesh hosts allow. */
export function isWildcardDnsName(s: string): boolean {
  if (s === "*") return true;
  return isDnsName(s.startsWith("*.") ? s.slice(2) : s);
}

export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && !isDns1123Subdomain(prefix)) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

export function isLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && LABEL_NAME.test(value));
}

/** An IPv4/IPv6 address or a CIDR block (`10.0.0.0/8`, `2001:db8::/32`). */
export function isIpOrCidr(s: string): boolean {
  const slash = s.indexOf("/");
  const ip = slash < 0 ? s : s.slice(0, slash);
  const family = isIP(ip);
  if (family === 0) return false;
  if (slash < 0) return true;
  const bits = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

export const LABEL_KEY_EXPECTED =
  "a label key: an optional DNS subdomain prefix and '/', then a name of up to 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit";
export const LABEL_VALUE_EXPECTED = "a label value: empty, or up to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit";

/** A label map (`metadata.labels`, `selector.matchLabels`): keys and values in the orchestrator's label syntax. */
export function labelMap(f: Field): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, value] of f.entries()) {
    if (!isLabelKey(key)) value.invalid(`expected ${LABEL_KEY_EXPECTED}, got ${JSON.stringify(key)}`);
    const text = value.string();
    if (!isLabelValue(text)) value.fail(LABEL_VALUE_EXPECTED);
    out[key] = text;
  }
  return Object.freeze(out);
}

export interface WorkloadSelector {
  /** Empty or absent: every workload of the policy's namespace. */
  readonly matchLabels: Readonly<Record<string, string>>;
}

/** `spec.selector` of the security resources: `{matchLabels}`; undefined when absent. */
export function workloadSelector(f: Field): WorkloadSelector | undefined {
  if (!f.present) return undefined;
  f.object();
  f.allowOnly(["matchLabels"]);
  return Object.freeze({ matchLabels: attempt(f.get("matchLabels"), labelMap) });
}

export function port(f: Field): number {
  return f.integer(MIN_PORT, MAX_PORT);
}

export function dns1123Label(f: Field): string {
  const s = f.nonEmptyString();
  if (!isDns1123Label(s)) f.fail("a DNS-1123 label (lower-case letters, digits and '-', up to 63, starting and ending with a letter or digit)");
  return s;
}

/** A host of a mesh resource: a DNS name such as `reviews.shop.svc.cluster.local` or `reviews`, `*.`-prefixed, or `*`. */
export function wildcardHost(f: Field, allowStar = true): string {
  const s = f.nonEmptyString();
  if (s === "*" && !allowStar) f.fail("a DNS name or a `*.`-prefixed DNS name (a lone `*` is not allowed here)");
  if (!isWildcardDnsName(s)) f.fail("a DNS name such as reviews.shop.svc.cluster.local, optionally prefixed by `*.`, or `*`");
  return s;
}

/** A list of non-empty strings. */
export function stringList(f: Field): readonly string[] {
  return Object.freeze(f.list().map((item) => item.nonEmptyString()));
}
