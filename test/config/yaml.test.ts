// How every reader parses YAML (host/config/yaml.ts): JSON texts take JSON.parse
// only where that reads them exactly as the YAML parser does.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { YAML_OPTIONS, parseYaml, yamlDocuments } from "../../host/config/yaml.ts";

describe("JSON texts", () => {
  it("read the same as the YAML parser reads them", () => {
    const texts = [
      '{"a": 1, "b": [true, null, "x", {"c": -1.5e3}], "d": {"e": "\\u00e9\\n"}}',
      '  [1, "two", {"three": {}}]\n',
      '{"s": "a \\" quote, a } brace and a \\\\ backslash", "t": {"s": 1}}',
      '{"a": {"k": 1}, "b": {"k": 2}}',
      '{"<<": {"a": 1}, "b": 2}',
    ];
    for (const text of texts) {
      assert.deepEqual(parseYaml(text), parse(text, YAML_OPTIONS), text);
      assert.deepEqual(yamlDocuments(text), [{ ok: true, value: parse(text, YAML_OPTIONS) }], text);
    }
  });

  it("a duplicate key is still refused, also written with an escape", () => {
    for (const text of ['{"a": 1, "a": 2}', '{"x": {"b": 1, "c": [], "b": 2}}', '{"a": 1, "\\u0061": 2}']) {
      assert.throws(() => parseYaml(text), /unique/, text);
      assert.equal(yamlDocuments(text)[0].ok, false, text);
    }
  });
});
