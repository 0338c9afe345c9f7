import { ClientCounters } from "../client/counters";
import { AttributeBag } from "../attributes/bag";
import { NetworkFailPolicy } from "../config/client_config";
import { encodeCheckRequest } from "../hub/check_request";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { StatusCode } from "../hub/status";
import { QuotaCharge } from "../quota";
import { distinctQuotaNames, Verdict } from "./check_decision";
import { CallKind, Plugin } from "./plugin";
import { PrefetchRequest, QuotaCache } from "../client/quota_cache";
import { ReferencedAttribute, ReferencedShape } from "../client/referenced";
import { CheckResponse } from "../hub/check_response";
import { ReferencedAttributes } from "../hub/referenced_attributes";

/** The hub's referenced attributes as a check- or quota-cache shape. */
export function toShape(referenced: ReferencedAttributes): ReferencedShape {
  const list = new Array<ReferencedAttribute>();
  for (let i = 0; i < referenced.matches.length; i++) {
    const m = referenced.matches[i];
    list.push(new ReferencedAttribute(m.name, m.condition, m.mapKey));
  }
  return new ReferencedShape(list);
}

/**
 * Feeds the answer to a best-effort quota prefetch back into the quota cache
 * (HTTP and TCP alike). A malformed answer counts as a transport failure,
 * which grants in full: quota fails open on its own.
 */
export function applyPrefetchAnswer(counters: ClientCounters, cache: QuotaCache, prefetch: PrefetchRequest, response: CheckResponse | null, now: i64): void {
  let granted: i64 = 0;
  let validity: i64 = -1;
  let shape: ReferencedShape | null = null;
  if (response !== null) {
    for (let i = 0; i < response.quotas.length; i++) {
      const q = response.quotas[i];
      if (q.name != prefetch.quotaName) continue;
      granted = q.grantedAmount;
      validity = q.validDurationNanos;
      shape = toShape(q.referenced);
    }
  }
  counters.recordRemoteQuotaResult(granted > 0);
  cache.onPrefetchResponse(prefetch, granted, validity, response === null, now, shape);
}

/** The verdict on quotas decided from the quota cache, and whether the cache decided all of them. */
export class CachedQuotaVerdict {
  constructor(
    public verdict: Verdict,
    public allFromCache: bool,
  ) {}
}

/**
 * Whether a policy-cache hit still needs the hub: an accepted check with
 * quotas to charge while the quota cache is disabled. Upstream then sends the
 * quotas exactly in a remote check, so `disableQuotaCache` turns off caching
 * of quota, never its enforcement.
 */
export function quotasNeedHub(cache: QuotaCache, cachedStatus: i32, quotaCount: i32): bool {
  return cachedStatus == StatusCode.OK && quotaCount > 0 && !cache.enabled;
}

/**
 * After a policy-cache hit (HTTP request or TCP connection alike) the quota
 * cache decides the quotas locally; prefetches it asks for go out in the
 * background as best-effort quota checks on `cluster`. The caller has ruled
 * out a disabled quota cache (quotasNeedHub).
 */
export function decideQuotasFromCache(
  plugin: Plugin,
  counters: ClientCounters,
  cache: QuotaCache,
  cluster: string,
  prefetchKind: CallKind,
  contextId: u32,
  bag: AttributeBag,
  quotas: Array<QuotaCharge>,
  now: i64,
): CachedQuotaVerdict {
  const names = distinctQuotaNames(quotas);
  const exhausted = new Array<string>();
  let allFromCache = true;
  for (let i = 0; i < names.length; i++) {
    let amount: i64 = 0;
    for (let j = 0; j < quotas.length; j++) if (quotas[j].quota == names[i]) amount += quotas[j].charge;
    const decision = cache.check(names[i], bag, amount, now);
    if (!decision.cacheUsed) {
      allFromCache = false;
      continue;
    }
    counters.recordQuotaCacheHit(decision.allowed);
    if (!decision.allowed) exhausted.push(names[i]);
    const prefetch = decision.prefetch;
    if (prefetch !== null) {
      const message = encodeCheckRequest(bag, GLOBAL_WORD_COUNT, plugin.nextDeduplicationId(), [new QuotaCharge(names[i], prefetch.amount)], true);
      counters.recordRemoteCall(false, false, true);
      if (plugin.callCluster(cluster, prefetchKind, "Check", message, new NetworkFailPolicy(), contextId, prefetch) < 0) {
        cache.onPrefetchResponse(prefetch, 0, -1, true, now);
      }
    }
  }
  const verdict = exhausted.length > 0 ? new Verdict(StatusCode.RESOURCE_EXHAUSTED, "Quota is exhausted for: " + exhausted.join(",")) : new Verdict(StatusCode.OK, "");
  return new CachedQuotaVerdict(verdict, allFromCache);
}
