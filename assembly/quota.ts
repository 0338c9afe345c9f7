import { AttributeSource } from "./attributes/bag";
import { internAttribute } from "./attributes/names";
import { HeaderMap } from "./attributes/header_map";
import { AttributeValue, ValueKind } from "./attributes/value";
import { knownSlotOfString } from "./known_strings";
import { StringMatch } from "./string_match";
import { isNullString } from "./text";

/**
 * One condition of an AttributeMatch: `key` is `name` or `name[mapKey]`,
 * split and interned once when the configuration is compiled, so matching a
 * request looks the attribute up by id.
 */
export class Clause {
  /** The attribute's interned id. */
  readonly id: i32;
  /** The entry of a string-map attribute, or null for the attribute itself. */
  readonly mapKey: string | null;
  /** The entry's known-string slot, for a header map (header_map.ts); -1 when it has none. */
  readonly entrySlot: i32;

  constructor(
    public key: string,
    public match: StringMatch,
  ) {
    const open = key.indexOf("[");
    const entry = open > 0 && key.endsWith("]");
    this.id = internAttribute(entry ? key.substring(0, open) : key);
    const mapKey = entry ? key.substring(open + 1, key.length - 1) : null;
    this.mapKey = mapKey;
    this.entrySlot = mapKey !== null ? knownSlotOfString(mapKey) : -1;
  }

  /**
   * The clause holds in `bag`: the attribute (or map entry) is a string the
   * match accepts, read in place when it is a view of the request's bytes.
   */
  // @ts-ignore: decorator
  @inline holds<T extends AttributeSource>(bag: T): bool {
    const id = this.id;
    if (id < 0) {
      // Past the registry's ceiling: found by name.
      const s = bag.lookupString(this.key);
      return !isNullString(s) && this.match.matches(s!);
    }
    const v = bag.getId(id);
    if (v === null) return false;
    const mapKey = this.mapKey;
    if (isNullString(mapKey)) return v.kind == ValueKind.String && this.match.matchesValue(v);
    const map = v.map;
    if (v.kind != ValueKind.StringMap || map === null) return false;
    const i = this.entrySlot >= 0 && map instanceof HeaderMap ? changetype<HeaderMap>(map).indexOfSlot(this.entrySlot) : map.indexOf(mapKey!);
    if (i < 0) return false;
    map.valueInto(i, entryValue);
    return this.match.matchesValue(entryValue);
  }
}

// The map entry a clause is testing (never kept past the test).
const entryValue = new AttributeValue();

/** Holds when every clause holds (an empty clause map holds for every request). */
export class AttributeMatch {
  clauses: Array<Clause> = [];

  // Generic over the source, so a request's own attributes (evaluate.ts) are
  // read without a virtual call.
  holds<T extends AttributeSource>(bag: T): bool {
    const clauses = this.clauses;
    for (let i = 0, n = clauses.length; i < n; i++) {
      const c = unchecked(clauses[i]);
      // Only string values (or string-map entries) can satisfy a clause.
      if (!c.holds<T>(bag)) return false;
    }
    return true;
  }
}

export class QuotaCharge {
  constructor(
    public quota: string,
    public charge: i64,
  ) {}
}

/** A QuotaRule: charged when its match list is empty or any one match holds. */
export class QuotaRule {
  matches: Array<AttributeMatch> = [];
  quotas: Array<QuotaCharge> = [];

  holds<T extends AttributeSource>(bag: T): bool {
    const matches = this.matches;
    const n = matches.length;
    if (n == 0) return true;
    for (let i = 0; i < n; i++) if (unchecked(matches[i]).holds<T>(bag)) return true;
    return false;
  }
}

/**
 * The quota requirements of a request: every rule of every QuotaSpec is
 * evaluated on the final attribute bag, and the quotas of each rule that holds
 * are appended in rule order, then quota order (no de-duplication, as upstream).
 */
export function quotaCharges(rules: Array<QuotaRule>, bag: AttributeSource, out: Array<QuotaCharge>): void {
  for (let i = 0, n = rules.length; i < n; i++) {
    const rule = unchecked(rules[i]);
    if (!rule.holds(bag)) continue;
    const quotas = rule.quotas;
    for (let j = 0, m = quotas.length; j < m; j++) out.push(unchecked(quotas[j]));
  }
}

/**
 * quotaCharges into `out` in place of what it held: its entries are
 * overwritten and its length changed only when the count does (a request's
 * evaluation reuses its list; Array's push and length setter are calls).
 */
export function replaceQuotaCharges<T extends AttributeSource>(rules: Array<QuotaRule>, bag: T, out: Array<QuotaCharge>): void {
  const had = out.length;
  let count = 0;
  for (let i = 0, n = rules.length; i < n; i++) {
    const rule = unchecked(rules[i]);
    if (!rule.holds<T>(bag)) continue;
    const quotas = rule.quotas;
    for (let j = 0, m = quotas.length; j < m; j++) {
      const charge = unchecked(quotas[j]);
      if (count < had) {
        // Array has no unchecked store: its slot written as its setter would, without the call.
        store<QuotaCharge>(out.dataStart + (<usize>count << alignof<QuotaCharge>()), charge);
        __link(changetype<usize>(out), changetype<usize>(charge), true);
      } else {
        out.push(charge);
      }
      count++;
    }
  }
  if (out.length != count) out.length = count;
}
