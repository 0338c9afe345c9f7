import { AttributeBag } from "./bag";
import { StringMap } from "./string_map";
import { AttributeValue, ValueKind } from "./value";

/**
 * Where a request's attributes are read from by id: a bag (bag.ts), or a
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
