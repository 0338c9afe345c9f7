import type { ServerResponse } from "node:http";

/** What a relay holds its upstream by: a response it can stop reading and read again. */
export interface PausableResponse {
  pause(): void;
  resume(): void;
}

/**
 * Streams the upstream's response body to the client, counting its bytes,
 * as `up.pipe(res)` did with a counting listener beside it, at a fraction of
 * the listeners pipe() adds and removes on every response: the upstream is
 * paused while the client's buffer is full, until it drains or the client
 * left (then the rest is read and dropped, so the upstream connection goes
 * back to its pool). `ended` once the body is over (the client's response
 * ended first), `failed` when the upstream's response broke off. The
 * upstream's events are handed in (data, end, error), whatever client
 * produced them.
 */
export class ResponseRelay {
  private bytes = 0;
  private waiting = false;
  private watchingClose = false;

  constructor(
    private readonly up: PausableResponse,
    private readonly res: ServerResponse,
    private readonly ended: (responseBytes: number) => void,
    private readonly failed: (e: Error, responseBytes: number) => void,
  ) {}

  data(chunk: Buffer): void {
    this.bytes += chunk.length;
    const res = this.res;
    if (res.write(chunk) || res.destroyed || this.waiting) return;
    this.waiting = true;
    this.up.pause();
    res.once("drain", this.resume);
    if (!this.watchingClose) {
      this.watchingClose = true;
      res.once("close", this.resume);
    }
  }

  end(): void {
    const res = this.res;
    if (!res.writableEnded && !res.destroyed) res.end();
    this.ended(this.bytes);
  }

  error(e: Error): void {
    this.failed(e, this.bytes);
  }

  private readonly resume = (): void => {
    if (!this.waiting) return;
    this.waiting = false;
    this.up.resume();
  };
}
