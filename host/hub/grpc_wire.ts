// The gRPC-over-HTTP/2 wire rules a unary hub call needs (the protocol's
// "gRPC over HTTP2" document): request headers and metadata, message framing,
// the deadline header, and how trailers, HTTP statuses and RST_STREAM codes
// become gRPC statuses. Pure functions; hub_connection.ts does the I/O.
//
// Compression: this client sends every message uncompressed, says so
// (`grpc-accept-encoding: identity`), and refuses a response message whose
// compressed flag is set: a hub that honours the header never sets it.

import { constants as h2, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { RETRY_POLICY_METADATA } from "../wasm/retry_policy.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";

/** A gRPC status: code and message (`details`). */
export interface GrpcStatus {
  code: number;
  details: string;
}

/** Longest response message accepted (grpc-js's default receive limit, 4 MiB). */
export const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

const LEGAL_KEY = /^[0-9a-z_.-]+$/;
const LEGAL_TEXT_VALUE = /^[ -~]*$/;
/** Header names HTTP/2 forbids in requests (RFC 9113 §8.2.2); Node would throw on them. */
const CONNECTION_SPECIFIC = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]);

/**
 * The call's metadata as HTTP/2 request headers, without the retry policy
 * entry: keys lower-cased, `-bin` values (raw bytes as latin1 text) base64,
 * repeated keys as several fields. Throws on a key or value gRPC does not
 * allow.
 */
export function metadataHeaders(entries: ReadonlyArray<readonly [string, string]>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [key, value] of entries) {
    const name = key.toLowerCase();
    if (name === RETRY_POLICY_METADATA) continue;
    if (!LEGAL_KEY.test(name)) throw new Error(`metadata key ${JSON.stringify(key)} contains characters gRPC does not allow (0-9 a-z _ . -)`);
    if (CONNECTION_SPECIFIC.has(name)) throw new Error(`metadata key ${JSON.stringify(key)} is a connection-specific header HTTP/2 forbids`);
    let wire: string;
    if (name.endsWith("-bin")) wire = Buffer.from(value, "latin1").toString("base64");
    else if (LEGAL_TEXT_VALUE.test(value)) wire = value;
    else throw new Error(`metadata value of ${JSON.stringify(key)} contains characters outside printable ASCII (use a -bin key for bytes)`);
    const earlier = headers[name];
    headers[name] = earlier === undefined ? wire : Array.isArray(earlier) ? [...earlier, wire] : [earlier, wire];
  }
  return headers;
}

/** `grpc-timeout` for a deadline of `ms` milliseconds (at most 8 digits, in the finest unit that fits). */
export function grpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1e8) return `${whole}m`;
  const seconds = Math.ceil(whole / 1000);
  if (seconds < 1e8) return `${seconds}S`;
  return `${Math.min(99_999_999, Math.ceil(seconds / 3600))}H`;
}

/**
 * The headers of a unary call to `path` carrying `metadata` (from
 * `metadataHeaders`) with a deadline of `timeoutMs`. `:authority` and
 * `:scheme` come from the connection.
 */
export function hubRequestHeaders(path: string, metadata: Record<string, string | string[]>, timeoutMs: number, userAgent: string): OutgoingHttpHeaders {
  return {
    ...metadata,
    [h2.HTTP2_HEADER_METHOD]: "POST",
    [h2.HTTP2_HEADER_PATH]: path,
    [h2.HTTP2_HEADER_CONTENT_TYPE]: "application/grpc",
    [h2.HTTP2_HEADER_TE]: "trailers",
    [h2.HTTP2_HEADER_USER_AGENT]: userAgent,
    "grpc-accept-encoding": "identity",
    "grpc-timeout": grpcTimeout(timeoutMs),
  };
}

/**
 * The one message of a unary response from its DATA bytes, or the status
 * that ends the call instead (no message, several, compressed, cut short).
 */
export function unaryResponseMessage(data: Buffer): { message: Uint8Array } | { status: GrpcStatus } {
  if (data.length === 0) return { status: { code: GRPC_CODES.UNIMPLEMENTED, details: "No message received" } };
  if (data.length < 5) return { status: { code: GRPC_CODES.INTERNAL, details: `Response ended inside a message prefix (${data.length} of 5 bytes)` } };
  const flag = data[0];
  const length = data.readUInt32BE(1);
  if (flag === 1) return { status: { code: GRPC_CODES.INTERNAL, details: "Received a compressed message; this client accepts identity encoding only" } };
  if (flag !== 0) return { status: { code: GRPC_CODES.INTERNAL, details: `Received a message with an invalid compressed flag ${flag}` } };
  if (5 + length > data.length)
    return { status: { code: GRPC_CODES.INTERNAL, details: `Response ended inside a message (${data.length - 5} of ${length} bytes)` } };
  if (5 + length < data.length) return { status: { code: GRPC_CODES.UNIMPLEMENTED, details: "Too many responses received" } };
  return { message: new Uint8Array(data.buffer, data.byteOffset + 5, length) };
}

/** RESOURCE_EXHAUSTED when the prefix of `data` announces a message over the limit (checked while it arrives). */
export function oversizedMessage(data: Buffer, limit = MAX_RECEIVE_MESSAGE_BYTES): GrpcStatus | undefined {
  if (data.length < 5) return undefined;
  const length = data.readUInt32BE(1);
  return length > limit ? { code: GRPC_CODES.RESOURCE_EXHAUSTED, details: `Received message larger than max (${length} vs. ${limit})` } : undefined;
}

/** Percent-decodes `grpc-message`; an invalid sequence leaves the text as it came. */
function decodeGrpcMessage(text: string): string {
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The status a trailers block (or a trailers-only response) carries:
 * `grpc-status`/`grpc-message`, else the HTTP status mapped, else UNKNOWN.
 */
export function trailerStatus(headers: IncomingHttpHeaders, httpStatus: number | undefined): GrpcStatus {
  const raw = headers["grpc-status"];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text !== undefined) {
    const code = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
    const message = headers["grpc-message"];
    const details = decodeGrpcMessage((Array.isArray(message) ? message[0] : message) ?? "");
    if (Number.isInteger(code) && code >= 0 && code <= 16) return { code, details };
    return { code: GRPC_CODES.UNKNOWN, details: `Received an invalid grpc-status ${JSON.stringify(text)}${details ? `: ${details}` : ""}` };
  }
  if (httpStatus !== undefined && httpStatus !== 200) return httpStatusToGrpc(httpStatus);
  return { code: GRPC_CODES.UNKNOWN, details: "No status information received" };
}

/** The protocol's "HTTP to gRPC Status Code Mapping", for a response without grpc-status. */
export function httpStatusToGrpc(httpStatus: number): GrpcStatus {
  const details = `Received HTTP status code ${httpStatus}`;
  switch (httpStatus) {
    case 400:
      return { code: GRPC_CODES.INTERNAL, details };
    case 401:
      return { code: GRPC_CODES.UNAUTHENTICATED, details };
    case 403:
      return { code: GRPC_CODES.PERMISSION_DENIED, details };
    case 404:
      return { code: GRPC_CODES.UNIMPLEMENTED, details };
    case 429:
    case 502:
    case 503:
    case 504:
      return { code: GRPC_CODES.UNAVAILABLE, details };
    default:
      return { code: GRPC_CODES.UNKNOWN, details };
  }
}

/** The protocol's RST_STREAM error code → gRPC status, for a stream reset by the peer before any status. */
export function resetStatus(rstCode: number): GrpcStatus {
  const details = `Received RST_STREAM with code ${rstCode}`;
  switch (rstCode) {
    case h2.NGHTTP2_REFUSED_STREAM:
      return { code: GRPC_CODES.UNAVAILABLE, details: "Stream refused by server" };
    case h2.NGHTTP2_CANCEL:
      return { code: GRPC_CODES.CANCELLED, details: "Call cancelled by the server" };
    case h2.NGHTTP2_ENHANCE_YOUR_CALM:
      return { code: GRPC_CODES.RESOURCE_EXHAUSTED, details: "Bandwidth exhausted or memory limit exceeded" };
    case h2.NGHTTP2_INADEQUATE_SECURITY:
      return { code: GRPC_CODES.PERMISSION_DENIED, details: "Protocol not secure enough" };
    case h2.NGHTTP2_NO_ERROR:
      return { code: GRPC_CODES.INTERNAL, details: `${details} (call ended without gRPC status)` };
    default:
      // PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, FRAME_SIZE_ERROR, COMPRESSION_ERROR, CONNECT_ERROR …
      return { code: GRPC_CODES.INTERNAL, details };
  }
}
