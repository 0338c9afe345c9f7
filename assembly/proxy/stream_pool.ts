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
  private evaluations: Spares<Evaluation> = new Spares<Evaluation>(MAX_SPARE);
  private requests: Spares<RequestView> = new Spares<RequestView>(MAX_SPARE);

  /** A spare evaluation, or null (evaluateRequest then makes one). */
  // @ts-ignore: decorator
  @inline evaluation(): Evaluation | null {
    return this.evaluations.take();
  }

  /** A spare request view, or null. */
  // @ts-ignore: decorator
  @inline request(): RequestView | null {
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

/**
 * At most `capacity` spare objects, the last given back taken first. Taking
 * and giving back are a few loads and stores, inlined (Array's pop and push
 * are calls, which an interpreter such as WAMR makes dear); one beyond the
 * capacity is left to the collector.
 */
export class Spares<T> {
  private readonly items: StaticArray<T>;
  private count: i32 = 0;

  constructor(capacity: i32) {
    this.items = new StaticArray<T>(capacity);
  }

  /** The last object given back, or null. */
  // @ts-ignore: decorator
  @inline take(): T | null {
    const n = this.count - 1;
    if (n < 0) return null;
    this.count = n;
    const items = this.items;
    const item = unchecked(items[n]);
    // The slot lets go of it: a taken object that never comes back is the collector's.
    unchecked((items[n] = changetype<T>(0)));
    return item;
  }

  // @ts-ignore: decorator
  @inline give(item: T): void {
    const n = this.count;
    const items = this.items;
    if (n >= items.length) return;
    unchecked((items[n] = item));
    this.count = n + 1;
  }
}
