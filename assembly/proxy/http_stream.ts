import { CheckOutcome } from "../attributes/report";
import { Evaluation } from "../evaluate";
import { HeaderOperation } from "../hub/route_directive";
import { RequestView } from "../request";

/** Where a stream is in the check. */
export const enum CheckState {
  NotStarted,
  /** Paused, waiting for the hub's answer. */
  Waiting,
  Done,
}

/** Per-request state of the filter, from request headers to log. */
export class HttpStream {
  request: RequestView | null = null;
  evaluation: Evaluation | null = null;
  state: CheckState = CheckState.NotStarted;
  outcome: CheckOutcome = new CheckOutcome();
  /** Response header operations of the hub's route directive, applied on response headers. */
  responseHeaderOps: Array<HeaderOperation> | null = null;
  startNanos: i64 = 0;
  /** The filter answered this request itself (denial, direct response). */
  repliedLocally: bool = false;
  /** The request's headers ended it (end_of_stream): it had no body. */
  requestBodyless: bool = false;
  /** The response's headers ended it: it had no body. */
  responseBodyless: bool = false;
  /** The response had trailers (the host called proxy_on_response_trailers). */
  responseTrailers: bool = false;

  constructor(
    public id: u32,
    public rootId: u32,
  ) {}

  /** Back to a fresh stream `id` under `rootId` (contexts.ts reuses deleted streams). */
  reuse(id: u32, rootId: u32): void {
    this.id = id;
    this.rootId = rootId;
    this.request = null;
    this.evaluation = null;
    this.state = CheckState.NotStarted;
    const outcome = this.outcome;
    outcome.known = false;
    outcome.code = 0;
    outcome.message = "";
    outcome.checkCacheHit = false;
    outcome.quotaCacheHit = false;
    this.responseHeaderOps = null;
    this.startNanos = 0;
    this.repliedLocally = false;
    this.requestBodyless = false;
    this.responseBodyless = false;
    this.responseTrailers = false;
  }
}
