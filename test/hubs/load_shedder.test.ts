import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LoadShedder } from "../../host/hubs/load_shedder.ts";

describe("load shedder", () => {
  it("is off at rate 0", () => {
    const s = new LoadShedder(0, 0, () => 0);
    assert.equal(s.enabled, false);
    assert.ok(Array.from({ length: 1000 }, () => s.allow()).every(Boolean));
  });

  it("passes the burst at once, then the rate", () => {
    let now = 0;
    const s = new LoadShedder(10, 5, () => now);
    const burst = Array.from({ length: 8 }, () => s.allow()).filter(Boolean).length;
    assert.equal(burst, 5);
    now += 100;
    assert.equal(s.allow(), true, "one token per 100 ms at 10/s");
    assert.equal(s.allow(), false);
    now += 10_000;
    assert.equal(Array.from({ length: 8 }, () => s.allow()).filter(Boolean).length, 5, "the bucket never holds more than the burst");
  });

  it("burst 0 means a bucket of one, not refusing everything", () => {
    let now = 0;
    const s = new LoadShedder(2, 0, () => now);
    assert.deepEqual([s.allow(), s.allow()], [true, false]);
    now += 500;
    assert.equal(s.allow(), true);
  });
});
