import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Streams the upstream's response body to the client, counting its bytes,
 * as `up.pipe(res)` did with a counting listener beside it, at a fraction of
 * the listeners pipe() adds and removes on every response: the upstream is
 * paused while the client's buffer is full, until it drains or the client
 * left (then the rest is read and dropped, so the upstream connection goes
 * back to its pool). `ended` once the body is over (the client's response
 * ended first), `failed` when the upstream's response broke off.
 */
export function relayBody(
  up: IncomingMessage,
  res: ServerResponse,
  ended: (responseBytes: number) => void,
  failed: (e: Error, responseBytes: number) => void,
): void {
  let bytes = 0;
  let waiting = false;
  let watchingClose = false;
  const resume = () => {
    if (!waiting) return;
    waiting = false;
    up.resume();
  };
  up.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    if (res.write(chunk) || res.destroyed || waiting) return;
    waiting = true;
    up.pause();
    res.once("drain", resume);
    if (!watchingClose) {
      watchingClose = true;
      res.once("close", resume);
    }
  });
  up.on("end", () => {
    if (!res.writableEnded && !res.destroyed) res.end();
    ended(bytes);
  });
  up.on("error", (e) => failed(e, bytes));
}
