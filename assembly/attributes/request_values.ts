import { HeaderMap } from "./header_map";
import { QueryMap } from "./query";
import { AttributeValue, ValueKind, StringMap } from "./value";

/**
 * The attribute values one request derives for itself (its host, path, id,
 * time, header map, query parameters, API key…), kept in storage its
 * evaluation reuses: the next request rewrites the same objects instead of
 * allocating new ones. String values are views of the request's own bytes
 * (its header map's buffer), so none of them is a string until something
 * reads `str`. Each value is marked `requestOwned`, so a bag that outlives
 * the request (a report, a quota prefetch) copies it (AttributeBag.clone),
 * and the check cache keeps copies of what it captures. Anything else reads
 * them only while the request is being evaluated.
 */
export class RequestValues {
  private slots: Array<AttributeValue> = [];
  private used: i32 = 0;
  /** The query parameters' map, refilled per request (see `map`). */
  readonly query: QueryMap = new QueryMap();

  /** Every value free again, for the next request. */
  reset(): void {
    this.used = 0;
  }

  // @ts-ignore: decorator
  @inline string(s: string): AttributeValue {
    const v = this.next(ValueKind.String);
    v.str = s;
    return v;
  }

  /** A string value over `len` bytes at `ptr`, which live as long as the request (checked for UTF-8 as setView does). */
  // @ts-ignore: decorator
  @inline view(ptr: usize, len: usize): AttributeValue {
    const v = this.next(ValueKind.String);
    v.setView(ptr, len);
    return v;
  }

  /** `view` of bytes known to be valid UTF-8 (AttributeValue.setCleanView). */
  // @ts-ignore: decorator
  @inline cleanView(ptr: usize, len: usize): AttributeValue {
    const v = this.next(ValueKind.String);
    v.setCleanView(ptr, len);
    return v;
  }

  /** A view of the first `len` bytes of `whole`'s view (AttributeValue.setPrefixView). */
  // @ts-ignore: decorator
  @inline prefixView(whole: AttributeValue, len: usize): AttributeValue {
    const v = this.next(ValueKind.String);
    v.setPrefixView(whole, len);
    return v;
  }

  /** The value of header entry `i` of `h`, in place. */
  // @ts-ignore: decorator
  @inline header(h: StringMap, i: i32): AttributeValue {
    const v = this.next(ValueKind.String);
    h.valueInto(i, v);
    return v;
  }

  /**
   * `header` for a request's own header map: a view of entry `i` made here,
   * without the virtual call of StringMap's `valueInto`.
   */
  // @ts-ignore: decorator
  @inline headerEntry(h: HeaderMap, i: i32): AttributeValue {
    const v = this.next(ValueKind.String);
    if (h.isViewing) v.setReadingView(h.valuePtr(i), h.valueLength(i), h.sourceId);
    else h.valueInto(i, v);
    return v;
  }

  // @ts-ignore: decorator
  @inline int64(n: i64): AttributeValue {
    const v = this.next(ValueKind.Int64);
    v.int = n;
    return v;
  }

  // @ts-ignore: decorator
  @inline timestampNanos(unixNanos: i64): AttributeValue {
    const v = this.next(ValueKind.Timestamp);
    v.setTime(ValueKind.Timestamp, unixNanos);
    return v;
  }

  // @ts-ignore: decorator
  @inline durationNanos(nanos: i64): AttributeValue {
    const v = this.next(ValueKind.Duration);
    v.setTime(ValueKind.Duration, nanos);
    return v;
  }

  /** A string-map value over `m`, which must live as long as the request (its own map or `query`). */
  // @ts-ignore: decorator
  @inline map(m: StringMap): AttributeValue {
    const v = this.next(ValueKind.StringMap);
    v.map = m;
    return v;
  }

  /** A string value to fill (a view or text), for a reader that finds out whether it has one. */
  // @ts-ignore: decorator
  @inline spare(): AttributeValue {
    const v = this.next(ValueKind.String);
    v.str = "";
    return v;
  }

  // A value of `kind` to fill: the fields its kind reads are set by the
  // caller; of the others, only the references (which a copy would follow)
  // are cleared.
  // Inlined into each maker: a request takes a dozen values, nearly always already there.
  // @ts-ignore: decorator
  @inline private next(kind: ValueKind): AttributeValue {
    const slots = this.slots;
    const i = this.used++;
    if (i >= slots.length) return this.added(kind);
    const v = unchecked(slots[i]);
    v.bytes = null;
    v.map = null;
    v.kind = kind;
    return v;
  }

  // A new slot (`next` once per slot in a module's life). Large enough that
  // binaryen keeps it out of line: inlined into each of the dozens of makers,
  // its code would sit between their hot instructions, in lines a request
  // fetches.
  private added(kind: ValueKind): AttributeValue {
    const v = new AttributeValue();
    v.requestOwned = true;
    v.kind = kind;
    v.bytes = null;
    v.map = null;
    const slots = this.slots;
    slots.push(v);
    return v;
  }
}
