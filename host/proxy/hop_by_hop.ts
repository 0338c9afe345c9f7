import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { HeaderList } from "../wasm/abi_types.ts";

// RFC 9110 §7.6.1: connection-specific fields are not forwarded, nor any
// field the Connection header names.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authenticate", "proxy-authorization"]);
const NONE: ReadonlySet<string> = new Set();

// The fields every Connection header of a message names (lower-case), read from its raw headers.
function connectionTokens(raw: string[]): ReadonlySet<string> {
  let named: Set<string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].length !== 10 || raw[i].toLowerCase() !== "connection") continue;
    for (const token of raw[i + 1].split(",")) {
      const name = token.trim().toLowerCase();
      if (name) (named ??= new Set()).add(name);
    }
  }
  return named ?? NONE;
}

/**
 * Header pairs (lower-case names) of a message, without hop-by-hop fields;
 * repeated fields stay repeated. Appended to `into` (e.g. after
 * pseudo-headers); `skip` names one more field to leave out.
 */
export function endToEndHeaders(raw: string[], into: HeaderList = [], skip?: string): HeaderList {
  const named = connectionTokens(raw);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name) && name !== skip) into.push([name, raw[i + 1]]);
  }
  return into;
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

/** Pairs (pseudo-headers excluded) as the flat name, value, name, value… list Node's writeHead takes; order and repeats kept. */
export function toRawHeaders(pairs: ReadonlyArray<readonly [string, string]>): string[] {
  const out: string[] = [];
  for (const [name, value] of pairs) {
    if (name.charCodeAt(0) === 0x3a) continue;
    out.push(name, value);
  }
  return out;
}

export type { IncomingHttpHeaders };
