// The value of a metric label, written as upstream's metric instances wrote
// their dimensions: attributes tried in order, then a literal default, e.g.
// `source.labels["app"] | "unknown"` or `response.code | 200`. That is the
// fallback part of the hub's expression language; conditionals are not
// offered (the standard labels that need one are built in: standard_metrics.ts).
import { attributeText, type AttributeLookup, type AttributeValue } from "../wire/compressed.ts";

export type LabelTerm = { readonly kind: "attribute"; readonly name: string; readonly key?: string } | { readonly kind: "literal"; readonly value: string };

/** Terms tried in order; the first that yields text is the label's value (none: the empty string). */
export interface LabelExpression {
  readonly text: string;
  readonly terms: readonly LabelTerm[];
}

const ATTRIBUTE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const MAP_ENTRY = /^([A-Za-z_][A-Za-z0-9_.-]*)\[\s*(?:"([^"]*)"|'([^']*)'|([^\]"']+))\s*\]$/;

/**
 * Parses `term | term …`; throws an Error saying what is wrong and where.
 *
 * @example parseLabelExpression('source.labels["app"] | "unknown"').terms.length // 2
 */
export function parseLabelExpression(text: string): LabelExpression {
  const parts = splitTerms(text);
  const terms = parts.map((raw, i): LabelTerm => {
    const t = raw.trim();
    const where = parts.length > 1 ? `term ${i + 1} (${JSON.stringify(t)})` : JSON.stringify(t);
    if (t === "") throw new Error(`${where}: empty`);
    const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(t) ?? /^'([^']*)'$/.exec(t);
    if (quoted) return { kind: "literal", value: quoted[1].replace(/\\(.)/g, "$1") };
    if (/^-?\d+$/.test(t) || t === "true" || t === "false") return { kind: "literal", value: t };
    const entry = MAP_ENTRY.exec(t);
    if (entry) return { kind: "attribute", name: entry[1], key: entry[2] ?? entry[3] ?? entry[4].trim() };
    if (ATTRIBUTE.test(t)) return { kind: "attribute", name: t };
    throw new Error(
      `${where}: expected an attribute (request.host, source.labels["app"]), a quoted string or a number; conditionals and other operators are not supported`,
    );
  });
  terms.slice(0, -1).forEach((t, i) => {
    if (t.kind === "literal") throw new Error(`term ${i + 1} (${JSON.stringify(t.value)}): a literal always applies, so the terms after it never would`);
  });
  return { text, terms };
}

function splitTerms(text: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === "\\" && quote === '"') current += c + (text[++i] ?? "");
      else {
        if (c === quote) quote = undefined;
        current += c;
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      current += c;
    } else if (c === "|") {
      parts.push(current);
      current = "";
    } else current += c;
  }
  if (quote !== undefined) throw new Error(`unterminated string in ${JSON.stringify(text)}`);
  parts.push(current);
  return parts;
}

/** An attribute's value as label text: strings as they are, numbers in decimal, booleans, durations in ms; maps and bytes have none. */
export function labelText(v: AttributeValue): string | undefined {
  if ("durationValue" in v) return String(durationMs(v.durationValue));
  return attributeText(v);
}

export function durationMs(d: { seconds: bigint; nanos: number }): number {
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

export function lookupTerm(attributes: AttributeLookup, t: Extract<LabelTerm, { kind: "attribute" }>): string | undefined {
  const v = attributes.get(t.name);
  if (v === undefined) return undefined;
  if (t.key === undefined) return labelText(v);
  return "stringMapValue" in v ? v.stringMapValue.entries[t.key] : undefined;
}

export function evaluateLabel(expression: LabelExpression, attributes: AttributeLookup): string {
  for (const t of expression.terms) {
    if (t.kind === "literal") return t.value;
    const v = lookupTerm(attributes, t);
    if (v !== undefined) return v;
  }
  return "";
}
