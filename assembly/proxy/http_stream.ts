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

  constructor(
    public readonly id: u32,
    public readonly rootId: u32,
  ) {}
}
