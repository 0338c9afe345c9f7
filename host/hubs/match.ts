import type { AttributeRef, Clause, HubRule } from "../config/resources/hub_rules.ts";
import type { AttributeMap, AttributeValue } from "../wire/compressed.ts";
import type { HubConfig } from "./hub_config.ts";
import type { ReferencedAttributes } from "./referenced.ts";

/** The attribute that scopes rules of other namespaces than the default one. */
export const NAMESPACE_ATTRIBUTE = "destination.namespace";

/**
 * The value `ref` names, recording the reference: `name` is EXACT when
 * present and ABSENCE otherwise; `name[key]` is EXACT (with map key) when the
 * string map has the entry and ABSENCE (with map key) when it has not. A
 * `name[key]` on an attribute that is not a string map is absent, and the
 * attribute is referenced EXACT (its type decides).
 */
export function lookup(attributes: AttributeMap, ref: AttributeRef, referenced: ReferencedAttributes): AttributeValue | undefined {
  const v = attributes.get(ref.name);
  if (ref.key === undefined) {
    if (v === undefined) referenced.absent(ref.name);
    else referenced.exact(ref.name);
    return v;
  }
  if (v !== undefined && !("stringMapValue" in v)) {
    referenced.exact(ref.name);
    return undefined;
  }
  const entries = v?.stringMapValue.entries;
  if (entries !== undefined && Object.hasOwn(entries, ref.key)) {
    referenced.exact(ref.name, ref.key);
    return { stringValue: entries[ref.key] };
  }
  referenced.absent(ref.name, ref.key);
  return undefined;
}

/** A clause holds only for a string value (hub-client.md §5): exact, prefix, full regex match, or mere presence. */
export function clauseHolds(attributes: AttributeMap, clause: Clause, referenced: ReferencedAttributes): boolean {
  const v = lookup(attributes, clause.attribute, referenced);
  if (v === undefined || !("stringValue" in v)) return false;
  const s = v.stringValue;
  const m = clause.match;
  switch (m.kind) {
    case "exact":
      return s === m.value;
    case "prefix":
      return s.startsWith(m.value);
    case "regex":
      return m.matcher.matches(s);
    case "present":
      return true;
  }
}

/**
 * True when the rule applies to the request: it is in scope (default
 * namespace, or destination.namespace equal to its namespace) and its match
 * list is empty or any AttributeMatch holds (all of that match's clauses).
 * Evaluation stops as soon as the answer is known, so only the attributes
 * that decided it are referenced.
 */
export function ruleApplies(config: HubConfig, rule: HubRule, attributes: AttributeMap, referenced: ReferencedAttributes): boolean {
  if (rule.namespace !== config.defaultNamespace) {
    const ns = lookup(attributes, { name: NAMESPACE_ATTRIBUTE, text: NAMESPACE_ATTRIBUTE }, referenced);
    if (ns === undefined || !("stringValue" in ns) || ns.stringValue !== rule.namespace) return false;
  }
  if (rule.match.length === 0) return true;
  return rule.match.some((m) => m.clauses.every((c) => clauseHolds(attributes, c, referenced)));
}
