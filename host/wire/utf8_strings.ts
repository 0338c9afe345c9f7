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

/** Whether bytes[start, end) are valid UTF-8; ASCII (most strings) is told without a view of the bytes. */
export function isUtf8Range(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    if (bytes[i] >= 0x80) return isUtf8(bytes.subarray(i, end));
  }
  return true;
}

/** Every string field of `bytes` (a `type` message) that is not valid UTF-8, e.g. `attributes.words[2]`. */
export function invalidStrings(type: protobuf.Type, bytes: Uint8Array): InvalidString[] {
  const out: InvalidString[] = [];
  try {
    // One reader for the whole walk: each message's end is its `len` while it is walked, so a read past it throws.
    walk(type, protobuf.Reader.create(bytes), bytes, 0, bytes.length, undefined, out);
  } catch {
    // malformed framing: left to the decoder
  }
  return out;
}

/**
 * Where a field is, spelled only when a string there is invalid: valid
 * messages (nearly all) cost no path text.
 */
interface FieldPath {
  parent: FieldPath | undefined;
  name: string;
  /** The occurrence of a repeated or map field, -1 for others. */
  index: number;
}

function spell(path: FieldPath | undefined): string {
  if (path === undefined) return "";
  const parent = spell(path.parent);
  return `${parent}${parent ? "." : ""}${path.name}${path.index >= 0 ? `[${path.index}]` : ""}`;
}

/** Reads end at `to` (a map entry's value may claim more than the bytes hold: they end first). */
function limit(reader: protobuf.Reader, to: number): void {
  reader.len = Math.min(to, reader.buf.length);
}

function walk(
  type: protobuf.Type,
  reader: protobuf.Reader,
  bytes: Uint8Array,
  from: number,
  to: number,
  path: FieldPath | undefined,
  out: InvalidString[],
): void {
  limit(reader, to);
  reader.pos = from;
  let counts: Map<number, number> | undefined;
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
    const end = reader.pos;
    let index = -1;
    if (field.repeated || field.map) {
      counts ??= new Map();
      index = counts.get(id) ?? 0;
      counts.set(id, index + 1);
    }
    field.resolve();
    if (field.map) mapEntry(field as unknown as protobuf.MapField, reader, bytes, start, end, { parent: path, name: field.name, index }, out);
    else value(field.type, field.resolvedType, reader, bytes, start, end, path, field.name, index, out);
    reader.pos = end;
    limit(reader, to);
  }
}

// The value of field `name` (occurrence `index`) of the message at `parent`.
function value(
  typeName: string,
  resolved: protobuf.ReflectionObject | null,
  reader: protobuf.Reader,
  bytes: Uint8Array,
  start: number,
  end: number,
  parent: FieldPath | undefined,
  name: string,
  index: number,
  out: InvalidString[],
): void {
  if (typeName === "string") {
    if (!isUtf8Range(bytes, start, end)) out.push({ path: spell({ parent, name, index }), start, end });
  } else if (resolved instanceof protobuf.Type) {
    walk(resolved, reader, bytes, start, end, { parent, name, index }, out);
  }
}

// A map entry is a message: key = 1 (keyType), value = 2 (type).
function mapEntry(field: protobuf.MapField, reader: protobuf.Reader, bytes: Uint8Array, from: number, to: number, path: FieldPath, out: InvalidString[]): void {
  limit(reader, to);
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
    const end = reader.pos;
    if (tag >>> 3 === 1) value(field.keyType, null, reader, bytes, start, end, path, "key", -1, out);
    else value(field.type, field.resolvedType, reader, bytes, start, end, path, "value", -1, out);
    reader.pos = end;
    limit(reader, to);
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
