import { Evaluation } from "../evaluate";
import { RequestView } from "../request";
import { CheckState, HttpStream } from "./http_stream";
import { Spares } from "../spares";

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
  private readonly evaluations: Spares<Evaluation> = new Spares<Evaluation>(MAX_SPARE);
  private readonly requests: Spares<RequestView> = new Spares<RequestView>(MAX_SPARE);

  /** A spare evaluation, or null (evaluateRequest then makes one). */
  evaluation(): Evaluation | null {
    return this.evaluations.take();
  }

  /** A spare request view, or null. */
  request(): RequestView | null {
    return this.requests.take();
  }

  /** Takes back the stream's objects when nothing can read them any more. */
  release(stream: HttpStream): void {
    if (stream.state == CheckState.Waiting) return;
    const e = stream.evaluation;
    if (e !== null) this.evaluations.give(e);
    const r = stream.request;
    if (r !== null) this.requests.give(r);
    stream.evaluation = null;
    stream.request = null;
  }
}
