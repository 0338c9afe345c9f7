import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HeaderMap } from "../../host/wasm/header_map.ts";
import type { HeaderList } from "../../host/wasm/abi_types.ts";

// A stream's header map as the module changes it (proxy_add/replace/remove_header_map_value).

describe("HeaderMap", () => {
  it("replace: the first pair takes the value, later ones go; appended when absent", () => {
    const map = HeaderMap.of([
      ["a", "1"],
      ["b", "2"],
      ["a", "3"],
      ["c", "4"],
      ["a", "5"],
    ]);
    map.replace("a", "x");
    assert.deepEqual(map.pairs, [
      ["a", "x"],
      ["b", "2"],
      ["c", "4"],
    ]);
    map.replace("d", "y");
    map.add("b", "z");
    map.remove("c");
    assert.deepEqual(map.pairs, [
      ["a", "x"],
      ["b", "2"],
      ["d", "y"],
      ["b", "z"],
    ]);
  });

  it("never modifies a list the embedder handed in or read back", () => {
    const given: HeaderList = [
      ["a", "1"],
      ["b", "2"],
    ];
    const map = HeaderMap.of(given);
    map.add("c", "3");
    map.replace("a", "x");
    assert.deepEqual(given, [
      ["a", "1"],
      ["b", "2"],
    ]);
    const read = map.pairs;
    const snapshot = structuredClone(read);
    map.add("d", "4");
    map.replace("b", "y");
    map.remove("c");
    assert.deepEqual(read, snapshot);
    assert.deepEqual(map.pairs, [
      ["a", "x"],
      ["b", "y"],
      ["d", "4"],
    ]);
  });

  it("lower-cases names it is given", () => {
    assert.deepEqual(HeaderMap.of([["X-A", "1"]]).pairs, [["x-a", "1"]]);
  });
});
