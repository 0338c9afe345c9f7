import { AttributeBag } from "./attributes/bag";
import { internAttribute } from "./attributes/names";
import { ValueKind } from "./attributes/value";
import { StringMatch } from "./string_match";

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

  constructor(
    public key: string,
    public match: StringMatch,
  ) {
    const open = key.indexOf("[");
    const entry = open > 0 && key.endsWith("]");
    this.id = internAttribute(entry ? key.substring(0, open) : key);
    this.mapKey = entry ? key.substring(open + 1, key.length - 1) : null;
  }

  /** The string the clause tests in `bag`; null when absent or not a string. */
  valueIn(bag: AttributeBag): string | null {
    const id = this.id;
    if (id < 0) return bag.lookupString(this.key); // past the registry's ceiling
    const v = bag.getId(id);
    if (v === null) return null;
    const mapKey = this.mapKey;
    if (mapKey === null) return v.kind == ValueKind.String ? v.str : null;
    const map = v.map;
    return v.kind == ValueKind.StringMap && map !== null ? map.get(mapKey) : null;
  }
}

/** Holds when every clause holds (an empty clause map holds for every request). */
export class AttributeMatch {
  clauses: Array<Clause> = [];

  holds(bag: AttributeBag): bool {
    for (let i = 0; i < this.clauses.length; i++) {
      const c = this.clauses[i];
      // Only string values (or string-map entries) can satisfy a clause.
      const value = c.valueIn(bag);
      if (value === null || !c.match.matches(value as string)) return false;
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

  holds(bag: AttributeBag): bool {
    if (this.matches.length == 0) return true;
    for (let i = 0; i < this.matches.length; i++) if (this.matches[i].holds(bag)) return true;
    return false;
  }
}

/**
 * The quota requirements of a request: every rule of every QuotaSpec is
 * evaluated on the final attribute bag, and the quotas of each rule that holds
 * are appended in rule order, then quota order (no de-duplication, as upstream).
 */
export function quotaCharges(rules: Array<QuotaRule>, bag: AttributeBag, out: Array<QuotaCharge>): void {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    if (!rule.holds(bag)) continue;
    for (let j = 0; j < rule.quotas.length; j++) out.push(rule.quotas[j]);
  }
}
