// One request stream of an HTTP/2 client session (client_session.ts): what
// its owner hears, and the per-stream state the session keeps (send data
// waiting for flow-control window, the receive window, where the response is).

import { ReceiveWindow } from "./flow_control.ts";

/** How a stream ended, told once. */
export type StreamEnd =
  /** The peer ended the response (END_STREAM). */
  | { kind: "ended" }
  /** Reset: by the peer (RST_STREAM), or refused by GOAWAY (REFUSED_STREAM: not processed), or by this side on a stream error. */
  | { kind: "reset"; code: number }
  /** The connection closed or failed before the response ended; `connected`: it had been established. */
  | { kind: "dropped"; error: Error | undefined; connected: boolean };

/** Response header fields as an object: names lower case, a name received several times as an array. */
export type ResponseHeaders = Record<string, string | string[]>;

export interface StreamHandlers {
  /** A header block: the response headers (the first non-informational one) or the trailers; `endStream` when the response ends with it. */
  onHeaders(headers: ResponseHeaders, endStream: boolean): void;
  /** Response body bytes (padding removed); the buffer is the caller's to keep. */
  onData(chunk: Buffer): void;
  /** Called once, last; nothing follows. */
  onEnd(end: StreamEnd): void;
}

export class ClientStream {
  /** 0 until the stream is opened (it may wait for the peer's concurrency limit). */
  id = 0;
  /** Body bytes not yet sent for lack of window; sent from `sendOffset`. */
  body: Buffer;
  sendOffset = 0;
  sendWindow = 0;
  /** This side sent END_STREAM. */
  localEnded = false;
  readonly recvWindow = new ReceiveWindow();
  /** Non-informational header blocks received: 0 before the response headers, 1 after. */
  headerBlocks = 0;
  /** The stream is over (ended, reset or dropped); no handler is called any more. */
  finished = false;

  constructor(
    readonly headerBlock: Buffer,
    body: Buffer,
    readonly handlers: StreamHandlers,
    /** Removes this stream from its session and resets it on the wire. */
    private readonly reset: (stream: ClientStream, code: number) => void,
  ) {
    this.body = body;
  }

  /** Stops the stream (RST_STREAM `code`, CANCEL by default); `onEnd` is not called. */
  cancel(code = 0x8): void {
    if (this.finished) return;
    this.finished = true;
    this.reset(this, code);
  }

  /** Ends the stream and tells the owner, once. */
  end(end: StreamEnd): void {
    if (this.finished) return;
    this.finished = true;
    this.handlers.onEnd(end);
  }
}

/** Header fields as a ResponseHeaders object. */
export function headersObject(fields: ReadonlyArray<readonly [string, string]>): ResponseHeaders {
  const headers: ResponseHeaders = Object.create(null);
  for (const [name, value] of fields) {
    const earlier = headers[name];
    if (earlier === undefined) headers[name] = value;
    else if (Array.isArray(earlier)) earlier.push(value);
    else headers[name] = [earlier, value];
  }
  return headers;
}
