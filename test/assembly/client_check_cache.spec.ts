// The check cache (hub-client §6.1; upstream check_cache.cc, check_cache_test.cc):
// entries filed by referenced shape and signature, use counts, valid
// durations, LRU capacity. Time is an injected clock in nanoseconds.
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, StringMap } from "../../assembly/attributes/value";
import { CachedCheck, CheckCache, NO_TIME_EXPIRY } from "../../assembly/client/check_cache";
import { Condition, ReferencedAttribute, ReferencedShape } from "../../assembly/client/referenced";

const S: i64 = 1_000_000_000;
const T0: i64 = 1_700_000_000 * S;

function bag(principal: string, user: string | null = null, debug: bool = false): AttributeBag {
  const b = new AttributeBag();
  b.setString("source.principal", principal);
  b.setString("request.path", "/books");
  const h = new StringMap();
  if (user !== null) h.set("x-user", user);
  if (debug) h.set("x-debug", "1");
  b.set("request.headers", AttributeValue.ofMap(h));
  return b;
}

function byPrincipal(): ReferencedShape {
  return new ReferencedShape([
    new ReferencedAttribute("source.principal", Condition.Exact),
    new ReferencedAttribute("destination.uid", Condition.Absence),
  ]);
}

function byUserHeader(): ReferencedShape {
  return new ReferencedShape([
    new ReferencedAttribute("request.headers", Condition.Exact, "x-user"),
    new ReferencedAttribute("request.headers", Condition.Absence, "x-debug"),
  ]);
}

// How the request flow keeps its route directive with the status.
class RoutedCheck extends CachedCheck {
  constructor(code: i32, message: string, public directive: StringMap) {
    super(code, message);
  }
}

const OK = new CachedCheck(0);
const DENY = new CachedCheck(7, "denied by rule");

function statusOf(r: CachedCheck | null): i32 {
  return r === null ? -1 : r.statusCode;
}

class LookupRow {
  constructor(
    public label: string,
    public request: AttributeBag,
    public status: i32, // -1 = miss
  ) {}
}

function shapeRows(): LookupRow[] {
  return [
    new LookupRow("same principal", bag("alice"), 0),
    new LookupRow("same principal, other unreferenced values", bag("alice", "zed", true), 0),
    new LookupRow("other principal, no user header", bag("bob"), -1),
    new LookupRow("user header carol", bag("bob", "carol"), 7),
    new LookupRow("user header carol but x-debug present", bag("bob", "carol", true), -1),
    new LookupRow("user header dave", bag("bob", "dave"), -1),
  ];
}

describe("CheckCache lookup by shape", () => {
  it("table: EXACT / ABSENCE, map keys", () => {
    const cache = new CheckCache();
    expect(cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0)).toBe(true);
    expect(cache.insert(bag("bob", "carol"), byUserHeader(), DENY, NO_TIME_EXPIRY, -1, T0)).toBe(true);
    expect(cache.shapeCount).toBe(2);
    const rows = shapeRows();
    for (let i = 0; i < rows.length; i++) {
      expect(statusOf(cache.lookup(rows[i].request, T0))).toBe(rows[i].status, rows[i].label);
    }
  });

  it("an empty cache and a new cache miss", () => {
    expect(new CheckCache().lookup(bag("alice"), T0)).toBeNull();
  });

  it("a destination.uid present defeats the ABSENCE of the principal shape", () => {
    const cache = new CheckCache();
    cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    const b = bag("alice");
    b.setString("destination.uid", "kubernetes://x");
    expect(cache.lookup(b, T0)).toBeNull();
  });

  it("keeps the status message and a subclass carrying the route directive", () => {
    const cache = new CheckCache();
    const directive = new StringMap();
    directive.set("x-route", "v2");
    cache.insert(bag("alice"), byPrincipal(), new RoutedCheck(7, "nope", directive), NO_TIME_EXPIRY, -1, T0);
    cache.insert(bag("bob"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    const hit = cache.lookup(bag("alice"), T0);
    expect(statusOf(hit)).toBe(7);
    const h = hit as CachedCheck;
    expect(h.statusMessage).toBe("nope");
    expect(h instanceof RoutedCheck).toBe(true);
    expect((h as RoutedCheck).directive.get("x-route")).toBe("v2");
    const plain = cache.lookup(bag("bob"), T0) as CachedCheck;
    expect(plain instanceof RoutedCheck).toBe(false);
  });

  it("does not cache REGEX shapes or shapes that contradict the request", () => {
    const cache = new CheckCache();
    const regex = new ReferencedShape([
      new ReferencedAttribute("source.principal", Condition.Exact),
      new ReferencedAttribute("request.path", Condition.Regex),
    ]);
    expect(cache.insert(bag("alice"), regex, OK, NO_TIME_EXPIRY, -1, T0)).toBe(false);
    const contradicting = new ReferencedShape([new ReferencedAttribute("source.principal", Condition.Absence)]);
    expect(cache.insert(bag("alice"), contradicting, OK, NO_TIME_EXPIRY, -1, T0)).toBe(false);
    expect(cache.size).toBe(0);
    expect(cache.shapeCount).toBe(0);
    expect(cache.lookup(bag("alice"), T0)).toBeNull();
  });

  it("a later answer for the same key replaces the entry", () => {
    const cache = new CheckCache();
    cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    cache.insert(bag("alice"), byPrincipal(), DENY, NO_TIME_EXPIRY, -1, T0);
    expect(cache.size).toBe(1);
    expect(statusOf(cache.lookup(bag("alice"), T0))).toBe(7);
  });
});

class UseRow {
  constructor(
    public useCount: i64,
    public hits: i32, // lookups that hit before the first miss (capped at 50)
  ) {}
}

describe("CheckCache use counts", () => {
  it("table: 0 never served, n gives n hits, negative unlimited", () => {
    const rows: UseRow[] = [new UseRow(0, 0), new UseRow(1, 1), new UseRow(3, 3), new UseRow(-1, 50)];
    for (let r = 0; r < rows.length; r++) {
      const cache = new CheckCache();
      const stored = cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, rows[r].useCount, T0);
      expect(stored).toBe(rows[r].useCount != 0);
      let hits = 0;
      while (hits < 50 && cache.lookup(bag("alice"), T0 + <i64>hits) !== null) hits++;
      expect(hits).toBe(rows[r].hits, "use count " + rows[r].useCount.toString());
      if (rows[r].useCount > 0) {
        expect(cache.size).toBe(0); // removed with its last use
        expect(cache.shapeCount).toBe(0);
      }
    }
  });

  it("use count 0 drops the entry it would replace", () => {
    const cache = new CheckCache();
    cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    expect(cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, 0, T0)).toBe(false);
    expect(cache.lookup(bag("alice"), T0)).toBeNull();
    expect(cache.size).toBe(0);
  });
});

describe("CheckCache expiry", () => {
  it("expires after the valid duration; the expired entry is removed", () => {
    const cache = new CheckCache();
    cache.insert(bag("alice"), byPrincipal(), OK, 5 * S, -1, T0);
    expect(cache.lookup(bag("alice"), T0 + 5 * S - 1)).not.toBeNull();
    expect(cache.lookup(bag("alice"), T0 + 5 * S)).toBeNull();
    expect(cache.size).toBe(0);
    expect(cache.lookup(bag("alice"), T0)).toBeNull();
  });

  it("no valid duration never expires by time; duration 0 is never served", () => {
    const cache = new CheckCache();
    cache.insert(bag("alice"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    expect(cache.lookup(bag("alice"), T0 + 1_000_000 * S)).not.toBeNull();
    cache.insert(bag("bob"), byPrincipal(), OK, 0, -1, T0);
    expect(cache.lookup(bag("bob"), T0)).toBeNull();
  });
});

describe("CheckCache capacity", () => {
  it("evicts the least recently used entry", () => {
    const cache = new CheckCache(2);
    cache.insert(bag("a"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    cache.insert(bag("b"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    expect(cache.lookup(bag("a"), T0)).not.toBeNull(); // a is now the most recent
    cache.insert(bag("c"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    expect(cache.size).toBe(2);
    expect(cache.lookup(bag("a"), T0)).not.toBeNull();
    expect(cache.lookup(bag("b"), T0)).toBeNull();
    expect(cache.lookup(bag("c"), T0)).not.toBeNull();
  });

  it("retires a shape with its last entry", () => {
    const cache = new CheckCache(1);
    cache.insert(bag("a"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    cache.insert(bag("b", "carol"), byUserHeader(), OK, NO_TIME_EXPIRY, -1, T0);
    expect(cache.size).toBe(1);
    expect(cache.shapeCount).toBe(1);
    expect(cache.lookup(bag("a"), T0)).toBeNull();
    expect(cache.lookup(bag("z", "carol"), T0)).not.toBeNull();
  });

  it("capacity 0 is disabled: nothing stored, every lookup misses", () => {
    const cache = new CheckCache(0);
    expect(cache.enabled).toBe(false);
    expect(cache.insert(bag("a"), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0)).toBe(false);
    expect(cache.lookup(bag("a"), T0)).toBeNull();
    expect(cache.size).toBe(0);
  });

  it("holds 10 000 entries by default and clear() empties it", () => {
    const cache = new CheckCache();
    expect(cache.capacity).toBe(10000);
    for (let i = 0; i < 300; i++) cache.insert(bag("p" + i.toString()), byPrincipal(), OK, NO_TIME_EXPIRY, -1, T0);
    expect(cache.size).toBe(300);
    expect(cache.lookup(bag("p150"), T0)).not.toBeNull();
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.lookup(bag("p150"), T0)).toBeNull();
  });
});
