import { ProtoReader } from "../proto/reader";
import { readMessage, readString, readVarint, skipField } from "./wire_read";

/** HeaderOperation.Operation. */
export const enum HeaderOperationKind {
  REPLACE = 0,
  REMOVE = 1,
  APPEND = 2,
}

export class HeaderOperation {
  /** Lower-case; `:path`, `:authority` and `:method` are allowed. */
  name: string = "";
  value: string = "";
  /** A HeaderOperationKind; other numbers are passed through (open enum). */
  operation: i32 = HeaderOperationKind.REPLACE;
}

/** What the hub asks the proxy to do to the request and its response. */
export class RouteDirective {
  requestHeaderOps: Array<HeaderOperation> = [];
  responseHeaderOps: Array<HeaderOperation> = [];
  /** 0 for none; otherwise the status of a direct (local) response. */
  directResponseCode: u32 = 0;
  directResponseBody: string = "";
}

/** Reads the mesh.hub.v1.RouteDirective in `parent`'s current field; sets `parent.failed` when malformed. */
export function readRouteDirective(parent: ProtoReader): RouteDirective {
  const r = readMessage(parent);
  const d = new RouteDirective();
  while (r.next()) {
    switch (r.field) {
      case 1:
        d.requestHeaderOps.push(readOperation(r));
        break;
      case 2:
        d.responseHeaderOps.push(readOperation(r));
        break;
      case 3:
        d.directResponseCode = <u32>readVarint(r);
        break;
      case 4:
        d.directResponseBody = readString(r);
        break;
      default:
        skipField(r);
    }
  }
  if (r.failed) parent.failed = true;
  return d;
}

function readOperation(parent: ProtoReader): HeaderOperation {
  const op = new HeaderOperation();
  const r = readMessage(parent);
  while (r.next()) {
    if (r.field == 1) op.name = readString(r);
    else if (r.field == 2) op.value = readString(r);
    else if (r.field == 3) op.operation = <i32>readVarint(r);
    else skipField(r);
  }
  if (r.failed) parent.failed = true;
  return op;
}
