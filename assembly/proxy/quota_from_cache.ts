import { ClientCounters } from "../client/counters";
import { AttributeSource } from "../attributes/bag";
import { NetworkFailPolicy } from "../config/client_config";
import { encodeCheckRequest } from "../hub/check_request";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { StatusCode } from "../status_codes";
import { sameString } from "../text";
import { QuotaCharge } from "../quota";
import { OK_VERDICT, Verdict } from "./check_decision";
import { CheckOutcome } from "../attributes/report";
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
 * out a disabled quota cache (quotasNeedHub). `outcome.quotaCacheHit` says
 * whether the cache decided every quota. Allocates nothing unless a quota is
 * exhausted or a prefetch goes out.
 */
export function decideQuotasFromCache(
  plugin: Plugin,
  counters: ClientCounters,
  cache: QuotaCache,
  cluster: string,
  prefetchKind: CallKind,
  contextId: u32,
  bag: AttributeSource,
  quotas: Array<QuotaCharge>,
  now: i64,
  outcome: CheckOutcome,
): Verdict {
  let exhausted: Array<string> | null = null;
  let allFromCache = true;
  for (let i = 0, n = quotas.length; i < n; i++) {
    // Each quota name once, at its first charge, with every charge of the
    // name summed (CheckRequest.quotas is a map).
    const name = unchecked(quotas[i]).quota;
    if (chargedEarlier(quotas, i, name)) continue;
    let amount: i64 = 0;
    for (let j = i; j < n; j++) if (sameString(unchecked(quotas[j]).quota, name)) amount += unchecked(quotas[j]).charge;
    const decision = cache.check(name, bag, amount, now);
    if (!decision.cacheUsed) {
      allFromCache = false;
      continue;
    }
    counters.recordQuotaCacheHit(decision.allowed);
    if (!decision.allowed) {
      if (exhausted === null) exhausted = new Array<string>();
      exhausted.push(name);
    }
    const prefetch = decision.prefetch;
    if (prefetch !== null) {
      const message = encodeCheckRequest(bag.asBag(), GLOBAL_WORD_COUNT, plugin.nextDeduplicationId(), [new QuotaCharge(name, prefetch.amount)], true);
      counters.recordRemoteCall(false, false, true);
      if (plugin.callCluster(cluster, prefetchKind, "Check", message, new NetworkFailPolicy(), contextId, prefetch) < 0) {
        cache.onPrefetchResponse(prefetch, 0, -1, true, now);
      }
    }
  }
  outcome.quotaCacheHit = allFromCache;
  return exhausted !== null ? new Verdict(StatusCode.RESOURCE_EXHAUSTED, "Quota is exhausted for: " + exhausted.join(",")) : OK_VERDICT;
}

function chargedEarlier(quotas: Array<QuotaCharge>, i: i32, name: string): bool {
  for (let j = 0; j < i; j++) if (sameString(unchecked(quotas[j]).quota, name)) return true;
  return false;
}
