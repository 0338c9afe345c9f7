// The hub's request and response messages on the wire: protobufjs types by
// name, and the Report path's two decoders (one pass for plainly well-formed
// requests, the general path for any other).
import { readPlainReport } from "../wire/report_request_reader.ts";
import type { AttributeSlots, ReportSlots } from "../wire/report_slots.ts";
import { readReportSlots } from "../wire/report_slots_reader.ts";
import type { GlobalDictionary } from "../wire/compressed.ts";
import { messageType } from "../wire/protos.ts";
import { GRPC_CODES } from "../wire/status_codes.ts";
import { blankInvalid, invalidStrings, reportInvalidity } from "../wire/utf8_strings.ts";
import { type CheckRequestMessage, checkGlobalWordCount } from "./check.ts";
import { decodeReport, type DecodedReport, type ReportRequestMessage } from "./report.ts";
import { RpcError } from "./rpc_error.ts";

const types = new Map<string, ReturnType<typeof messageType>>();
function typeOf(name: string): ReturnType<typeof messageType> {
  let t = types.get(name);
  if (t === undefined) types.set(name, (t = messageType(name)));
  return t;
}

function decodeMessage<T>(type: string, bytes: Buffer): T {
  let message: T;
  try {
    message = typeOf(type).decode(bytes) as unknown as T;
  } catch (e) {
    throw new RpcError(GRPC_CODES.INVALID_ARGUMENT, `malformed ${type.split(".").pop()}: ${(e as Error).message}`);
  }
  return message;
}

/** A message whose strings are not all valid UTF-8 is refused, as proto3 runtimes refuse it, naming the field. */
function checkStrings(type: string, bytes: Buffer): void {
  const bad = invalidStrings(typeOf(type), bytes);
  if (bad.length > 0) throw new RpcError(GRPC_CODES.INVALID_ARGUMENT, `malformed ${type.split(".").pop()}: ${bad[0].path} is not valid UTF-8`);
}

/**
 * A Report's bytes as the handler takes them: one bad entry does not cost
 * the others, only it is refused (logged and counted). A plainly well-formed
 * request (what clients send) is read in one pass; any other takes the
 * general path, which names what is wrong. With `wanted`, a plainly
 * well-formed request's maps hold only the attributes named there (what the
 * hub's configuration reads); the refusals are the same either way.
 */
export function decodeReportBytes(bytes: Buffer, dictionary: GlobalDictionary, wanted?: ReadonlySet<string>): DecodedReport {
  const plain = readPlainReport(bytes, dictionary, wanted);
  if (plain !== undefined) {
    checkGlobalWordCount(plain.globalWordCount, dictionary);
    return { entries: plain.entries, refused: [] };
  }
  return decodeReportGeneral(bytes, dictionary);
}

/**
 * A Report's bytes as the standard metrics alone read them (a hub without an
 * access log): the attributes of `slots` of a plainly well-formed request
 * whose entries are all taken, or undefined: take decodeReportBytes, which
 * refuses what is to be refused.
 */
export function decodeReportSlots(bytes: Buffer, dictionary: GlobalDictionary, slots: AttributeSlots): ReportSlots | undefined {
  const read = readReportSlots(bytes, dictionary, slots);
  if (read !== undefined) checkGlobalWordCount(read.globalWordCount, dictionary);
  return read;
}

/** The general path of decodeReportBytes: any bytes at all, every refusal worded (field paths, entries, default_words). */
export function decodeReportGeneral(bytes: Buffer, dictionary: GlobalDictionary): DecodedReport {
  const invalid = invalidStrings(typeOf("mesh.hub.v1.ReportRequest"), bytes);
  const request = decodeMessage<ReportRequestMessage>("mesh.hub.v1.ReportRequest", invalid.length > 0 ? blankInvalid(bytes, invalid) : bytes);
  return decodeReport(request, dictionary, reportInvalidity(invalid));
}

/** The general path of the Check handler's decoding: invalid UTF-8 refused naming the field, then protobufjs. */
export function decodeCheckGeneral(bytes: Buffer): CheckRequestMessage {
  checkStrings("mesh.hub.v1.CheckRequest", bytes);
  return decodeMessage<CheckRequestMessage>("mesh.hub.v1.CheckRequest", bytes);
}

export function encodeMessage(type: string, value: object): Buffer {
  const bytes = typeOf(type).encode(value).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
