import { createHash, type X509Certificate } from "node:crypto";
import type { HeaderPairs } from "../jwt/extractor.ts";

/**
 * `X-Forwarded-Client-Cert` as the server sidecar sets it on the upstream
 * request (spec rule 1; security.md §3): one element
 * `By=<own URI SAN>;Hash=<sha256 of the client cert DER>;Subject="<client subject>";URI=<client URI SAN>`
 * (then `DNS=` per client DNS SAN). A client-supplied header is never passed
 * through: on mutual TLS it is replaced by this element, on plain text it is
 * removed and nothing is added (Envoy SANITIZE_SET; upstream sidecars use
 * APPEND_FORWARD, which would keep an element a caller holding a mesh
 * certificate forged).
 */

export const XFCC_HEADER = "x-forwarded-client-cert";

export interface XfccElement {
  /** URI SANs of the server sidecar's own certificate. */
  readonly by: readonly string[];
  /** Lower-case hex SHA-256 of the client certificate DER. */
  readonly hash: string;
  /** Client certificate subject, RFC 2253 form (`""` when empty). */
  readonly subject: string;
  /** First URI SAN of the client certificate (`""` when none). */
  readonly uri: string;
  readonly dns?: readonly string[];
}

/** A value with `,` `;` `=` or `"` is double-quoted, with `"` escaped as `\"` (Envoy's XFCC format). */
export function quoteXfccValue(value: string): string {
  return /[,;="]/.test(value) ? `"${escapeQuotes(value)}"` : value;
}

/** `"` not already escaped (RFC 2253 output escapes its own) becomes `\"`. */
function escapeQuotes(value: string): string {
  return value.replace(/(^|[^\\])"/g, '$1\\"');
}

/** One XFCC element in Envoy's key order: By, Hash, Subject (always quoted), URI, DNS. */
export function formatXfccElement(e: XfccElement): string {
  const pairs = [
    ...e.by.map((b) => `By=${quoteXfccValue(b)}`),
    `Hash=${e.hash}`,
    `Subject="${escapeQuotes(e.subject)}"`,
    `URI=${quoteXfccValue(e.uri)}`,
    ...(e.dns ?? []).map((d) => `DNS=${quoteXfccValue(d)}`),
  ];
  return pairs.join(";");
}

/**
 * Subject alternative names of a certificate, from Node's
 * `subjectAltName` text (`URI:spiffe://…, DNS:…`; values Node JSON-quotes
 * when ambiguous are unquoted).
 */
export function subjectAltNames(cert: X509Certificate): { uris: string[]; dns: string[] } {
  const text = cert.subjectAltName ?? "";
  const uris: string[] = [];
  const dns: string[] = [];
  for (const m of text.matchAll(/(?:^|, )([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const value = m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2];
    if (m[1] === "URI") uris.push(value);
    else if (m[1] === "DNS") dns.push(value);
  }
  return { uris, dns };
}

/** Node prints a subject one attribute per line in certificate order; RFC 2253 is the reverse, comma-joined. */
export function rfc2253Subject(cert: X509Certificate): string {
  const text = cert.subject ?? "";
  return text === ""
    ? ""
    : text
        .split("\n")
        .filter((l) => l !== "")
        .reverse()
        .join(",");
}

/**
 * The element for a mutual TLS connection: `local` is the server sidecar's
 * certificate, `peer` the client's.
 *
 * @example
 * const value = xfccFor(new X509Certificate(ownPem), socket.getPeerX509Certificate()!);
 * // By=spiffe://cluster.local/ns/foo/sa/httpbin;Hash=…;Subject="";URI=spiffe://cluster.local/ns/foo/sa/sleep
 */
export function xfccFor(local: X509Certificate, peer: X509Certificate): string {
  const peerSans = subjectAltNames(peer);
  return formatXfccElement({
    by: subjectAltNames(local).uris,
    hash: createHash("sha256").update(peer.raw).digest("hex"),
    subject: rfc2253Subject(peer),
    uri: peerSans.uris[0] ?? "",
    dns: peerSans.dns,
  });
}

/**
 * The request headers with any incoming XFCC removed and, on mutual TLS,
 * the server sidecar's own element set.
 */
export function applyXfcc(headers: HeaderPairs, element: string | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = headers.filter(([n]) => n !== XFCC_HEADER).map(([n, v]) => [n, v]);
  if (element !== undefined) out.push([XFCC_HEADER, element]);
  return out;
}
