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

  it("matches a copying reference over random add, replace, remove and reads, leaving every handed-in or read-back list as it was", () => {
    // Seeded, so a failure repeats.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const names = ["a", "b", "c", "d"];
    for (let run = 0; run < 300; run++) {
      const given: HeaderList = Array.from({ length: random(5) }, (_, i) => [names[random(4)], `g${i}`]);
      const kept: Array<{ list: HeaderList; copy: HeaderList }> = [{ list: given, copy: structuredClone(given) }];
      const map = HeaderMap.of(given);
      let model: HeaderList = structuredClone(given);
      for (let step = 0; step < 12; step++) {
        const name = names[random(4)];
        const value = `v${run}.${step}`;
        const op = random(5);
        if (op === 0) {
          map.add(name, value);
          model = [...model, [name, value]];
        } else if (op === 1) {
          map.replace(name, value);
          const at = model.findIndex(([k]) => k === name);
          model = at < 0 ? [...model, [name, value]] : model.flatMap(([k, v], i) => (i === at ? [[k, value]] : k === name ? [] : [[k, v]]));
        } else if (op === 2) {
          map.remove(name);
          model = model.filter(([k]) => k !== name);
        } else {
          const read = map.pairs;
          assert.deepEqual(read, model);
          // Dense: every index holds a pair (the embedder iterates it as it likes).
          assert.equal(Object.keys(read).length, read.length);
          kept.push({ list: read, copy: structuredClone(read) });
        }
      }
      assert.deepEqual(map.pairs, model);
      for (const { list, copy } of kept) assert.deepEqual(list, copy);
    }
  });
});
