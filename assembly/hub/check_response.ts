import { ProtoReader } from "../proto/reader";
import { ReferencedAttributes, readReferencedAttributes } from "./referenced_attributes";
import { RouteDirective, readRouteDirective } from "./route_directive";
import { RpcStatus, readRpcStatus } from "./status";
import { readDurationNanos, readMessage, readString, readVarint, skipField } from "./wire_read";

/** The answer to the policy check (mesh.hub.v1.PreconditionResult). */
export class PreconditionResult {
  /** An absent status means OK. */
  status: RpcStatus = new RpcStatus();
  /** How long the answer may be cached; -1 when absent (no time limit, hub-client.md §6.1). */
  validDurationNanos: i64 = -1;
  /** Cache hits allowed; 0 (also when absent) means not cacheable, negative unlimited. */
  validUseCount: i32 = 0;
  referenced: ReferencedAttributes = new ReferencedAttributes();
  /** Null when the hub sent none. */
  routeDirective: RouteDirective | null = null;
}

/** The answer for one requested quota (mesh.hub.v1.QuotaResult). */
export class QuotaResult {
  name: string = "";
  grantedAmount: i64 = 0;
  /** -1 when absent. */
  validDurationNanos: i64 = -1;
  status: RpcStatus = new RpcStatus();
  referenced: ReferencedAttributes = new ReferencedAttributes();
}

export class CheckResponse {
  /** False when the hub sent no PreconditionResult (upstream: INVALID_ARGUMENT, nothing cached). */
  hasPrecondition: bool = false;
  precondition: PreconditionResult = new PreconditionResult();
  /** In wire order; a name sent twice keeps the later result, as for any protobuf map. */
  quotas: Array<QuotaResult> = [];
}

/**
 * Decodes a mesh.hub.v1.CheckResponse; null when the bytes are malformed
 * (truncated, a wrong wire type for a known field, a length past the end).
 * Never traps: the bytes come from the network.
 *
 *   const res = decodeCheckResponse(bytes);
 *   if (res !== null && res.hasPrecondition) res.precondition.status.code;
 */
export function decodeCheckResponse(buf: Uint8Array): CheckResponse | null {
  const res = new CheckResponse();
  const r = new ProtoReader(buf);
  while (r.next()) {
    if (r.field == 2) {
      res.hasPrecondition = true;
      // Repeated occurrences of a message field merge; reading into the same
      // object does the same for the scalar fields.
      readPrecondition(r, res.precondition);
    } else if (r.field == 3) readQuotaEntry(r, res.quotas);
    else skipField(r);
  }
  return r.failed ? null : res;
}

function readPrecondition(parent: ProtoReader, into: PreconditionResult): void {
  const r = readMessage(parent);
  while (r.next()) {
    switch (r.field) {
      case 1:
        readRpcStatus(r, into.status);
        break;
      case 2:
        into.validDurationNanos = readDurationNanos(r);
        break;
      case 3:
        into.validUseCount = <i32>readVarint(r);
        break;
      case 5:
        readReferencedAttributes(r, into.referenced);
        break;
      case 6:
        into.routeDirective = readRouteDirective(r);
        break;
      default:
        skipField(r);
    }
  }
  if (r.failed) parent.failed = true;
}

// A map<string, QuotaResult> entry: {key = 1, value = 2}; a missing value is
// the default QuotaResult, as protobuf maps define.
function readQuotaEntry(parent: ProtoReader, quotas: Array<QuotaResult>): void {
  const r = readMessage(parent);
  const q = new QuotaResult();
  while (r.next()) {
    if (r.field == 1) q.name = readString(r);
    else if (r.field == 2) readQuotaResult(r, q);
    else skipField(r);
  }
  if (r.failed) {
    parent.failed = true;
    return;
  }
  for (let i = 0, n = quotas.length; i < n; i++) {
    if (unchecked(quotas[i]).name == q.name) {
      unchecked((quotas[i] = q));
      return;
    }
  }
  quotas.push(q);
}

function readQuotaResult(parent: ProtoReader, into: QuotaResult): void {
  const r = readMessage(parent);
  while (r.next()) {
    switch (r.field) {
      case 1:
        into.validDurationNanos = readDurationNanos(r);
        break;
      case 2:
        into.grantedAmount = <i64>readVarint(r);
        break;
      case 5:
        readReferencedAttributes(r, into.referenced);
        break;
      case 6:
        readRpcStatus(r, into.status);
        break;
      default:
        skipField(r);
    }
  }
  if (r.failed) parent.failed = true;
}
