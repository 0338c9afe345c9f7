import assert from "node:assert/strict";
import { it } from "node:test";
import { parse } from "yaml";
import { type Catalog, type CatalogChecks, decodeDocuments, filterChecks } from "../../host/config/catalog.ts";
import { parseSourceText } from "../../host/config/sources.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";

let checks: CatalogChecks | undefined;
/** The filter's own template and regex checks (build/filter.wasm), loaded once. */
export function filterPatternChecks(): CatalogChecks {
  checks ??= filterChecks(FilterModule.load());
  return checks;
}

export const FILE = "table.yaml";

/** Decodes YAML text (one or more documents) through the catalog. */
export function decode(yaml: string, options: { referential?: boolean; defaultNamespace?: string; domain?: string } = {}): Catalog {
  const { documents, problems } = parseSourceText(yaml, FILE);
  assert.deepEqual(problems, [], "test documents must parse");
  return decodeDocuments(documents, filterPatternChecks(), options);
}

/** Sets (or with `undefined`, deletes) a dotted path such as `spec.rules.0.to` in a parsed document. */
export function setPath(body: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let cur: any = body;
  for (const p of parts.slice(0, -1)) {
    if (cur[p] === undefined || cur[p] === null) cur[p] = /^\d+$/.test(p) ? [] : {};
    cur = cur[p];
  }
  const last = parts[parts.length - 1];
  if (value === undefined) delete cur[last];
  else cur[last] = value;
}

/**
 * A row: a name, the changes to the baseline (path → value; undefined
 * deletes), and either "ok" (plus an optional check of the decoded spec) or
 * the expected [fieldPath, message pattern] of the first error.
 */
export type Row =
  | [name: string, changes: Record<string, unknown>, expect: "ok", check?: (spec: any) => void]
  | [name: string, changes: Record<string, unknown>, expect: [fieldPath: string, message: RegExp]];

/** One test per row against a valid baseline document (itself tested first). */
export function tableTest(baseline: string, rows: Row[], checkBaseline?: (spec: any) => void): void {
  it("accepts the baseline", () => {
    const c = decode(baseline);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(c.warnings, []);
    assert.equal(c.resources.length, 1);
    assert.ok(Object.isFrozen(c.resources[0].spec));
    checkBaseline?.(c.resources[0].spec);
  });
  for (const [name, changes, expect, check] of rows) {
    it(`${expect === "ok" ? "accepts" : "refuses"}: ${name}`, () => {
      const body = parse(baseline) as Record<string, unknown>;
      for (const [path, value] of Object.entries(changes)) setPath(body, path, value);
      const c = decode(JSON.stringify(body));
      if (expect === "ok") {
        assert.deepEqual(c.errors, [], "no errors");
        assert.equal(c.resources.length, 1);
        (check as ((spec: any) => void) | undefined)?.(c.resources[0].spec);
      } else {
        assert.equal(c.resources.length, 0, "the document is refused");
        const [fieldPath, message] = expect;
        assert.ok(c.errors.length > 0, "an error is reported");
        const e = c.errors[0];
        assert.equal(e.file, FILE);
        assert.equal(e.fieldPath, fieldPath, `field path of: ${e.message}`);
        assert.match(e.message, message);
      }
    });
  }
}
