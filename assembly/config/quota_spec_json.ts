import { JsonKind, JsonValue } from "../json";
import { AttributeMatch, Clause, QuotaCharge, QuotaRule } from "../quota";
import { Regex } from "../regex/index";
import { MatchKind, StringMatch } from "../string_match";
import { ConfigReader } from "./reader";

// A QuotaSpec body ({"rules": [...]}) into QuotaRules, as a QuotaSpec
// resource bound to a service and TcpClientConfig.connectionQuotaSpec both
// carry it (hub-client.md §5).

const MAX_CHARGE: i64 = 2147483647;

/** Appends the rules of the QuotaSpec `v` to `out`; `p` is the field path used in errors. */
export function readQuotaSpec(r: ConfigReader, v: JsonValue | null, p: string, out: Array<QuotaRule>): void {
  const body = r.object(v, p);
  if (body === null) return;
  const rules = r.array(r.member(body, "rules"), p + ".rules");
  for (let i = 0; i < rules.length; i++) {
    const rp = p + ".rules[" + i.toString() + "]";
    const ruleObj = r.object(rules[i], rp);
    if (ruleObj === null) continue;
    const rule = new QuotaRule();
    const matches = r.array(r.member(ruleObj, "match"), rp + ".match");
    for (let j = 0; j < matches.length; j++) {
      const mp = rp + ".match[" + j.toString() + "]";
      const match = new AttributeMatch();
      const clauses = r.object(r.member(r.object(matches[j], mp), "clause"), mp + ".clause");
      if (clauses !== null) {
        for (let k = 0; k < clauses.keys.length; k++) {
          const sm = readStringMatch(r, clauses.values[k], mp + ".clause[" + clauses.keys[k] + "]");
          if (sm !== null) match.clauses.push(new Clause(clauses.keys[k], sm as StringMatch));
        }
      }
      rule.matches.push(match);
    }
    const quotas = r.array(r.member(ruleObj, "quotas"), rp + ".quotas");
    for (let j = 0; j < quotas.length; j++) {
      const qp = rp + ".quotas[" + j.toString() + "]";
      const q = r.object(quotas[j], qp);
      const name = r.string(r.member(q, "quota"), qp + ".quota");
      if (name.length == 0) r.fail(qp + ".quota", "expected a quota name");
      // An absent charge means 1: every matching request costs one unit.
      const charge = r.integer(r.member(q, "charge"), qp + ".charge", 1, MAX_CHARGE, 1);
      rule.quotas.push(new QuotaCharge(name, charge));
    }
    out.push(rule);
  }
}

function readStringMatch(r: ConfigReader, v: JsonValue, p: string): StringMatch | null {
  if (v.kind != JsonKind.Object || v.keys.length != 1) {
    r.fail(p, "expected exactly one of exact, prefix, regex");
    return null;
  }
  const which = v.keys[0];
  const text = r.string(v.values[0], p + "." + which);
  if (which == "exact") return new StringMatch(MatchKind.Exact, text, null);
  if (which == "prefix") return new StringMatch(MatchKind.Prefix, text, null);
  if (which == "regex") {
    const compiled = Regex.compile(text);
    if (compiled.regex === null) {
      r.fail(p + ".regex", compiled.error);
      return null;
    }
    return new StringMatch(MatchKind.Regex, text, compiled.regex);
  }
  r.fail(p + "." + which, "unknown field (expected exact, prefix or regex)");
  return null;
}
