import { Evaluation } from "../evaluate";
import { RequestView } from "../request";
import { CheckState, HttpStream } from "./http_stream";

// Spare objects beyond this many are left to the collector: enough for the
// streams a proxy worker has in flight at once.
const MAX_SPARE: i32 = 64;

/**
 * The evaluations and request views of finished streams, handed to the next
 * requests: an evaluation's bag and lists keep their storage, so a request
 * refills them instead of allocating new ones.
 *
 * A stream gives its objects back at log time, once its report holds a copy
 * of the bag, and only if no hub answer can still arrive for it (a check in
 * flight reads the evaluation when it is answered). A quota prefetch keeps
 * its own copy of the bag (QuotaCache.check), so it never holds these.
 */
export class StreamPool {
  private evaluations: Array<Evaluation> = [];
  private requests: Array<RequestView> = [];

  /** A spare evaluation, or null (evaluateRequest then makes one). */
  evaluation(): Evaluation | null {
    return this.evaluations.length > 0 ? this.evaluations.pop() : null;
  }

  /** A spare request view, or null. */
  request(): RequestView | null {
    return this.requests.length > 0 ? this.requests.pop() : null;
  }

  /** Takes back the stream's objects when nothing can read them any more. */
  release(stream: HttpStream): void {
    if (stream.state == CheckState.Waiting) return;
    const e = stream.evaluation;
    if (e !== null && this.evaluations.length < MAX_SPARE) this.evaluations.push(e);
    const r = stream.request;
    if (r !== null && this.requests.length < MAX_SPARE) this.requests.push(r);
    stream.evaluation = null;
    stream.request = null;
  }
}
