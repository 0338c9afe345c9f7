import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { IdTable } from "../../host/wasm/id_table.ts";

// The VM's open streams by context id: it must answer exactly as a Map would, whatever the order of adds and removes.

describe("IdTable", () => {
  it("answers get, has, size and delete as a Map does over any sequence of operations", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), id: fc.integer({ min: 1, max: 300 }), value: fc.integer() }),
      fc.record({ kind: fc.constant("delete" as const), id: fc.integer({ min: 1, max: 300 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), fc.integer({ min: 1, max: 64 }), (ops, capacity) => {
        const table = new IdTable<number>(capacity);
        const map = new Map<number, number>();
        for (const o of ops) {
          if (o.kind === "set") {
            table.set(o.id, o.value);
            map.set(o.id, o.value);
          } else assert.equal(table.delete(o.id), map.delete(o.id));
          assert.equal(table.size, map.size);
        }
        for (let id = 1; id <= 300; id++) {
          assert.equal(table.has(id), map.has(id));
          assert.equal(table.get(id), map.get(id));
        }
        assert.deepEqual(new Map(table.entries()), map);
        // Removing entries while walking them (as the filter host wakes paused streams) visits each once.
        const seen: number[] = [];
        for (const [id] of table) {
          seen.push(id);
          table.delete(id);
        }
        assert.deepEqual(
          seen.sort((a, b) => a - b),
          [...map.keys()].sort((a, b) => a - b),
        );
        assert.equal(table.size, 0);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps serving as streams come and go far past its capacity, ids growing", () => {
    const table = new IdTable<{ id: number }>(8);
    const open: number[] = [];
    for (let id = 1; id <= 100_000; id++) {
      table.set(id, { id });
      open.push(id);
      if (open.length > 20) {
        const gone = open.splice((id * 7) % open.length, 1)[0];
        assert.equal(table.delete(gone), true);
        assert.equal(table.get(gone), undefined);
      }
    }
    assert.equal(table.size, open.length);
    for (const id of open) assert.deepEqual(table.get(id), { id });
    table.clear();
    assert.equal(table.size, 0);
    assert.equal(table.get(open[0]), undefined);
    table.set(open[0], { id: 1 });
    assert.deepEqual(table.get(open[0]), { id: 1 });
  });

  it("answers as a Map while one id stays open past hundreds of newer ones (a request waiting for the hub), then goes", () => {
    const table = new IdTable<number>();
    const map = new Map<number, number>();
    const open: number[] = [];
    let kept = 0;
    for (let id = 1; id <= 5_000; id++) {
      table.set(id, id * 2);
      map.set(id, id * 2);
      if (id % 1_000 === 0) kept = id;
      else open.push(id);
      if (open.length > 16) {
        const gone = open.shift() as number;
        assert.equal(table.delete(gone), map.delete(gone));
      }
      if (kept && id - kept === 300) {
        assert.equal(table.delete(kept), map.delete(kept));
        kept = 0;
      }
      for (const probe of [id, id - 64, id - 300, kept]) assert.equal(table.get(probe), map.get(probe));
      assert.equal(table.size, map.size);
    }
  });
});
