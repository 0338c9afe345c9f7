import { ContextTable } from "../../assembly/abi/context_table";

class Box {
  constructor(public n: u32) {}
}

describe("ContextTable", () => {
  it("files, finds, replaces and deletes by id, any u32 id included", () => {
    const t = new ContextTable<Box>(4);
    t.set(1, new Box(1));
    t.set(0, new Box(0));
    t.set(u32.MAX_VALUE, new Box(7));
    expect(t.size).toBe(3);
    expect(t.find(0)!.n).toBe(0);
    expect(t.find(u32.MAX_VALUE)!.n).toBe(7);
    t.set(1, new Box(11));
    expect(t.find(1)!.n).toBe(11);
    expect(t.size).toBe(3);
    expect(t.delete(0)).toBe(true);
    expect(t.delete(0)).toBe(false);
    expect(t.find(0)).toBeNull();
    expect(t.has(1)).toBe(true);
    expect(t.size).toBe(2);
  });

  it("keeps every live id findable through churn, growth and deletions in probe runs", () => {
    // A model of what a proxy does: ids rising, a window of them alive, the
    // oldest deleted; checked against a plain Map after every step.
    const t = new ContextTable<Box>(2);
    const model = new Map<u32, u32>();
    let seed: u32 = 12345;
    for (let id: u32 = 1; id <= 3000; id++) {
      t.set(id, new Box(id * 3));
      model.set(id, id * 3);
      seed = seed * 1103515245 + 12345;
      // Delete a pseudo-random earlier id, sometimes several.
      for (let k = 0; k < <i32>((seed >>> 16) % 3); k++) {
        seed = seed * 1103515245 + 12345;
        const victim = 1 + ((seed >>> 8) % id);
        expect(t.delete(victim)).toBe(model.has(victim));
        model.delete(victim);
      }
      if (id % 97 == 0) {
        for (let probe: u32 = 1; probe <= id; probe++) {
          const found = t.find(probe);
          if (model.has(probe)) expect(found!.n).toBe(model.get(probe));
          else expect(found).toBeNull();
        }
      }
    }
    expect(t.size).toBe(model.size);
  });
});
