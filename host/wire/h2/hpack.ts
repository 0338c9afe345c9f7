// HPACK (RFC 7541): the decoder a client needs for a server's header blocks
// (static and dynamic table, size updates and eviction, integers, string
// literals raw or Huffman-coded), and an encoder that never indexes: fields
// go out as static-table indices or literals without indexing, so the peer's
// dynamic table is never used and there is no encoder state to keep.

import { HuffmanError, huffmanDecode } from "./huffman.ts";

/** One header field: name (lower case on HTTP/2) and value, latin1 text. */
export type HeaderField = readonly [name: string, value: string];

/** RFC 7541 Appendix A, index 1…61. */
export const STATIC_TABLE: readonly HeaderField[] = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ...[
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
  ].map((name): HeaderField => [name, name === "accept-encoding" ? "gzip, deflate" : ""]),
];

/** Overhead counted per dynamic-table entry besides its name and value octets (§4.1). */
const ENTRY_OVERHEAD = 32;

/** A header block that breaks HPACK's rules: a connection error COMPRESSION_ERROR. */
export class HpackError extends Error {}

/** Reads one prefixed integer (§5.1) at `at`, the prefix `bits` wide; returns [value, next offset]. */
export function decodeInteger(block: Uint8Array, at: number, bits: number): [number, number] {
  if (at >= block.length) throw new HpackError("header block ends inside an integer");
  const max = (1 << bits) - 1;
  let value = block[at++] & max;
  if (value < max) return [value, at];
  for (let shift = 0; ; shift += 7) {
    if (at >= block.length) throw new HpackError("header block ends inside an integer");
    if (shift > 28) throw new HpackError("integer too large");
    const byte = block[at++];
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, at];
  }
}

/** Writes a prefixed integer at `at` with `flags` in the bits above the prefix; returns the next offset. */
export function encodeInteger(out: Uint8Array, at: number, value: number, bits: number, flags: number): number {
  const max = (1 << bits) - 1;
  if (value < max) {
    out[at++] = flags | value;
    return at;
  }
  out[at++] = flags | max;
  let rest = value - max;
  while (rest >= 0x80) {
    out[at++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  out[at++] = rest;
  return at;
}

function decodeString(block: Uint8Array, at: number): [string, number] {
  if (at >= block.length) throw new HpackError("header block ends before a string");
  const huffman = (block[at] & 0x80) !== 0;
  const [length, start] = decodeInteger(block, at, 7);
  const end = start + length;
  if (end > block.length) throw new HpackError("string literal longer than the header block");
  if (!huffman) return [latin1(block, start, end), end];
  try {
    return [huffmanDecode(block, start, end), end];
  } catch (e) {
    throw e instanceof HuffmanError ? new HpackError(e.message) : e;
  }
}

function latin1(block: Uint8Array, start: number, end: number): string {
  if (end - start < 32) {
    let s = "";
    for (let i = start; i < end; i++) s += String.fromCharCode(block[i]);
    return s;
  }
  return Buffer.from(block.buffer, block.byteOffset + start, end - start).toString("latin1");
}

/** One connection's header-block decoder: keeps the dynamic table between blocks. */
export class HpackDecoder {
  /** Newest first. */
  private readonly dynamic: HeaderField[] = [];
  private size = 0;
  private capacity: number;

  /** `limit`: the SETTINGS_HEADER_TABLE_SIZE this side advertised (default 4096); a size update above it is an error. */
  constructor(private readonly limit = 4096) {
    this.capacity = limit;
  }

  /** The fields of one complete header block, in order. Throws HpackError (then the connection is unusable). */
  decode(block: Uint8Array): HeaderField[] {
    const fields: HeaderField[] = [];
    let at = 0;
    let fieldSeen = false;
    while (at < block.length) {
      const first = block[at];
      if (first & 0x80) {
        // Indexed header field (§6.1).
        const [index, next] = decodeInteger(block, at, 7);
        fields.push(this.entry(index));
        at = next;
      } else if ((first & 0xe0) === 0x20) {
        // Dynamic table size update (§6.3): only at the start of a block.
        if (fieldSeen) throw new HpackError("dynamic table size update after a header field");
        const [size, next] = decodeInteger(block, at, 5);
        if (size > this.limit) throw new HpackError(`dynamic table size update to ${size}, above the advertised ${this.limit}`);
        this.capacity = size;
        this.evict(0);
        at = next;
        continue;
      } else {
        // Literal with incremental indexing (01), without indexing (0000), never indexed (0001).
        const indexing = (first & 0xc0) === 0x40;
        const [index, afterIndex] = decodeInteger(block, at, indexing ? 6 : 4);
        let name: string;
        at = afterIndex;
        if (index === 0) [name, at] = decodeString(block, at);
        else name = this.entry(index)[0];
        let value: string;
        [value, at] = decodeString(block, at);
        const field: HeaderField = [name, value];
        if (indexing) this.insert(field);
        fields.push(field);
      }
      fieldSeen = true;
    }
    return fields;
  }

  /** Current dynamic table size in octets (§4.1), for tests. */
  get tableSize(): number {
    return this.size;
  }

  /** Dynamic table entries, newest first, for tests. */
  get tableEntries(): readonly HeaderField[] {
    return this.dynamic;
  }

  private entry(index: number): HeaderField {
    if (index === 0) throw new HpackError("header field index 0");
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1];
    const field = this.dynamic[index - STATIC_TABLE.length - 1];
    if (!field) throw new HpackError(`header field index ${index} beyond the tables`);
    return field;
  }

  private insert(field: HeaderField): void {
    const size = field[0].length + field[1].length + ENTRY_OVERHEAD;
    if (size > this.capacity) {
      // An entry larger than the table empties it and is not added (§4.4).
      this.dynamic.length = 0;
      this.size = 0;
      return;
    }
    this.evict(size);
    this.dynamic.unshift(field);
    this.size += size;
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    while (this.size + room > this.capacity && this.dynamic.length > 0) {
      const old = this.dynamic.pop()!;
      this.size -= old[0].length + old[1].length + ENTRY_OVERHEAD;
    }
  }
}

/** Static-table index of each exact field ("name\0value") and of each name's first entry. */
const STATIC_FIELD = new Map<string, number>();
const STATIC_NAME = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  STATIC_FIELD.set(`${name}\0${value}`, i + 1);
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, i + 1);
});

/** Encoded fields remembered, so repeated calls' identical headers cost a lookup. */
const encodedFields = new Map<string, Buffer>();
const ENCODED_FIELDS_KEPT = 512;

/** One field as HPACK bytes: the static index when the table has it whole, else a literal without indexing (raw string octets). */
export function encodeField(name: string, value: string): Buffer {
  const key = `${name}\0${value}`;
  const known = encodedFields.get(key);
  if (known) return known;
  const index = STATIC_FIELD.get(key);
  let out: Buffer;
  if (index !== undefined) {
    out = Buffer.from([0x80 | index]);
  } else {
    const nameIndex = STATIC_NAME.get(name) ?? 0;
    const scratch = Buffer.allocUnsafe(16 + 2 * (name.length + value.length));
    let at = encodeInteger(scratch, 0, nameIndex, 4, 0x00);
    if (nameIndex === 0) at = writeRaw(scratch, at, name);
    at = writeRaw(scratch, at, value);
    out = Buffer.from(scratch.subarray(0, at));
  }
  if (encodedFields.size >= ENCODED_FIELDS_KEPT) encodedFields.clear();
  encodedFields.set(key, out);
  return out;
}

function writeRaw(out: Buffer, at: number, text: string): number {
  at = encodeInteger(out, at, text.length, 7, 0x00);
  return at + out.write(text, at, "latin1");
}

/** A header block of `fields`, in order (pseudo-header fields first, as HTTP/2 requires of the caller). */
export function encodeHeaderBlock(fields: readonly HeaderField[]): Buffer {
  const parts = fields.map(([name, value]) => encodeField(name, value));
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}
