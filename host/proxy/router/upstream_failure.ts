import type { LocalReply } from "../../wasm/abi_types.ts";

/**
 * What a listener answers when its upstream fails before a response began
 * (issue 25 item 4), as Envoy's router does: a protocol error — a status
 * line Node's parser refuses or a status no final response has (`000`,
 * `099`, an unsolicited `101 Switching Protocols`), headers over the size
 * limit, malformed framing — is 502 (Envoy's UPE flag, always 502 since
 * `return_502_for_upstream_protocol_errors` was removed); a refused
 * connection or a reset before the headers is 503 ("upstream connect error
 * or disconnect/reset before headers"). After the headers began, the only
 * honest answer left is to reset the client's stream, as Envoy does.
 */

/** The code of errors the listener raises itself for a response it will not relay. */
export const UPSTREAM_PROTOCOL_ERROR = "ERR_UPSTREAM_PROTOCOL";

/** Envoy's default `max_response_headers_kb` (60 KiB); Node's own default is 16 KiB. */
export const UPSTREAM_MAX_HEADER_BYTES = 60 * 1024;

export function upstreamProtocolError(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: UPSTREAM_PROTOCOL_ERROR });
}

/** A status a final response may carry (RFC 9110 §15: three digits; 1xx are interim, never final). */
export function isFinalStatus(status: number | undefined): status is number {
  return status !== undefined && Number.isInteger(status) && status >= 200 && status <= 999;
}

export function isProtocolError(e: NodeJS.ErrnoException): boolean {
  const code = e.code ?? "";
  return code === UPSTREAM_PROTOCOL_ERROR || code.startsWith("HPE_");
}

/** The local reply for an upstream that failed before a response began. */
export function upstreamFailureReply(e: NodeJS.ErrnoException): LocalReply {
  return isProtocolError(e)
    ? {
        status: 502,
        details: "upstream_reset_before_response_started{protocol_error}",
        body: "upstream connect error or disconnect/reset before headers. reset reason: protocol error",
        headers: [],
        grpcStatus: -1,
      }
    : { status: 503, details: "upstream_connect_error", body: "upstream connect error or disconnect/reset before headers", headers: [], grpcStatus: -1 };
}
