import { AttributeValue, ValueKind, sameKey, StringMap } from "./value";
import { attributeId, attributeName, FIXED_ID_COUNT, internAttribute, internedAttributeCount, NO_ATTRIBUTE_ID } from "./names";

/**
 * Where a request's attributes are read from by id: a bag (AttributeBag below), or a
 * request's check-time attributes found without building one
 * (request_attributes.ts). The caches and quota rules only look attributes
 * up, so they take either; whatever must keep or encode every attribute asks
 * for `asBag()`.
 */
export abstract class AttributeSource {
  /** The value of the attribute with interned id `id`, or null. */
  abstract getId(id: i32): AttributeValue | null;

  /** The value of the attribute named `name`, or null. */
  abstract get(name: string): AttributeValue | null;

  /** Every attribute, as a bag in the order they were set (built on first use for a request's own). */
  abstract asBag(): AttributeBag;

  /**
   * The value addressed by a clause key: `name` for a string attribute, or
   * `name[key]` for one entry of a string-map attribute
   * (`request.headers[x-user]`). Null when absent or not a string.
   */
  lookupString(clauseKey: string): string | null {
    const open = clauseKey.indexOf("[");
    if (open > 0 && clauseKey.endsWith("]")) {
      const v = this.get(clauseKey.substring(0, open));
      if (v === null || v.kind != ValueKind.StringMap) return null;
      return (v.map as StringMap).get(clauseKey.substring(open + 1, clauseKey.length - 1));
    }
    const v = this.get(clauseKey);
    if (v === null || v.kind != ValueKind.String) return null;
    return v.str;
  }
}

/**
 * The attribute bag of one request: names to typed values, in the order they
 * were first set. Later writes replace earlier values of the same name, which
 * is how the spec's order of application is realized.
 *
 * Attributes are found by their interned id (names.ts): `positions[id]` is
 * the entry's index plus one, so the hot path's lookups (`getId`, `setId`)
 * are one indexed load with no string compare. A name without an id (one
 * read from the wire, past the registry's ceiling) is found by a scan of the
 * entries that have none, usually zero. A bag can be cleared and refilled
 * without allocating (the evaluation scratch reuses its bag).
 */
export class AttributeBag extends AttributeSource {
  // Entries in the order first set: plain slots with a count, so a set is
  // a store (no array growth check per push). An entry with an id has its
  // name in the registry (names.ts); only the others keep theirs here.
  private nameSlots: StaticArray<string>;
  private valueSlots: StaticArray<AttributeValue>;
  /** Each entry's id, NO_ATTRIBUTE_ID for a name without one. */
  private idSlots: StaticArray<i32>;
  private count: i32 = 0;
  private positions: StaticArray<i32>;
  private withoutId: i32 = 0;

  // Slots start with room for a typical request; the position table with
  // room for every id interned so far, and always for the fixed ids (a set
  // or lookup of one by its constant then needs no bounds check).
  constructor(capacity: i32 = 32) {
    super();
    this.nameSlots = new StaticArray<string>(capacity);
    this.valueSlots = new StaticArray<AttributeValue>(capacity);
    this.idSlots = new StaticArray<i32>(capacity);
    this.positions = new StaticArray<i32>(max(capacity > 0 ? internedAttributeCount() + 8 : 0, FIXED_ID_COUNT));
  }

  get size(): i32 {
    return this.count;
  }

  /** The name of entry `i` (0 <= i < size). */
  nameAt(i: i32): string {
    const id = unchecked(this.idSlots[i]);
    return id >= 0 ? attributeName(id) : unchecked(this.nameSlots[i]);
  }

  /** The interned id of entry `i`'s name (0 <= i < size), NO_ATTRIBUTE_ID for a name without one. */
  // @ts-ignore: decorator
  @inline idAt(i: i32): i32 {
    return unchecked(this.idSlots[i]);
  }

  /**
   * Where entry `i`'s value and id are: `valuesStart + (i << alignof<usize>())`
   * and `idsStart + (i << 2)`, until the bag is next set. A loop over every
   * entry (a report's) reads these once instead of the slots' fields per entry.
   */
  // @ts-ignore: decorator
  @inline get valuesStart(): usize {
    return changetype<usize>(this.valueSlots);
  }

  // @ts-ignore: decorator
  @inline get idsStart(): usize {
    return changetype<usize>(this.idSlots);
  }

  /** The value of entry `i` (0 <= i < size). */
  // @ts-ignore: decorator
  @inline valueAt(i: i32): AttributeValue {
    return unchecked(this.valueSlots[i]);
  }

  /** The names in order, as a new array. */
  get names(): Array<string> {
    const out = new Array<string>(this.count);
    for (let i = 0; i < this.count; i++) unchecked((out[i] = this.nameAt(i)));
    return out;
  }

  /** The values in order, as a new array. */
  get values(): Array<AttributeValue> {
    const out = new Array<AttributeValue>(this.count);
    for (let i = 0; i < this.count; i++) unchecked((out[i] = this.valueAt(i)));
    return out;
  }

  asBag(): AttributeBag {
    return this;
  }

  /** Empties the bag, keeping its storage for the next request. */
  clear(): void {
    const ids = this.idSlots;
    const positions = this.positions;
    const n = this.count;
    // The whole position table at once (one instruction on an interpreter,
    // a memset on the host) unless it is much larger than the entries.
    const tableLength = <usize>positions.length;
    if (tableLength <= <usize>n << 4) {
      memory.fill(changetype<usize>(positions), 0, tableLength << 2);
    } else {
      for (let i = 0; i < n; i++) {
        const id = unchecked(ids[i]);
        if (id >= 0) unchecked((positions[id] = 0));
      }
    }
    // Let go of the request's values (slots are overwritten, not cleared, otherwise).
    memory.fill(changetype<usize>(this.valueSlots), 0, <usize>n << alignof<usize>());
    this.count = 0;
    this.withoutId = 0;
  }

  indexOfId(id: i32): i32 {
    const positions = this.positions;
    if (<u32>id >= <u32>FIXED_ID_COUNT && <u32>id >= <u32>positions.length) return -1;
    return unchecked(positions[id]) - 1;
  }

  indexOf(name: string): i32 {
    const id = attributeId(name);
    if (id >= 0) {
      const i = this.indexOfId(id);
      if (i >= 0 || this.withoutId == 0) return i;
    }
    return this.indexWithoutId(name);
  }

  // Entries set while their name had no id (it may have one by now).
  private indexWithoutId(name: string): i32 {
    if (this.withoutId == 0) return -1;
    const names = this.nameSlots;
    const ids = this.idSlots;
    for (let i = 0, n = this.count; i < n; i++) {
      if (unchecked(ids[i]) < 0 && sameKey(unchecked(names[i]), name)) return i;
    }
    return -1;
  }

  get(name: string): AttributeValue | null {
    const i = this.indexOf(name);
    return i < 0 ? null : this.valueAt(i);
  }

  getId(id: i32): AttributeValue | null {
    const i = this.indexOfId(id);
    return i < 0 ? null : this.valueAt(i);
  }

  has(name: string): bool {
    return this.indexOf(name) >= 0;
  }

  hasId(id: i32): bool {
    return this.indexOfId(id) >= 0;
  }

  /** Sets `name` (interned if it has no id yet). */
  set(name: string, value: AttributeValue): void {
    const id = internAttribute(name);
    if (id >= 0) this.setId(id, value);
    else this.setWithoutId(name, value);
  }

  /** Sets a name read from the wire: looked up, never interned. */
  setTransient(name: string, value: AttributeValue): void {
    const id = attributeId(name);
    if (id >= 0) this.setId(id, value);
    else this.setWithoutId(name, value);
  }

  // Inlined where it is called (a request sets some forty attributes; a
  // call costs more than the set on an interpreter such as WAMR): a set over
  // an entry, or a new entry with room for it, is a few stores; the rest is
  // setIdElsewhere.
  // @ts-ignore: decorator
  @inline setId(id: i32, value: AttributeValue): void {
    const positions = this.positions;
    const count = this.count;
    if (<u32>id < <u32>FIXED_ID_COUNT || <u32>id < <u32>positions.length) {
      const at = unchecked(positions[id]);
      if (at > 0) {
        unchecked((this.valueSlots[at - 1] = value));
        return;
      }
      if (this.withoutId == 0 && count < this.idSlots.length) {
        unchecked((this.valueSlots[count] = value));
        unchecked((this.idSlots[count] = id));
        this.count = count + 1;
        unchecked((positions[id] = count + 1));
        return;
      }
    }
    this.setIdElsewhere(id, value);
  }

  // Only from setId, which has already set an entry with this id when there is one.
  private setIdElsewhere(id: i32, value: AttributeValue): void {
    let positions = this.positions;
    if (<u32>id >= <u32>positions.length) positions = this.growPositions(id);
    if (this.withoutId > 0) {
      // Set earlier under the same name before it had an id.
      const i = this.indexWithoutId(attributeName(id));
      if (i >= 0) {
        unchecked((this.valueSlots[i] = value));
        return;
      }
    }
    unchecked((positions[id] = this.append("", value, id) + 1));
  }

  private setWithoutId(name: string, value: AttributeValue): void {
    const i = this.indexWithoutId(name);
    if (i >= 0) {
      unchecked((this.valueSlots[i] = value));
      return;
    }
    this.append(name, value, NO_ATTRIBUTE_ID);
    this.withoutId++;
  }

  /** Adds an entry at the end (`name` only for one without an id); returns its index. */
  // @ts-ignore: decorator
  @inline private append(name: string, value: AttributeValue, id: i32): i32 {
    const i = this.count;
    if (i == this.idSlots.length) this.growSlots();
    if (id < 0) unchecked((this.nameSlots[i] = name));
    unchecked((this.valueSlots[i] = value));
    unchecked((this.idSlots[i] = id));
    this.count = i + 1;
    return i;
  }

  private growSlots(): void {
    const n = this.count;
    const room = max(8, n << 1);
    const names = new StaticArray<string>(room);
    const values = new StaticArray<AttributeValue>(room);
    const ids = new StaticArray<i32>(room);
    for (let i = 0; i < n; i++) {
      unchecked((names[i] = unchecked(this.nameSlots[i])));
      unchecked((values[i] = this.valueAt(i)));
      unchecked((ids[i] = this.idSlots[i]));
    }
    this.nameSlots = names;
    this.valueSlots = values;
    this.idSlots = ids;
  }

  // Ids interned after this bag was made (a later configuration's names).
  private growPositions(id: i32): StaticArray<i32> {
    const old = this.positions;
    const grown = new StaticArray<i32>(max(id + 1, internedAttributeCount()) + 8);
    memory.copy(changetype<usize>(grown), changetype<usize>(old), <usize>old.length << 2);
    this.positions = grown;
    return grown;
  }

  setString(name: string, s: string): void {
    this.set(name, AttributeValue.ofString(s));
  }

  setIdString(id: i32, s: string): void {
    this.setId(id, AttributeValue.ofString(s));
  }

  /**
   * Empties the bag and sets `other`'s entries, as `clear` then `merge`
   * would. When every entry of `other` has an id (ids are unique in a bag, so
   * each is a new entry here) its slots are copied whole and only the
   * position table is written per entry: a request's report starts from the
   * static attributes this way. Inlined into its one caller (a call per report saved).
   */
  // @ts-ignore: decorator
  @inline assign(other: AttributeBag): void {
    this.clear();
    const n = other.count;
    if (other.withoutId != 0 || n > this.idSlots.length || other.positions.length > this.positions.length) {
      this.merge(other);
      return;
    }
    // References copied as bytes: the runtime's collector has no write barrier.
    memory.copy(changetype<usize>(this.valueSlots), changetype<usize>(other.valueSlots), <usize>n << alignof<usize>());
    memory.copy(changetype<usize>(this.idSlots), changetype<usize>(other.idSlots), <usize>n << 2);
    const ids = this.idSlots;
    const positions = this.positions;
    for (let i = 0; i < n; i++) unchecked((positions[unchecked(ids[i])] = i + 1));
    this.count = n;
  }

  /** No entry has an id below `limit` (one of the fixed ids, so `appendFixed` may add those). */
  // @ts-ignore: decorator
  @inline holdsNoIdBelow(limit: i32): bool {
    const ids = this.idSlots;
    for (let i = 0, n = this.count; i < n; i++) if (<u32>unchecked(ids[i]) < <u32>limit) return false;
    return true;
  }

  /** Room for `n` entries more that `appendFixed` may add. */
  // @ts-ignore: decorator
  @inline hasRoomFor(n: i32): bool {
    return this.withoutId == 0 && this.count + n <= this.idSlots.length;
  }

  /**
   * Adds fixed id `id`, which the bag does not hold, at the end: what
   * `setId` does for a new entry, without its checks (the caller made sure
   * with `holdsNoIdBelow` and `hasRoomFor`).
   */
  // @ts-ignore: decorator
  @inline appendFixed(id: i32, value: AttributeValue): void {
    const count = this.count;
    unchecked((this.valueSlots[count] = value));
    unchecked((this.idSlots[count] = id));
    unchecked((this.positions[id] = count + 1));
    this.count = count + 1;
  }

  /** Copies every attribute of `other` over this bag (later wins). */
  // @ts-ignore: decorator
  @inline merge(other: AttributeBag): void {
    const ids = other.idSlots;
    for (let i = 0, n = other.count; i < n; i++) {
      const id = unchecked(ids[i]);
      if (id >= 0) this.setId(id, other.valueAt(i));
      else this.setWithoutId(other.nameAt(i), other.valueAt(i));
    }
  }

  /** A string attribute's value, or null if absent or not a string. */
  getString(name: string): string | null {
    const v = this.get(name);
    if (v === null || v.kind != ValueKind.String) return null;
    return v.str;
  }

  /**
   * A bag that may outlive the request: values shared, except the request's
   * own (RequestValues), which its next use would rewrite: those are copied.
   */
  clone(): AttributeBag {
    const b = new AttributeBag(this.count);
    const ids = this.idSlots;
    for (let i = 0, n = this.count; i < n; i++) {
      const value = this.valueAt(i);
      const kept = value.requestOwned ? value.copy() : value;
      const id = unchecked(ids[i]);
      if (id >= 0) b.setId(id, kept);
      else b.setWithoutId(this.nameAt(i), kept);
    }
    return b;
  }
}
