import { ClientCounters } from "../client/counters";
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
