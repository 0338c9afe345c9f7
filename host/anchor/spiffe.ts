import { AnchorError } from "./errors.ts";

/** A workload identity `spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>`. */
export interface SpiffeIdentity {
  trustDomain: string;
  namespace: string;
  serviceAccount: string;
  uri: string;
}

// Trust domain: lower-case letters, digits, dots, dashes and underscores (SPIFFE ID spec §2.1).
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
// A path segment: letters, digits, dots, dashes and underscores (SPIFFE ID spec §2.2).
const SEGMENT = /^[A-Za-z0-9._-]+$/;

export function isValidTrustDomain(td: string): boolean {
  return TRUST_DOMAIN.test(td);
}

export function spiffeUri(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/**
 * Parses a mesh workload identity; throws AnchorError IDENTITY_INVALID naming
 * what is wrong. Only the `/ns/<ns>/sa/<sa>` path form is a workload identity.
 */
export function parseSpiffeIdentity(uri: string): SpiffeIdentity {
  const fail = (why: string): never => {
    throw new AnchorError("IDENTITY_INVALID", `URI SAN ${JSON.stringify(uri)} is not a workload identity: ${why}`);
  };
  if (!uri.startsWith("spiffe://")) fail("the scheme must be spiffe://");
  const rest = uri.slice("spiffe://".length);
  const slash = rest.indexOf("/");
  const trustDomain = slash < 0 ? rest : rest.slice(0, slash);
  if (!isValidTrustDomain(trustDomain)) fail(`trust domain ${JSON.stringify(trustDomain)} must be lower-case letters, digits, '.', '-' or '_'`);
  const path = slash < 0 ? "" : rest.slice(slash);
  const parts = path.split("/");
  if (parts.length !== 5 || parts[1] !== "ns" || parts[3] !== "sa") fail("the path must be /ns/<namespace>/sa/<service-account>");
  const [, , namespace, , serviceAccount] = parts;
  if (!SEGMENT.test(namespace)) fail(`namespace ${JSON.stringify(namespace)} must be letters, digits, '.', '-' or '_'`);
  if (!SEGMENT.test(serviceAccount)) fail(`service account ${JSON.stringify(serviceAccount)} must be letters, digits, '.', '-' or '_'`);
  return { trustDomain, namespace, serviceAccount, uri };
}
