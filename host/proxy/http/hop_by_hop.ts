import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { HeaderList } from "../../wasm/abi_types.ts";
import { NO_BODY, type RequestFraming, frameObject, framingField, isFramingName, requestFraming } from "./request_framing.ts";

// RFC 9110 §7.6.1: connection-specific fields are not forwarded, nor any
// field the Connection header names.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
]);
const NONE: ReadonlySet<string> = new Set();

// What `Connection: close` names; `keep-alive` names only a field that is
// hop-by-hop already, so it counts as naming nothing.
const CLOSE: ReadonlySet<string> = new Set(["close"]);

/** `named.has(name)`, without the lookup when nothing is named (nearly every message). */
function namedBy(named: ReadonlySet<string>, name: string): boolean {
  return named !== NONE && named.has(name);
}

// The fields every Connection header of a message names (lower-case), read from its raw headers.
function connectionTokens(raw: string[]): ReadonlySet<string> {
  let named: Set<string> | undefined;
  let only: ReadonlySet<string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].length !== 10 || raw[i].toLowerCase() !== "connection") continue;
    const value = raw[i + 1];
    // Nearly every request says just keep-alive or close: no split, no set of its own.
    const common = value === "keep-alive" ? NONE : value === "close" ? CLOSE : undefined;
    if (common && !named && !only) {
      only = common;
      continue;
    }
    named ??= new Set(only);
    for (const token of value.split(",")) {
      const name = token.trim().toLowerCase();
      if (name) named.add(name);
    }
  }
  return named ?? only ?? NONE;
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
    if (!HOP_BY_HOP.has(name) && !namedBy(named, name) && name !== skip) into.push([name, raw[i + 1]]);
  }
  return into;
}

/** A request head read in one pass over its raw headers. */
export interface RequestHead {
  /** End-to-end pairs (lower-case names); Host left out (it travels as `:authority`). */
  headers: HeaderList;
  /** The first Host header. */
  host: string | undefined;
  /** How the body is delimited, or why the request is refused (request_framing.ts). */
  framing: RequestFraming;
}

/**
 * The request's end-to-end headers (as endToEndHeaders, Host left out) and
 * its framing, with each name lower-cased once. Content-Length stays even
 * when `Connection` names it: it frames the body (as in Envoy, which never
 * drops a field because `Connection` names it).
 */
export function requestHead(raw: string[], method = "GET", httpVersion = "1.1"): RequestHead {
  const into: HeaderList = [];
  const named = connectionTokens(raw);
  let host: string | undefined;
  let contentLength: string[] | undefined;
  let transferEncoding: string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    const value = raw[i + 1];
    if (name === "host") host ??= value;
    else if (name === "content-length") {
      (contentLength ??= []).push(value);
      into.push([name, value]);
      continue;
    } else if (name === "transfer-encoding") (transferEncoding ??= []).push(value);
    if (name !== "host" && !HOP_BY_HOP.has(name) && !namedBy(named, name)) into.push([name, value]);
  }
  return {
    headers: into,
    host,
    framing: contentLength === undefined && transferEncoding === undefined ? NO_BODY : requestFraming(method, httpVersion, transferEncoding, contentLength),
  };
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

/**
 * A forwarded request's headers for Node's request(), framed by the
 * listener (request_framing.ts): the flat name, value… list Node's request()
 * takes (pseudo-headers, Host and the framing fields left out, then `host`
 * and the request's own framing field), made in one pass with no header
 * object built and looked up on the way; the header object when a Cookie
 * repeats (Node joins those into one field, as HTTP/1.1 wants).
 */
export function upstreamHeaders(forwarded: HeaderList, method: string, authority: string, framing: RequestFraming): string[] | OutgoingHttpHeaders {
  const out: string[] = [];
  let cookie = false;
  for (let i = 0; i < forwarded.length; i++) {
    const pair = forwarded[i];
    const name = pair[0];
    if (name.charCodeAt(0) === 0x3a || name === "host" || isFramingName(name)) continue;
    if (name === "cookie") {
      if (cookie) return frameObject({ ...toOutgoing(forwarded), host: authority }, method, framing);
      cookie = true;
    }
    out.push(name, pair[1]);
  }
  out.push("host", authority);
  const field = framingField(method, framing);
  if (field) out.push(field[0], field[1]);
  return out;
}

export type { IncomingHttpHeaders };
