import { ProtoReader } from "../proto/reader";
import { StatusCode } from "../status_codes";
import { readMessage, readString, readVarint, skipField } from "./wire_read";

/** A google.rpc.Status without its details (the filter has no use for them). */
export class RpcStatus {
  code: i32 = StatusCode.OK;
  message: string = "";
}

/** Reads the google.rpc.Status {code = 1, message = 2} in `parent`'s current field; sets `parent.failed` when malformed. */
export function readRpcStatus(parent: ProtoReader, into: RpcStatus): void {
  const r = readMessage(parent);
  while (r.next()) {
    if (r.field == 1) into.code = <i32>readVarint(r);
    else if (r.field == 2) into.message = readString(r);
    else skipField(r);
  }
  if (r.failed) parent.failed = true;
}
