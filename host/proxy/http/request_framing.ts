import type { OutgoingHttpHeaders } from "node:http";

/**
 * How a request's body is delimited (RFC 9112 §6), read once from its head,
 * and how the listener frames it again upstream (issue 25 item 1).
 *
 * The body a listener forwards is the one Node's parser delimited, the one
 * every policy stage saw; it reaches the upstream framed by the listener
 * itself, never by whatever headers survived the trip: a Content-Length
 * for a length-delimited body, `Transfer-Encoding: chunked` for a chunked
 * one, and neither for a request without a body (Content-Length: 0 where a
 * method expects a body), as Envoy's HTTP/1 codec writes them. A framing
 * header is never dropped because `Connection` names it.
 *
 * Refused, as Envoy refuses them (codec_impl.cc, onHeadersCompleteImpl):
 * Transfer-Encoding together with Content-Length (400, RFC 9112 §6.3 ¶3),
 * a Transfer-Encoding other than `chunked` (501) or on CONNECT (501), and,
 * as RFC 9112 §6.1 asks, Transfer-Encoding in an HTTP/1.0 request (400).
 * Node's parser already refuses repeated or malformed Content-Length values;
 * they are refused here too, so the rule does not rest on it alone.
 */
export type RequestFraming =
  | { readonly kind: "none" }
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" }
  | { readonly kind: "refused"; readonly status: 400 | 501; readonly details: FramingRefusal };

/** Envoy's response code details for the same refusals (http1.*). */
export type FramingRefusal =
  | "http1.content_length_and_chunked_not_allowed"
  | "http1.invalid_transfer_encoding"
  | "http1.transfer_encoding_not_allowed"
  | "http1.invalid_content_length";

export const NO_BODY: RequestFraming = Object.freeze({ kind: "none" });
const CHUNKED: RequestFraming = Object.freeze({ kind: "chunked" });
const DIGITS = /^[0-9]+$/;

/**
 * The framing of a request from its Transfer-Encoding and Content-Length
 * values (every field of each name, in order; undefined when absent).
 */
export function requestFraming(
  method: string,
  httpVersion: string,
  transferEncoding: readonly string[] | undefined,
  contentLength: readonly string[] | undefined,
): RequestFraming {
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) return refused(400, "http1.content_length_and_chunked_not_allowed");
    if (httpVersion === "1.0") return refused(400, "http1.transfer_encoding_not_allowed");
    if (method === "CONNECT" || transferEncoding.length !== 1 || transferEncoding[0].trim().toLowerCase() !== "chunked")
      return refused(501, "http1.invalid_transfer_encoding");
    return CHUNKED;
  }
  if (contentLength === undefined) return NO_BODY;
  const value = contentLength.length === 1 ? contentLength[0].trim() : "";
  if (!DIGITS.test(value)) return refused(400, "http1.invalid_content_length");
  const length = Number(value);
  if (!Number.isSafeInteger(length)) return refused(400, "http1.invalid_content_length");
  return { kind: "length", length };
}

function refused(status: 400 | 501, details: FramingRefusal): RequestFraming {
  return { kind: "refused", status, details };
}

/** A body follows the head. */
export function hasBody(framing: RequestFraming): boolean {
  return framing.kind === "chunked" || (framing.kind === "length" && framing.length > 0);
}

// Methods whose requests carry no body as a rule: without one, no
// Content-Length: 0 is written for them (Envoy's `bodiless_request`; Node
// sends them unframed too).
const BODILESS_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "CONNECT"]);

/** The one framing field a forwarded request carries, or none. */
export function framingField(method: string, framing: RequestFraming): readonly [string, string] | undefined {
  if (framing.kind === "chunked") return ["transfer-encoding", "chunked"];
  if (framing.kind === "length") return ["content-length", String(framing.length)];
  return BODILESS_METHODS.has(method) ? undefined : ["content-length", "0"];
}

/** Content-Length or Transfer-Encoding, in any case. */
export const isFramingName = (name: string) => {
  const lower = name.length === 14 || name.length === 17 ? name.toLowerCase() : "";
  return lower === "content-length" || lower === "transfer-encoding";
};

/** A header object (lower-case names) with its framing fields replaced by the request's own, in place. */
export function frameObject(headers: OutgoingHttpHeaders, method: string, framing: RequestFraming): OutgoingHttpHeaders {
  for (const name of Object.keys(headers)) if (isFramingName(name)) delete headers[name];
  const field = framingField(method, framing);
  if (field) headers[field[0]] = field[1];
  return headers;
}
