import type { ServerResponse } from "node:http";
import { type WholeHead, sendWhole } from "../http/whole_response.ts";

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
 *
 * With a `held` head (http/whole_response.ts), nothing is written until the
 * end of the current turn (a microtask): a body whose end came in the same
 * read as its head (most small responses) goes out with the head in one
 * write; otherwise the head and what came so far are written then, and the
 * rest streams as without it.
 */
export class ResponseRelay {
  private bytes = 0;
  private waiting = false;
  private watchingClose = false;
  /** The head not written yet, and the body parts that came since. */
  private held: WholeHead | undefined;
  private parts: Buffer[] | undefined;

  constructor(
    private readonly up: PausableResponse,
    private readonly res: ServerResponse,
    private readonly ended: (responseBytes: number) => void,
    private readonly failed: (e: Error, responseBytes: number) => void,
    held?: WholeHead,
  ) {
    if (held) {
      this.held = held;
      this.parts = [];
      queueMicrotask(this.release);
    }
  }

  data(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.held) return void this.parts!.push(chunk);
    this.write(chunk);
  }

  end(): void {
    const res = this.res;
    const held = this.held;
    if (held) {
      this.held = undefined;
      if (!res.headersSent && !res.destroyed) sendWhole(res, held, this.parts!);
      this.parts = undefined;
    } else if (!res.writableEnded && !res.destroyed) res.end();
    this.ended(this.bytes);
  }

  error(e: Error): void {
    // The client sees the head (and what came of the body) before its stream is reset, as without holding.
    this.release();
    this.failed(e, this.bytes);
  }

  private write(chunk: Buffer): void {
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

  /** The held head and parts written through node:http (the body is still coming). */
  private readonly release = (): void => {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    const parts = this.parts!;
    this.parts = undefined;
    const res = this.res;
    // Answered meanwhile (the safety net's 500) or reset: nothing of this response goes out.
    if (res.headersSent || res.destroyed) return;
    res.writeHead(held.status, held.rawHeaders);
    for (const part of parts) this.write(part);
  };

  private readonly resume = (): void => {
    if (!this.waiting) return;
    this.waiting = false;
    this.up.resume();
  };
}
