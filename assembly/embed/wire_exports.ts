// Exports of the hub wire codec (assembly/hub) for hosts that call the module
// directly: the wire tests round-trip them against protobufjs, and a host can
// use them to speak to the hub exactly as the filter does.
//
// Errors are values: a malformed argument yields an empty buffer (no valid
// request encodes to zero bytes, as `attributes` is always present) or the
// JSON text `null`, never a trap.
import { AttributeBag } from "../attributes/bag";
import { decodeAttributes } from "../proto/attributes_codec";
import { JsonKind, JsonValue, parseJson } from "../json";
import { QuotaCharge } from "../quota";
import { encodeCheckRequest } from "../hub/check_request";
import { CheckResponse, decodeCheckResponse } from "../hub/check_response";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { ReferencedAttributes } from "../hub/referenced_attributes";
import { encodeReportRequest } from "../hub/report_request";
import { HeaderOperation, RouteDirective } from "../hub/route_directive";
import { RpcStatus } from "../hub/status";
import { statusCodeName } from "../status_codes";

/**
 * A mesh.hub.v1.CheckRequest for a mesh.hub.v1.Attributes message, with every
 * global word known to the hub. `quotasJson` is `[{"quota":"q","charge":2}]`
 * (a charge may also be a decimal string, for int64). Empty when an argument
 * is malformed.
 */
export function wire_encode_check(attributesProto: ArrayBuffer, dedupId: string, quotasJson: string, bestEffort: bool): ArrayBuffer {
  const bag = decodeAttributes(Uint8Array.wrap(attributesProto));
  const quotas = parseQuotas(quotasJson);
  if (bag === null || quotas === null) return new ArrayBuffer(0);
  return encodeCheckRequest(bag, GLOBAL_WORD_COUNT, dedupId, quotas, bestEffort).buffer;
}

/**
 * A mesh.hub.v1.ReportRequest for a batch of mesh.hub.v1.Attributes messages,
 * concatenated, each after its length as a little-endian u32. Empty when a
 * message or a length is malformed.
 */
export function wire_encode_report(attributesProtos: ArrayBuffer): ArrayBuffer {
  const all = Uint8Array.wrap(attributesProtos);
  const bags = new Array<AttributeBag>();
  let pos = 0;
  const end = all.length;
  while (pos < end) {
    if (end - pos < 4) return new ArrayBuffer(0);
    const n = load<u32>(all.dataStart + <usize>pos);
    pos += 4;
    if (<u64>n > <u64>(end - pos)) return new ArrayBuffer(0);
    const bag = decodeAttributes(all.subarray(pos, pos + <i32>n));
    if (bag === null) return new ArrayBuffer(0);
    bags.push(bag);
    pos += <i32>n;
  }
  return encodeReportRequest(bags, GLOBAL_WORD_COUNT).buffer;
}

/**
 * The decoded mesh.hub.v1.CheckResponse as JSON text, `null` when malformed.
 * int64 numbers are decimal strings (as in proto3 JSON); a status carries its
 * code's name beside the number:
 *   {"hasPrecondition":true,"precondition":{"statusCode":7,"statusName":"PERMISSION_DENIED",
 *    "statusMessage":"","validDurationNanos":"-1","validUseCount":0,
 *    "referenced":{"valid":true,"matches":[]},"routeDirective":null},"quotas":[]}
 */
export function wire_decode_check_response(buf: ArrayBuffer): string {
  const res = decodeCheckResponse(Uint8Array.wrap(buf));
  if (res === null) return "null";
  const out = new JsonText();
  writeResponse(out, res as CheckResponse);
  return out.toString();
}

function parseQuotas(text: string): Array<QuotaCharge> | null {
  const parsed = parseJson(text);
  const root = parsed.value;
  if (root === null || root.kind != JsonKind.Array) return null;
  const quotas = new Array<QuotaCharge>();
  const items = root.items;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item.kind != JsonKind.Object) return null;
    const name = item.get("quota");
    const charge = item.get("charge");
    if (name === null || name.kind != JsonKind.String || charge === null) return null;
    const digits = charge.kind == JsonKind.Number ? charge.numberText : charge.kind == JsonKind.String ? charge.str : "";
    if (!isInteger(digits)) return null;
    quotas.push(new QuotaCharge(name.str, I64.parseInt(digits)));
  }
  return quotas;
}

// I64.parseInt reads a prefix ("1.5" -> 1); a charge must be all digits.
function isInteger(s: string): bool {
  const start = s.length > 0 && s.charCodeAt(0) == 0x2d ? 1 : 0;
  if (s.length <= start) return false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function writeResponse(out: JsonText, res: CheckResponse): void {
  const p = res.precondition;
  out.raw('{"hasPrecondition":').bool(res.hasPrecondition);
  out.raw(',"precondition":{');
  writeStatus(out, p.status);
  out.raw(',"validDurationNanos":').int64(p.validDurationNanos);
  out.raw(',"validUseCount":').int(p.validUseCount);
  out.raw(',"referenced":');
  writeReferenced(out, p.referenced);
  out.raw(',"routeDirective":');
  const d = p.routeDirective;
  if (d === null) out.raw("null");
  else writeDirective(out, d as RouteDirective);
  out.raw('},"quotas":[');
  for (let i = 0; i < res.quotas.length; i++) {
    const q = res.quotas[i];
    if (i > 0) out.raw(",");
    out.raw('{"name":').str(q.name);
    out.raw(',"grantedAmount":').int64(q.grantedAmount);
    out.raw(',"validDurationNanos":').int64(q.validDurationNanos);
    out.raw(",");
    writeStatus(out, q.status);
    out.raw(',"referenced":');
    writeReferenced(out, q.referenced);
    out.raw("}");
  }
  out.raw("]}");
}

function writeStatus(out: JsonText, s: RpcStatus): void {
  out.raw('"statusCode":').int(s.code);
  out.raw(',"statusName":').str(statusCodeName(s.code));
  out.raw(',"statusMessage":').str(s.message);
}

function writeReferenced(out: JsonText, ref: ReferencedAttributes): void {
  out.raw('{"valid":').bool(ref.valid);
  out.raw(',"matches":[');
  for (let i = 0; i < ref.matches.length; i++) {
    const m = ref.matches[i];
    if (i > 0) out.raw(",");
    out.raw('{"name":').str(m.name);
    out.raw(',"condition":').int(m.condition);
    out.raw(',"mapKey":');
    const key = m.mapKey;
    if (key === null) out.raw("null");
    else out.str(key as string);
    out.raw(',"regex":').str(m.regex);
    out.raw("}");
  }
  out.raw("]}");
}

function writeDirective(out: JsonText, d: RouteDirective): void {
  out.raw('{"requestHeaderOps":');
  writeOperations(out, d.requestHeaderOps);
  out.raw(',"responseHeaderOps":');
  writeOperations(out, d.responseHeaderOps);
  out.raw(',"directResponseCode":').int64(<i64>d.directResponseCode, false);
  out.raw(',"directResponseBody":').str(d.directResponseBody);
  out.raw("}");
}

function writeOperations(out: JsonText, ops: Array<HeaderOperation>): void {
  out.raw("[");
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (i > 0) out.raw(",");
    out.raw('{"name":').str(op.name);
    out.raw(',"value":').str(op.value);
    out.raw(',"operation":').int(op.operation);
    out.raw("}");
  }
  out.raw("]");
}

const HEX = "0123456789abcdef";

/** A JSON text built from parts, joined once at the end. */
class JsonText {
  private parts: Array<string> = [];

  raw(s: string): JsonText {
    this.parts.push(s);
    return this;
  }

  bool(b: bool): JsonText {
    return this.raw(b ? "true" : "false");
  }

  int(n: i32): JsonText {
    return this.raw(n.toString());
  }

  /** int64 as a decimal string (JSON numbers lose precision past 2^53) unless `quoted` is false. */
  int64(n: i64, quoted: bool = true): JsonText {
    return quoted ? this.raw('"' + n.toString() + '"') : this.raw(n.toString());
  }

  /** A string literal: quote, backslash and control characters escaped (RFC 8259 §7). */
  str(s: string): JsonText {
    let escaped = '"';
    let from = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
      escaped += s.substring(from, i);
      from = i + 1;
      if (c == 0x22) escaped += '\\"';
      else if (c == 0x5c) escaped += "\\\\";
      else if (c == 0x0a) escaped += "\\n";
      else if (c == 0x0d) escaped += "\\r";
      else if (c == 0x09) escaped += "\\t";
      else escaped += "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
    }
    escaped += s.substring(from) + '"';
    return this.raw(escaped);
  }

  toString(): string {
    return this.parts.join("");
  }
}
