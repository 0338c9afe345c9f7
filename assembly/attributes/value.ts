import { bytesEqualString, fnv64Text, fnv64TextOfString, sameBytes, sameString } from "../text";
import { decodeUtf8, encodeUtf8Unsafe, isCleanUtf8 } from "../utf8";

// Value kinds numbered as the AttributeValue oneof fields of
// proto/mesh/hub/v1/attributes.proto, so encoders use the kind as the field.
export const enum ValueKind {
  String = 2,
  Int64 = 3,
  Double = 4,
  Bool = 5,
  Bytes = 6,
  Timestamp = 7,
  Duration = 8,
  StringMap = 9,
}

/**
 * One typed attribute value. Timestamps and durations are seconds + nanos.
 *
 * A string value is either text (an AssemblyScript string) or a view: valid
 * UTF-8 bytes in place, in storage its request owns (the request's header
 * bytes, view_map.ts). A view becomes a string only when something reads
 * `str` (an encoder, a copy that outlives the request); matching, hashing and
 * comparing read its bytes (`textPtr`, `textEquals`, `hashText`).
 */
export class AttributeValue {
  kind: ValueKind = ValueKind.String;
  private text: string = "";
  // The view's bytes (viewed), or text's UTF-8 once asked for (encoded).
  private textBytes: usize = 0;
  private textLength: usize = 0;
  private viewed: bool = false;
  // The map reading (ViewMap.sourceId) a view's bytes are of, 0: not known. Read only while `viewed`.
  private viewReading: u32 = 0;
  private decoded: bool = false;
  private encoded: bool = false;
  // Where text's UTF-8 is kept for textPtr (reused while it is large enough).
  private encoding: ArrayBuffer | null = null;
  /** int64 value, or seconds of a timestamp/duration. */
  int: i64 = 0;
  nanos: i32 = 0;
  double: f64 = 0;
  bool: bool = false;
  bytes: Uint8Array | null = null;
  map: StringMap | null = null;
  /**
   * Storage of a request's own values (RequestValues), rewritten by the
   * evaluation that reuses it: a bag that outlives the request copies such a
   * value (AttributeBag.clone) instead of sharing it.
   */
  requestOwned: bool = false;

  /** The string: the text, or the view decoded (once) when first read. */
  // @ts-ignore: decorator
  @inline get str(): string {
    if (this.viewed && !this.decoded) this.decodeView();
    return this.text;
  }

  private decodeView(): void {
    this.text = decodeUtf8(this.textBytes, this.textLength);
    this.decoded = true;
  }

  set str(s: string) {
    this.text = s;
    this.viewed = false;
    this.encoded = false;
  }

  /**
   * Makes this a string value over the `len` UTF-8 bytes at `ptr`, which must
   * stay as they are while the value is read (a request's own bytes: the
   * value is then `requestOwned`, and copied before it outlives them). Bytes
   * that are not valid UTF-8 (a client's, never checked before) make it their
   * text instead, decoded with U+FFFD, so a view is always text that decodes
   * to itself.
   */
  // @ts-ignore: decorator
  @inline setView(ptr: usize, len: usize): void {
    if (isCleanUtf8(ptr, len)) {
      this.setCleanView(ptr, len);
      return;
    }
    this.kind = ValueKind.String;
    this.str = decodeUtf8(ptr, len);
  }

  /**
   * setView for bytes the caller knows are valid UTF-8 (a header block
   * checked whole, or a part of valid text cut at ASCII delimiters): not
   * checked again.
   */
  // @ts-ignore: decorator
  @inline setCleanView(ptr: usize, len: usize): void {
    this.kind = ValueKind.String;
    this.text = "";
    this.textBytes = ptr;
    this.textLength = len;
    this.viewed = true;
    this.decoded = false;
    this.viewReading = 0;
  }

  /** setView of bytes of map reading `reading` (ViewMap.sourceId; 0: none known), for `viewKey`. */
  // @ts-ignore: decorator
  @inline setReadingView(ptr: usize, len: usize, reading: u32): void {
    this.setView(ptr, len);
    this.viewReading = reading;
  }

  /** A view of the first `len` bytes of `whole`'s (valid UTF-8 cut at an ASCII delimiter), of its reading. */
  // @ts-ignore: decorator
  @inline setPrefixView(whole: AttributeValue, len: usize): void {
    this.setCleanView(whole.textPtr(), len);
    if (whole.viewed) this.viewReading = whole.viewReading;
  }

  /**
   * A view's reading and (wasm32) address in one number, 0 when its reading
   * is not known: one reading's bytes stay in place, and no other has its id,
   * so the same number is the same bytes (with the same length).
   */
  // @ts-ignore: decorator
  @inline get viewKey(): u64 {
    const reading = this.viewReading;
    return reading == 0 ? 0 : (<u64>this.textBytes << 32) | <u64>reading;
  }

  /** A string value that is a view (its text not yet decoded, or decoded from it). */
  get isView(): bool {
    return this.viewed;
  }

  /** Where the UTF-8 of a string value is (the view, or the text encoded once). */
  // @ts-ignore: decorator
  @inline textPtr(): usize {
    if (!this.viewed && !this.encoded) this.encodeText();
    return this.textBytes;
  }

  /** How many bytes are at textPtr(). */
  // @ts-ignore: decorator
  @inline textLen(): usize {
    if (!this.viewed && !this.encoded) this.encodeText();
    return this.textLength;
  }

  /** The string value's text equals `s` (compared as UTF-8, nothing decoded). */
  // @ts-ignore: decorator
  @inline textEquals(s: string): bool {
    return this.viewed ? bytesEqualString(this.textBytes, this.textLength, s) : sameString(this.text, s);
  }

  /** Two string values have the same text. */
  sameText(other: AttributeValue): bool {
    if (this.viewed) {
      if (other.viewed) return sameBytes(this.textBytes, this.textLength, other.textBytes, other.textLength);
      return bytesEqualString(this.textBytes, this.textLength, other.text);
    }
    return other.viewed ? bytesEqualString(other.textBytes, other.textLength, this.text) : sameString(this.text, other.text);
  }

  /** fnv64Text of the string value's UTF-8, equal for a view and the text decoded from it. */
  hashText(hash: u64): u64 {
    return this.viewed ? fnv64Text(hash, this.textBytes, this.textLength) : fnv64TextOfString(hash, this.text);
  }

  private encodeText(): void {
    const s = this.text;
    const room = s.length * 3;
    let buffer = this.encoding;
    if (buffer === null || buffer.byteLength < room) {
      buffer = new ArrayBuffer(room);
      this.encoding = buffer;
    }
    this.textBytes = changetype<usize>(buffer);
    this.textLength = encodeUtf8Unsafe(s, this.textBytes);
    this.encoded = true;
  }

  /** A copy that later writes to the request's objects cannot change (bytes and map copied too). */
  copy(): AttributeValue {
    const c = new AttributeValue();
    c.kind = this.kind;
    if (this.kind == ValueKind.String) c.str = this.str;
    c.int = this.int;
    c.nanos = this.nanos;
    c.double = this.double;
    c.bool = this.bool;
    const bytes = this.bytes;
    if (bytes !== null) c.bytes = bytes.slice(0);
    const map = this.map;
    if (map !== null) c.map = map.clone();
    return c;
  }

  static ofString(s: string): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.String;
    v.str = s;
    return v;
  }

  static ofInt64(n: i64): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Int64;
    v.int = n;
    return v;
  }

  static ofDouble(d: f64): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Double;
    v.double = d;
    return v;
  }

  /** Shared instances: attribute values are never mutated once set in a bag. */
  static ofBool(b: bool): AttributeValue {
    return b ? TRUE_VALUE : FALSE_VALUE;
  }

  static newBoolForConstant(b: bool): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Bool;
    v.bool = b;
    return v;
  }

  static ofBytes(b: Uint8Array): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.Bytes;
    v.bytes = b;
    return v;
  }

  static ofTimestampNanos(unixNanos: i64): AttributeValue {
    return AttributeValue.ofTime(ValueKind.Timestamp, unixNanos);
  }

  static ofDurationNanos(nanos: i64): AttributeValue {
    return AttributeValue.ofTime(ValueKind.Duration, nanos);
  }

  static ofSecondsNanos(kind: ValueKind, seconds: i64, nanos: i32): AttributeValue {
    const v = new AttributeValue();
    v.kind = kind;
    v.int = seconds;
    v.nanos = nanos;
    return v;
  }

  static ofMap(m: StringMap): AttributeValue {
    const v = new AttributeValue();
    v.kind = ValueKind.StringMap;
    v.map = m;
    return v;
  }

  private static ofTime(kind: ValueKind, nanos: i64): AttributeValue {
    const v = new AttributeValue();
    v.setTime(kind, nanos);
    return v;
  }

  /** Makes this a timestamp or duration of `nanos`, split into seconds and nanos. */
  setTime(kind: ValueKind, nanos: i64): void {
    let seconds = nanos / 1_000_000_000;
    let rest = <i32>(nanos % 1_000_000_000);
    // Timestamps keep nanos non-negative (protobuf's rule for Timestamp).
    if (kind == ValueKind.Timestamp && rest < 0) {
      seconds -= 1;
      rest += 1_000_000_000;
    }
    this.kind = kind;
    this.int = seconds;
    this.nanos = rest;
  }
}

const TRUE_VALUE: AttributeValue = AttributeValue.newBoolForConstant(true);
const FALSE_VALUE: AttributeValue = AttributeValue.newBoolForConstant(false);

/**
 * Key equality for the linear scans of maps and bags. Keys are mostly the
 * same shared strings (literals, known names), caught by the pointer
 * compare; of the rest, names of one length mostly share a prefix
 * (`request.path`, `request.host`), so the last code unit settles most
 * mismatches before a full compare.
 */
// @ts-ignore: decorator
@inline
export function sameKey(candidate: string, key: string): bool {
  const a = changetype<usize>(candidate);
  const b = changetype<usize>(key);
  if (a == b) return true;
  const length = <usize>key.length;
  if (<usize>candidate.length != length) return false;
  if (length == 0) return true;
  const last = (length - 1) << 1;
  return load<u16>(a + last) == load<u16>(b + last) && candidate == key;
}

/**
 * An ordered string map for headers, query parameters and string-map
 * attributes. Small maps dominate (a request has tens of headers), so a
 * linear scan beats hashing and keeps insertion order for stable output.
 *
 * A request's own maps (its headers, its query parameters) keep their
 * entries as UTF-8 bytes in place (view_map.ts): the methods below are the
 * ones such a map overrides, so readers that go through them, rather than
 * through `keys` and `values`, never make a string of an entry.
 */
export class StringMap {
  protected keyList: Array<string>;
  protected valueList: Array<string>;

  constructor(capacity: i32 = 8) {
    const keys = new Array<string>(capacity);
    const values = new Array<string>(capacity);
    keys.length = 0;
    values.length = 0;
    this.keyList = keys;
    this.valueList = values;
  }

  /** The keys in order (read-only: change the map through its methods). */
  get keys(): Array<string> {
    return this.keyList;
  }

  /** The values in order, `values[i]` that of `keys[i]` (read-only). */
  get values(): Array<string> {
    return this.valueList;
  }

  get size(): i32 {
    return this.keyList.length;
  }

  indexOf(key: string): i32 {
    const keys = this.keyList;
    for (let i = 0, n = keys.length; i < n; i++) {
      if (sameKey(unchecked(keys[i]), key)) return i;
    }
    return -1;
  }

  has(key: string): bool {
    return this.indexOf(key) >= 0;
  }

  /** The value, or null when absent. */
  get(key: string): string | null {
    const i = this.indexOf(key);
    return i < 0 ? null : this.valueAt(i);
  }

  /** The key of entry `i` (0 <= i < size). */
  keyAt(i: i32): string {
    return this.keyList[i];
  }

  /** The value of entry `i` (0 <= i < size). */
  valueAt(i: i32): string {
    return this.valueList[i];
  }

  /** Makes `into` a string value with the text of entry `i`'s value, without copying it. */
  valueInto(i: i32, into: AttributeValue): void {
    into.str = this.valueList[i];
  }

  /**
   * Hash of the entries whatever their order (the check cache's signature of
   * a whole map): each entry's key and value text hashes are added.
   */
  unorderedHash(): u64 {
    let sum: u64 = 0;
    const keys = this.keyList;
    const values = this.valueList;
    for (let i = 0, n = keys.length; i < n; i++) {
      sum += fnv64TextOfString(fnv64TextOfString(ENTRY_HASH_BASIS, unchecked(keys[i])), unchecked(values[i]));
    }
    return sum;
  }

  /** Sets the value; a repeated key replaces the earlier value in place. */
  set(key: string, value: string): void {
    const i = this.indexOf(key);
    if (i < 0) {
      this.keyList.push(key);
      this.valueList.push(value);
    } else {
      this.valueList[i] = value;
    }
  }

  /** Adds only if absent: first occurrence wins. */
  setIfAbsent(key: string, value: string): void {
    if (this.indexOf(key) < 0) {
      this.keyList.push(key);
      this.valueList.push(value);
    }
  }

  /** Empties the map, keeping its storage for reuse. */
  clear(): void {
    // Array's length setter always calls into the runtime: only when there is something to drop.
    if (this.keyList.length != 0) this.keyList.length = 0;
    if (this.valueList.length != 0) this.valueList.length = 0;
  }

  remove(key: string): void {
    const i = this.indexOf(key);
    if (i < 0) return;
    this.keyList.splice(i, 1);
    this.valueList.splice(i, 1);
  }

  /** A plain copy that owns its strings (a request's own maps are copied out this way). */
  clone(): StringMap {
    const m = new StringMap(0);
    m.keyList = this.keys.slice(0);
    m.valueList = this.values.slice(0);
    return m;
  }
}

/** FNV-1a 64 offset basis, the start of each entry's hash in `unorderedHash`. */
export const ENTRY_HASH_BASIS: u64 = 0xcbf29ce484222325;
