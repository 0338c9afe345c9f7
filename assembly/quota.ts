import { AttributeBag } from "./attributes/bag";
import { StringMatch } from "./string_match";

/** One condition of an AttributeMatch: `key` is `name` or `name[mapKey]`. */
export class Clause {
  constructor(
    public key: string,
    public match: StringMatch,
  ) {}
}

/** Holds when every clause holds (an empty clause map holds for every request). */
export class AttributeMatch {
  clauses: Array<Clause> = [];

  holds(bag: AttributeBag): bool {
    for (let i = 0; i < this.clauses.length; i++) {
      const c = this.clauses[i];
      // Only string values (or string-map entries) can satisfy a clause.
      const value = bag.lookupString(c.key);
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
