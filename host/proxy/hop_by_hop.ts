import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

// RFC 9110 §7.6.1: connection-specific fields are not forwarded, nor any
// field the Connection header names.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authenticate", "proxy-authorization"]);

function connectionTokens(value: string | string[] | undefined): Set<string> {
  const text = Array.isArray(value) ? value.join(",") : (value ?? "");
  return new Set(text.split(",").map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/** Header pairs (lower-case names) of a message, without hop-by-hop fields; repeated fields stay repeated. */
export function endToEndHeaders(raw: string[], connection: string | string[] | undefined): Array<[string, string]> {
  const named = connectionTokens(connection);
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) out.push([name, raw[i + 1]]);
  }
  return out;
}

/** Pairs (pseudo-headers excluded) as Node's outgoing header object; repeated names become arrays. */
export function toOutgoing(pairs: ReadonlyArray<readonly [string, string]>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of pairs) {
    if (name.startsWith(":")) continue;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = Array.isArray(existing) ? [...existing, value] : [String(existing), value];
  }
  return out;
}

export type { IncomingHttpHeaders };
