// Retry delay (hub-client §6.4; upstream check_context.h): uniform integer in
// [base, min(max, base * 2^n)], jitter floor = base. Defaults 80 ms / 1000 ms.
import { retryDelayNanos } from "../../assembly/client/backoff";

const MS: i64 = 1_000_000;
const BASE: i64 = 80 * MS;
const MAX: i64 = 1000 * MS;

class Row {
  constructor(
    public retriesMade: u32,
    public low: i64, // random 0
    public high: i64, // random 0.999 = base + floor(0.999 * (span + 1))
    public ceiling: i64, // min(max, base * 2^n)
  ) {}
}

describe("retryDelayNanos", () => {
  it("table: n = 0..5 with random 0 and 0.999 (80 ms base, 1 s max)", () => {
    const rows: Row[] = [
      new Row(0, BASE, BASE, BASE),
      new Row(1, BASE, 159_920_000, 160 * MS),
      new Row(2, BASE, 319_760_000, 320 * MS),
      new Row(3, BASE, 639_440_000, 640 * MS),
      new Row(4, BASE, 999_080_000, MAX),
      new Row(5, BASE, 999_080_000, MAX),
    ];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      const label = "n=" + r.retriesMade.toString();
      expect(retryDelayNanos(r.retriesMade, BASE, MAX, 0)).toBe(r.low, label);
      expect(retryDelayNanos(r.retriesMade, BASE, MAX, 0.999)).toBe(r.high, label);
      // The top of the range is reachable and never exceeded.
      expect(retryDelayNanos(r.retriesMade, BASE, MAX, 0.9999999999999)).toBe(r.ceiling, label);
      expect(retryDelayNanos(r.retriesMade, BASE, MAX, 1.0)).toBe(r.ceiling, label);
    }
  });

  it("stays bounded for large retry counts and odd inputs", () => {
    expect(retryDelayNanos(62, BASE, MAX, 0.5)).toBeLessThanOrEqual(MAX);
    expect(retryDelayNanos(1000, BASE, MAX, 0.5)).toBeLessThanOrEqual(MAX);
    expect(retryDelayNanos(1000, BASE, MAX, 0.5)).toBeGreaterThanOrEqual(BASE);
    expect(retryDelayNanos(3, BASE, MAX, -1)).toBe(BASE);
    expect(retryDelayNanos(3, BASE, MAX, NaN)).toBe(BASE);
    expect(retryDelayNanos(3, 2 * MAX, MAX, 0.5)).toBe(2 * MAX); // base > max: rejected at load; base here
    expect(retryDelayNanos(3, 0, MAX, 0.5)).toBe(0);
  });
});
