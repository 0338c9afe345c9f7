import { AttributeValue, ValueKind } from "./value";
import { sameKey, StringMap } from "./string_map";

/**
 * The attribute bag of one request: names to typed values, in the order they
 * were first set. Later writes replace earlier values of the same name, which
 * is how the spec's order of application is realized.
 */
export class AttributeBag {
  names: Array<string>;
  values: Array<AttributeValue>;

  // A request's bag holds a few dozen names: a scan that compares lengths
  // first beats hashing, and allocates nothing (allocation is what costs most
  // in AssemblyScript). Arrays start with room for a typical request.
  constructor(capacity: i32 = 32) {
    const names = new Array<string>(capacity);
    const values = new Array<AttributeValue>(capacity);
    names.length = 0;
    values.length = 0;
    this.names = names;
    this.values = values;
  }

  get size(): i32 {
    return this.names.length;
  }

  indexOf(name: string): i32 {
    const names = this.names;
    for (let i = 0, n = names.length; i < n; i++) {
      if (sameKey(unchecked(names[i]), name)) return i;
    }
    return -1;
  }

  get(name: string): AttributeValue | null {
    const i = this.indexOf(name);
    return i < 0 ? null : unchecked(this.values[i]);
  }

  has(name: string): bool {
    return this.indexOf(name) >= 0;
  }

  set(name: string, value: AttributeValue): void {
    const i = this.indexOf(name);
    if (i >= 0) {
      unchecked((this.values[i] = value));
      return;
    }
    this.names.push(name);
    this.values.push(value);
  }

  setString(name: string, s: string): void {
    this.set(name, AttributeValue.ofString(s));
  }

  /** Copies every attribute of `other` over this bag (later wins). */
  merge(other: AttributeBag): void {
    for (let i = 0; i < other.names.length; i++) this.set(other.names[i], other.values[i]);
  }

  /** A string attribute's value, or null if absent or not a string. */
  getString(name: string): string | null {
    const v = this.get(name);
    if (v === null || v.kind != ValueKind.String) return null;
    return v.str;
  }

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
    return this.getString(clauseKey);
  }

  clone(): AttributeBag {
    const b = new AttributeBag(this.names.length);
    b.merge(this);
    return b;
  }
}
