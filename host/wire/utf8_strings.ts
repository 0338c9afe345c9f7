// proto3 requires every `string` field to hold valid UTF-8; protobuf runtimes
// refuse a message that breaks the rule (protobufjs too: its decode throws
// "The encoded data was not valid for encoding utf-8", naming nothing). The
// hub finds the offending fields in the raw bytes itself, against the
// message's schema, so it can name them and refuse no more than it must.

import { isUtf8 } from "node:buffer";
import protobuf from "protobufjs";

const WIRE_LEN = 2;

/** A string field that is not valid UTF-8: its path and its bytes' range in the message. */
export interface InvalidString {
  path: string;
  start: number;
  end: number;
}

/** Every string field of `bytes` (a `type` message) that is not valid UTF-8, e.g. `attributes.words[2]`. */
export function invalidStrings(type: protobuf.Type, bytes: Uint8Array): InvalidString[] {
  const out: InvalidString[] = [];
  try {
    walk(type, bytes, 0, bytes.length, "", out);
  } catch {
    // malformed framing: left to the decoder
  }
  return out;
}

function walk(type: protobuf.Type, bytes: Uint8Array, from: number, to: number, path: string, out: InvalidString[]): void {
  const reader = protobuf.Reader.create(bytes.subarray(0, to));
  reader.pos = from;
  const counts = new Map<number, number>();
  while (reader.pos < to) {
    const tag = reader.uint32();
    const id = tag >>> 3;
    const wire = tag & 7;
    const field = type.fieldsById[id];
    if (!field || wire !== WIRE_LEN) {
      reader.skipType(wire);
      continue;
    }
    const length = reader.uint32();
    const start = reader.pos;
    reader.pos += length;
    if (reader.pos > to) throw new RangeError("truncated");
    const n = counts.get(id) ?? 0;
    counts.set(id, n + 1);
    const here = `${path}${path ? "." : ""}${field.name}${field.repeated || field.map ? `[${n}]` : ""}`;
    field.resolve();
    if (field.map) mapEntry(field as unknown as protobuf.MapField, bytes, start, reader.pos, here, out);
    else value(field.type, field.resolvedType, bytes, start, reader.pos, here, out);
  }
}

function value(typeName: string, resolved: protobuf.ReflectionObject | null, bytes: Uint8Array, start: number, end: number, path: string, out: InvalidString[]): void {
  if (typeName === "string") {
    if (!isUtf8(bytes.subarray(start, end))) out.push({ path, start, end });
  } else if (resolved instanceof protobuf.Type) {
    walk(resolved, bytes, start, end, path, out);
  }
}

// A map entry is a message: key = 1 (keyType), value = 2 (type).
function mapEntry(field: protobuf.MapField, bytes: Uint8Array, from: number, to: number, path: string, out: InvalidString[]): void {
  const reader = protobuf.Reader.create(bytes.subarray(0, to));
  reader.pos = from;
  while (reader.pos < to) {
    const tag = reader.uint32();
    const wire = tag & 7;
    if (wire !== WIRE_LEN) {
      reader.skipType(wire);
      continue;
    }
    const length = reader.uint32();
    const start = reader.pos;
    reader.pos += length;
    if ((tag >>> 3) === 1) value(field.keyType, null, bytes, start, reader.pos, `${path}.key`, out);
    else value(field.type, field.resolvedType, bytes, start, reader.pos, `${path}.value`, out);
  }
}

/** A copy of `bytes` whose invalid strings are overwritten with `?` (same lengths, so the framing holds). */
export function blankInvalid(bytes: Uint8Array, invalid: readonly InvalidString[]): Buffer {
  const copy = Buffer.from(bytes);
  for (const s of invalid) copy.fill(0x3f, s.start, s.end);
  return copy;
}

/**
 * For a ReportRequest's invalid strings: which entries (`attributes[i]`)
 * carry them and which `default_words` they are — so the hub refuses just
 * the entries concerned instead of the whole batch.
 */
export function reportInvalidity(invalid: readonly InvalidString[]): { entries: Map<number, string>; defaultWords: Set<number> } {
  const entries = new Map<number, string>();
  const defaultWords = new Set<number>();
  for (const s of invalid) {
    const entry = /^attributes\[(\d+)\]\.(.*)$/.exec(s.path);
    if (entry) {
      if (!entries.has(Number(entry[1]))) entries.set(Number(entry[1]), entry[2]);
      continue;
    }
    const word = /^defaultWords\[(\d+)\]$/.exec(s.path);
    if (word) defaultWords.add(Number(word[1]));
  }
  return { entries, defaultWords };
}
