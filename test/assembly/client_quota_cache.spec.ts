// The quota cache (hub-client §6.2; upstream quota_cache.cc, client_impl_test.cc):
// pools per quota name, pending until an answer files them under the
// referenced shape/signature; prefetch requests go out and come back.
import { AttributeBag } from "../../assembly/attributes/bag";
import {
  DEFAULT_GRANT_VALIDITY_NANOS,
  PrefetchRequest,
  QuotaCache,
  QuotaDecision,
} from "../../assembly/client/quota_cache";
import { Condition, ReferencedAttribute, ReferencedShape } from "../../assembly/client/referenced";

const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const T0: i64 = 1_700_000_000 * S;

function bag(user: string): AttributeBag {
  const b = new AttributeBag();
  b.setString("source.user", user);
  b.setString("request.path", "/books");
  return b;
}

function byUser(): ReferencedShape {
  return new ReferencedShape([new ReferencedAttribute("source.user", Condition.Exact)]);
}

function prefetchOf(d: QuotaDecision): PrefetchRequest {
  expect(d.prefetch).not.toBeNull();
  return d.prefetch as PrefetchRequest;
}

describe("QuotaCache", () => {
  it("disabled (capacity 0): not used, the caller sends the quota exactly", () => {
    const cache = new QuotaCache(0);
    expect(cache.enabled).toBe(false);
    const d = cache.check("requests", bag("a"), 1, T0);
    expect(d.cacheUsed).toBe(false);
    expect(d.allowed).toBe(false);
    expect(d.prefetch).toBeNull();
  });

  it("the first call passes and asks for a best-effort prefetch", () => {
    const cache = new QuotaCache();
    const d = cache.check("requests", bag("a"), 1, T0);
    expect(d.cacheUsed).toBe(true);
    expect(d.allowed).toBe(true);
    const p = prefetchOf(d);
    expect(p.quotaName).toBe("requests");
    expect(p.amount).toBe(10);
  });

  it("101 checks at once, answered in full at once: 6 prefetches (upstream client-005)", () => {
    const cache = new QuotaCache();
    const b = bag("a");
    let prefetches = 0;
    let allowed = 0;
    for (let i = 0; i < 100; i++) {
      const d = cache.check("requests", b, 1, T0);
      if (d.allowed) allowed++;
      const p = d.prefetch;
      if (p !== null) {
        prefetches++;
        cache.onPrefetchResponse(p, p.amount, -1, false, T0, byUser());
      }
    }
    expect(allowed).toBe(100);
    expect(prefetches).toBe(6);
  });

  it("an answer files the pending pool under its signature; other values get a new pool", () => {
    const cache = new QuotaCache();
    const d = cache.check("requests", bag("alice"), 1, T0);
    const p = prefetchOf(d);
    cache.onPrefetchResponse(p, 2, 10 * S, false, T0 + MS, byUser()); // short: 1 token left
    expect(cache.size).toBe(1);
    // alice's pool: 1 token, CLOSE mode.
    expect(cache.check("requests", bag("alice"), 1, T0 + 2 * MS).allowed).toBe(true);
    expect(cache.check("requests", bag("alice"), 1, T0 + 3 * MS).allowed).toBe(false);
    // bob does not match alice's signature: a fresh pending pool passes optimistically.
    const bob = cache.check("requests", bag("bob"), 1, T0 + 4 * MS);
    expect(bob.allowed).toBe(true);
    expect(prefetchOf(bob).amount).toBe(10);
    // Another quota name has its own pools.
    expect(cache.check("bytes", bag("alice"), 1, T0 + 5 * MS).allowed).toBe(true);
  });

  it("an answer is filed under the bag of the check that asked, even if that bag was refilled meanwhile", () => {
    const cache = new QuotaCache();
    const b = bag("alice");
    const p = prefetchOf(cache.check("requests", b, 1, T0));
    // The proxy reuses a finished request's bag for the next request (StreamPool).
    b.clear();
    b.setString("source.user", "mallory");
    cache.onPrefetchResponse(p, 2, 10 * S, false, T0 + MS, byUser()); // 1 token left after the optimistic one
    expect(cache.size).toBe(1);
    // Filed under alice: her checks draw the filed pool's one token, then are refused.
    expect(cache.check("requests", bag("alice"), 1, T0 + 2 * MS).allowed).toBe(true);
    expect(cache.check("requests", bag("alice"), 1, T0 + 3 * MS).allowed).toBe(false);
    // mallory's values find no pool: a fresh pending pool passes optimistically.
    const mallory = cache.check("requests", bag("mallory"), 1, T0 + 4 * MS);
    expect(mallory.allowed).toBe(true);
    expect(prefetchOf(mallory).amount).toBe(10);
  });

  it("the first answer files the pool; a later answer of the same pool files nothing", () => {
    const cache = new QuotaCache();
    const first = prefetchOf(cache.check("requests", bag("alice"), 1, T0)); // 10, optimistic
    const second = prefetchOf(cache.check("requests", bag("bob"), 20, T0 + MS)); // 9 < 20: another
    expect(second.amount).toBe(20);
    cache.onPrefetchResponse(second, 20, 10 * S, false, T0 + 2 * MS, byUser()); // filed under bob
    cache.onPrefetchResponse(first, 10, 10 * S, false, T0 + 3 * MS, byUser()); // same pool: ignored
    expect(cache.size).toBe(1);
    // alice now starts a new pending pool (optimistic pass, new prefetch).
    const alice = cache.check("requests", bag("alice"), 1, T0 + 4 * MS);
    expect(alice.allowed).toBe(true);
    expect(prefetchOf(alice).amount).toBe(10);
  });

  it("a transport failure or an answer without referenced attributes files nothing", () => {
    const cache = new QuotaCache();
    const p = prefetchOf(cache.check("requests", bag("carol"), 1, T0));
    cache.onPrefetchResponse(p, 0, -1, true, T0, byUser());
    expect(cache.size).toBe(0);
    // The pending pool got its full grant (fail open): 9 more pass.
    let passed = 0;
    for (let i = 0; i < 9; i++) if (cache.check("requests", bag("dave"), 1, T0 + MS).allowed) passed++;
    expect(passed).toBe(9);
    const regex = new ReferencedShape([new ReferencedAttribute("source.user", Condition.Regex)]);
    const q = prefetchOf(cache.check("requests", bag("dave"), 1, T0 + 2 * MS));
    cache.onPrefetchResponse(q, 10, S, false, T0 + 2 * MS, regex);
    cache.onPrefetchResponse(q, 10, S, false, T0 + 2 * MS, null);
    expect(cache.size).toBe(0);
  });

  it("a grant without valid duration lasts 1 min", () => {
    const cache = new QuotaCache();
    const p = prefetchOf(cache.check("requests", null, 1, T0));
    cache.onPrefetchResponse(p, 10, -1, false, T0);
    let passed = 0;
    for (let i = 0; i < 9; i++) if (cache.check("requests", null, 1, T0 + DEFAULT_GRANT_VALIDITY_NANOS - 1).allowed) passed++;
    expect(passed).toBe(9);
  });

  it("without a bag one pool per quota name is used", () => {
    const cache = new QuotaCache();
    const p = prefetchOf(cache.check("requests", null, 1, T0));
    cache.onPrefetchResponse(p, 1, 10 * S, false, T0, byUser()); // no bag: not filed
    expect(cache.size).toBe(0);
    expect(cache.check("requests", null, 1, T0 + MS).allowed).toBe(false); // 1 granted, 1 used
  });

  it("a large amount is refused without consuming", () => {
    const cache = new QuotaCache();
    const p = prefetchOf(cache.check("requests", bag("a"), 1, T0));
    cache.onPrefetchResponse(p, 5, S, false, T0, byUser());
    expect(cache.check("requests", bag("a"), 5, T0 + MS).allowed).toBe(false);
    expect(cache.check("requests", bag("a"), 4, T0 + 2 * MS).allowed).toBe(true);
  });

  it("pools idle for 600 s are dropped", () => {
    const cache = new QuotaCache();
    const p = prefetchOf(cache.check("requests", bag("a"), 1, T0));
    cache.onPrefetchResponse(p, 10, 3600 * S, false, T0, byUser());
    const q = prefetchOf(cache.check("requests", bag("b"), 1, T0 + 300 * S));
    cache.onPrefetchResponse(q, 10, 3600 * S, false, T0 + 300 * S, byUser());
    expect(cache.size).toBe(2);
    cache.removeIdle(T0 + 600 * S); // a idle 600 s, b 300 s
    expect(cache.size).toBe(1);
    // b looked up after 600 s of idleness: dropped, served by a fresh pending pool.
    const late = cache.check("requests", bag("b"), 1, T0 + 900 * S);
    expect(cache.size).toBe(0);
    expect(late.allowed).toBe(true);
    expect(late.prefetch).not.toBeNull();
  });

  it("evicts the least recently used pool at capacity", () => {
    const cache = new QuotaCache(2);
    const users = ["a", "b", "c"];
    for (let i = 0; i < users.length; i++) {
      const p = prefetchOf(cache.check("requests", bag(users[i]), 1, T0));
      cache.onPrefetchResponse(p, 10, 60 * S, false, T0 + <i64>i, byUser());
    }
    expect(cache.size).toBe(2);
    // c is filed: served from its pool, no prefetch needed yet.
    const c = cache.check("requests", bag("c"), 1, T0 + MS);
    expect(c.allowed).toBe(true);
    expect(c.prefetch).toBeNull();
    // a was evicted: a fresh pending pool, optimistic pass and a prefetch.
    const a = cache.check("requests", bag("a"), 1, T0 + MS);
    expect(a.allowed).toBe(true);
    expect(a.prefetch).not.toBeNull();
  });
});
