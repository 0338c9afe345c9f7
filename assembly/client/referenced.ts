// The referenced-attributes shape of a hub answer (hub-client §6.1; upstream
// src/istio/mixerclient/referenced.cc): which attributes the hub looked at to
// decide, and how. A cached answer may be reused for another request only if
// the shape applies to it (every ABSENCE attribute or map entry absent, every
// EXACT one present) and the EXACT values are the same, which the signature
// hashes and the captured values confirm.
//
// Kept apart from the wire decoder (assembly/hub/): the caller turns a decoded
// ReferencedAttributes (words already resolved) into a list of
// ReferencedAttribute and builds the shape once per answer.
//
// Differences from upstream, on purpose:
// - `mapKey` is given explicitly. Null means the whole attribute; on a
//   string-map attribute an EXACT reference without a key hashes every entry
//   (order-independent), which is what the proto intends and upstream could not
//   express (it decoded an unset map_key as global word 0).
// - Upstream ignored the map key of a reference to a non-map attribute; here an
//   EXACT or ABSENCE reference with a key needs a string-map value, so such a
//   shape contradicts the bag and is not cached.
// - The signature is FNV-1a 64 with length prefixes and value kinds (upstream:
//   MD5 with NUL delimiters), and a cache hit also compares the captured values
//   (`sameValues`), so a hash collision can never serve another request's
//   answer.
import { AttributeSource } from "../attributes/bag";
import { internAttribute } from "../attributes/names";
import { AttributeValue, ValueKind, StringMap } from "../attributes/value";
import { isNullString } from "../text";
import { FNV64_OFFSET_BASIS, fnv64Byte, fnv64Bytes, fnv64String, fnv64U32, fnv64U64 } from "../fnv64";

/** ReferencedAttributes.Condition of the hub protocol. */
export const enum Condition {
  Absence = 1,
  Exact = 2,
  Regex = 3,
}

/** One attribute match of a shape: `name`, or the entry `mapKey` of a string map. */
export class ReferencedAttribute {
  /** The name's interned id (names.ts): shapes look attributes up by it. */
  readonly id: i32;

  constructor(
    public name: string,
    public condition: i32,
    public mapKey: string | null = null,
  ) {
    this.id = internAttribute(name);
  }

  /** The attribute's value in `bag`, or null. */
  // @ts-ignore: decorator
  @inline
  valueIn(bag: AttributeSource): AttributeValue | null {
    const id = this.id;
    return id >= 0 ? bag.getId(id) : bag.get(this.name);
  }
}

function compareReferences(a: ReferencedAttribute, b: ReferencedAttribute): i32 {
  if (a.name != b.name) return a.name < b.name ? -1 : 1;
  const ka = a.mapKey;
  const kb = b.mapKey;
  if (ka === null) return kb === null ? 0 : -1;
  if (kb === null) return 1;
  if (ka == kb) return 0;
  return ka < kb ? -1 : 1;
}

function sortUnique(list: Array<ReferencedAttribute>): Array<ReferencedAttribute> {
  list.sort(compareReferences);
  const out = new Array<ReferencedAttribute>();
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (out.length > 0 && compareReferences(out[out.length - 1], r) == 0) continue;
    out.push(r);
  }
  return out;
}

function appendReference(parts: Array<string>, r: ReferencedAttribute): void {
  // Length-prefixed so that no name or key can imitate a separator.
  parts.push(r.name.length.toString());
  parts.push(":");
  parts.push(r.name);
  const key = r.mapKey;
  if (isNullString(key)) {
    parts.push("-");
  } else {
    parts.push("+");
    parts.push(key!.length.toString());
    parts.push(":");
    parts.push(key!);
  }
}

function sameMap(a: StringMap, b: StringMap): bool {
  const n = a.size;
  if (n != b.size) return false;
  for (let i = 0; i < n; i++) {
    const j = b.indexOf(a.keyAt(i));
    if (j < 0) return false;
    a.valueInto(i, leftEntry);
    b.valueInto(j, rightEntry);
    if (!leftEntry.sameText(rightEntry)) return false;
  }
  return true;
}

// Map entries being compared or hashed (never kept past the call).
const leftEntry = new AttributeValue();
const rightEntry = new AttributeValue();

// The string-map entry `key` of `v` into `into`; false when absent or `v` is no map.
function entryInto(v: AttributeValue, key: string, into: AttributeValue): bool {
  const map = v.map;
  if (v.kind != ValueKind.StringMap || map === null) return false;
  const i = map.indexOf(key);
  if (i < 0) return false;
  map.valueInto(i, into);
  return true;
}

/** Typed equality as the signature sees it (doubles compare by bit pattern). */
export function sameValue(a: AttributeValue, b: AttributeValue): bool {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind.String:
      return a.sameText(b);
    case ValueKind.Int64:
      return a.int == b.int;
    case ValueKind.Double:
      return reinterpret<u64>(a.double) == reinterpret<u64>(b.double);
    case ValueKind.Bool:
      return a.bool == b.bool;
    case ValueKind.Bytes: {
      const x = a.bytes;
      const y = b.bytes;
      const lx = x === null ? 0 : x.length;
      const ly = y === null ? 0 : y.length;
      if (lx != ly) return false;
      if (lx == 0) return true;
      return memory.compare((x as Uint8Array).dataStart, (y as Uint8Array).dataStart, <usize>lx) == 0;
    }
    case ValueKind.Timestamp:
    case ValueKind.Duration:
      return a.int == b.int && a.nanos == b.nanos;
    case ValueKind.StringMap: {
      const x = a.map;
      const y = b.map;
      if (x === null || y === null) return x === y;
      return sameMap(x, y);
    }
    default:
      return false;
  }
}

function hashValue(h: u64, v: AttributeValue): u64 {
  h = fnv64Byte(h, <u32>v.kind);
  switch (v.kind) {
    case ValueKind.String:
      return v.hashText(h);
    case ValueKind.Int64:
      return fnv64U64(h, <u64>v.int);
    case ValueKind.Double:
      return fnv64U64(h, reinterpret<u64>(v.double));
    case ValueKind.Bool:
      return fnv64Byte(h, v.bool ? 1 : 0);
    case ValueKind.Bytes: {
      const bytes = v.bytes;
      if (bytes === null) return fnv64U32(h, 0);
      h = fnv64U32(h, <u32>bytes.length);
      return fnv64Bytes(h, bytes.dataStart, <usize>bytes.length);
    }
    case ValueKind.Timestamp:
    case ValueKind.Duration:
      return fnv64U32(fnv64U64(h, <u64>v.int), <u32>v.nanos);
    case ValueKind.StringMap: {
      // Whole map: entries are combined by addition so insertion order does
      // not matter (two requests with the same headers in another order match).
      const map = v.map;
      if (map === null) return fnv64U32(h, 0);
      return fnv64U64(fnv64U32(h, <u32>map.size), map.unorderedHash());
    }
    default:
      return h;
  }
}

/**
 * A canonical, de-duplicated referenced-attributes shape.
 *
 *     const shape = new ReferencedShape([
 *       new ReferencedAttribute("source.principal", Condition.Exact),
 *       new ReferencedAttribute("request.headers", Condition.Absence, "x-debug"),
 *     ]);
 *     if (shape.cacheableFor(bag)) cache.insert(bag, shape, result, ...);
 */
export class ReferencedShape {
  /** ABSENCE references, sorted by (name, mapKey), unique. */
  readonly absence: Array<ReferencedAttribute>;
  /** EXACT references, sorted by (name, mapKey), unique. */
  readonly exact: Array<ReferencedAttribute>;
  /** False when a REGEX (or unknown) condition is present: never cached. */
  readonly supported: bool;
  private readonly canonical: string;
  // Without EXACT references the signature depends on `extra` alone (a quota
  // cache asks with the same quota name request after request): the last
  // one's is kept, by the string's identity.
  private lastExtra: string | null = null;
  private lastExtraSignature: u64 = 0;

  constructor(references: Array<ReferencedAttribute>) {
    const absence = new Array<ReferencedAttribute>();
    const exact = new Array<ReferencedAttribute>();
    let supported = true;
    for (let i = 0; i < references.length; i++) {
      const r = references[i];
      // Copied: the shape stays as built whatever the caller does with its list.
      const copy = new ReferencedAttribute(r.name, r.condition, r.mapKey);
      if (r.condition == Condition.Absence) absence.push(copy);
      else if (r.condition == Condition.Exact) exact.push(copy);
      else supported = false;
    }
    const sortedAbsence = sortUnique(absence);
    const sortedExact = sortUnique(exact);
    const parts = new Array<string>();
    parts.push(supported ? "A" : "!A");
    for (let i = 0; i < sortedAbsence.length; i++) appendReference(parts, sortedAbsence[i]);
    parts.push("E");
    for (let i = 0; i < sortedExact.length; i++) appendReference(parts, sortedExact[i]);
    this.canonical = parts.join("");
    this.absence = sortedAbsence;
    this.exact = sortedExact;
    this.supported = supported;
  }

  /** Canonical text of the shape: equal shapes have equal keys. */
  key(): string {
    return this.canonical;
  }

  /** Every ABSENCE reference absent and every EXACT reference present in `bag`. */
  // @ts-ignore: decorator
  @inline applies(bag: AttributeSource): bool {
    const absence = this.absence;
    for (let i = 0, n = absence.length; i < n; i++) {
      const r = unchecked(absence[i]);
      const v = r.valueIn(bag);
      if (v === null) continue;
      const key = r.mapKey;
      if (isNullString(key) || v.kind != ValueKind.StringMap) return false;
      const map = v.map;
      if (map !== null && map.has(key!)) return false;
    }
    const exact = this.exact;
    for (let i = 0, n = exact.length; i < n; i++) {
      const r = unchecked(exact[i]);
      const v = r.valueIn(bag);
      if (v === null) return false;
      const key = r.mapKey;
      if (isNullString(key)) continue;
      if (v.kind != ValueKind.StringMap) return false;
      const map = v.map;
      if (map === null || !map.has(key!)) return false;
    }
    return true;
  }

  /** Supported and consistent with the bag that produced the answer. */
  cacheableFor(bag: AttributeSource): bool {
    return this.supported && this.applies(bag);
  }

  /**
   * Hash of the EXACT references' names and typed values in `bag`, then
   * `extra` (the quota cache passes the quota name). Meaningful only where
   * `applies(bag)`; allocates nothing.
   */
  // @ts-ignore: decorator
  @inline signature(bag: AttributeSource, extra: string = ""): u64 {
    return this.exact.length == 0 && changetype<usize>(this.lastExtra) == changetype<usize>(extra)
      ? this.lastExtraSignature
      : this.signatureOf(bag, extra);
  }

  private signatureOf(bag: AttributeSource, extra: string): u64 {
    let h = FNV64_OFFSET_BASIS;
    const exact = this.exact;
    if (exact.length == 0) {
      this.lastExtraSignature = fnv64String(h, extra);
      this.lastExtra = extra;
      return this.lastExtraSignature;
    }
    for (let i = 0, n = exact.length; i < n; i++) {
      const r = unchecked(exact[i]);
      h = fnv64String(h, r.name);
      const v = r.valueIn(bag);
      if (v === null) {
        h = fnv64Byte(h, 0);
        continue;
      }
      const key = r.mapKey;
      if (isNullString(key)) {
        h = hashValue(fnv64Byte(h, 1), v);
        continue;
      }
      h = fnv64String(fnv64Byte(h, 2), key!);
      h = entryInto(v, key!, leftEntry) ? leftEntry.hashText(fnv64Byte(h, 1)) : fnv64Byte(h, 0);
    }
    return fnv64String(h, extra);
  }

  /**
   * Copies of the EXACT references' values in `bag` (one per `exact` entry;
   * a map entry is captured as a string value), kept with a cache entry so a
   * hit can be confirmed by `sameValues`. Allocates: call at insert only.
   */
  capture(bag: AttributeSource): Array<AttributeValue> {
    const exact = this.exact;
    const out = new Array<AttributeValue>(exact.length);
    for (let i = 0; i < exact.length; i++) {
      const r = exact[i];
      const v = r.valueIn(bag);
      const key = r.mapKey;
      if (v === null) {
        const missing = new AttributeValue(); // never equal: applies() already failed
        missing.kind = <ValueKind>0;
        out[i] = missing;
      } else if (isNullString(key)) {
        out[i] = v.copy();
      } else {
        out[i] = AttributeValue.ofString(entryInto(v, key!, leftEntry) ? leftEntry.str : "");
      }
    }
    return out;
  }

  /** The EXACT values of `bag` equal `captured` (from `capture`). No allocation. */
  // @ts-ignore: decorator
  @inline sameValues(bag: AttributeSource, captured: Array<AttributeValue>): bool {
    const exact = this.exact;
    if (captured.length != exact.length) return false;
    for (let i = 0, n = exact.length; i < n; i++) {
      const r = unchecked(exact[i]);
      const c = unchecked(captured[i]);
      const v = r.valueIn(bag);
      if (v === null) return false;
      const key = r.mapKey;
      if (isNullString(key)) {
        if (!sameValue(v, c)) return false;
        continue;
      }
      if (!entryInto(v, key!, leftEntry) || !leftEntry.sameText(c)) return false;
    }
    return true;
  }
}
