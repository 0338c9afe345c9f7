// The client counters (hub-client §6.5; upstream stats.h, client_impl.cc and
// the invariants of client_impl_test.cc), driven by a scripted sequence.
import { ClientCounters, COUNTER_COUNT, TransportOutcome, transportOutcome } from "../../assembly/client/counters";

function indexOf(c: ClientCounters, name: string): i32 {
  const names = c.names();
  for (let i = 0; i < names.length; i++) if (names[i] == name) return i;
  return -1;
}

function value(c: ClientCounters, name: string): i64 {
  const i = indexOf(c, name);
  expect(i).toBeGreaterThanOrEqual(0, name);
  return c.valueAt(i);
}

function expectInvariants(c: ClientCounters): void {
  expect(c.totalCheckCalls).toBe(c.totalCheckCacheHits + c.totalCheckCacheMisses, "check calls");
  expect(c.totalCheckCacheHits).toBe(c.totalCheckCacheHitAccepts + c.totalCheckCacheHitDenies, "check hits");
  expect(c.totalQuotaCalls).toBe(c.totalQuotaCacheHits + c.totalQuotaCacheMisses, "quota calls");
  expect(c.totalQuotaCacheHits).toBe(c.totalQuotaCacheHitAccepts + c.totalQuotaCacheHitDenies, "quota hits");
  expect(c.totalRemoteCheckCalls).toBe(c.totalCheckCacheMisses, "remote check calls");
  expect(c.totalRemoteQuotaCalls).toBe(c.totalQuotaCacheMisses + c.totalRemoteQuotaPrefetchCalls, "remote quota calls");
  expect(c.totalRemoteCalls).toBe(
    c.totalRemoteCallSuccesses + c.totalRemoteCallTimeouts + c.totalRemoteCallSendErrors + c.totalRemoteCallOtherErrors,
    "remote calls",
  );
}

// The request flow's recording, as client_impl.cc does it.
function script(c: ClientCounters): void {
  // 1. Check miss with a quota: one blocking call carrying both; success.
  c.recordCheckCacheMiss();
  c.recordQuotaCacheMiss();
  c.recordRemoteCall(true, true, false);
  c.recordRemoteCallDone(TransportOutcome.Success);
  c.recordRemoteCheckResult(true);
  c.recordRemoteQuotaResult(true);
  // 2. Check hit (accept), quota cache hit (accept) with a background prefetch.
  c.recordCheckCacheHit(true);
  c.recordQuotaCacheHit(true);
  c.recordRemoteCall(false, false, true);
  c.recordRemoteCallDone(TransportOutcome.Success);
  c.recordRemoteQuotaResult(true);
  // 3. Check hit (deny): no quota consulted.
  c.recordCheckCacheHit(false);
  // 4. Check hit, quota cache hit refused.
  c.recordCheckCacheHit(true);
  c.recordQuotaCacheHit(false);
  // 5. Check miss, no quota: two retries, then a timeout; fail-open accepts.
  c.recordCheckCacheMiss();
  c.recordRemoteCall(true, false, false);
  c.recordRemoteCallRetry();
  c.recordRemoteCallRetry();
  c.recordRemoteCallDone(transportOutcome(14, "upstream request timeout"));
  c.recordRemoteCheckResult(true);
  // 6. Check miss, the stream goes away while waiting.
  c.recordCheckCacheMiss();
  c.recordRemoteCall(true, false, false);
  c.recordRemoteCallCancelled();
  // 7. Three reports, one batch sent.
  c.recordReportCall();
  c.recordReportCall();
  c.recordReportCall();
  c.recordRemoteReportCall();
  c.recordRemoteReportDone(TransportOutcome.Success);
}

describe("ClientCounters", () => {
  it("publishes every §6.5 counter by name, index-aligned with valueAt", () => {
    const c = new ClientCounters();
    expect(c.names().length).toBe(COUNTER_COUNT);
    expect(COUNTER_COUNT).toBe(32);
    c.totalCheckCalls = 11;
    c.recordReportsDropped(7);
    c.recordReportsDropped(0);
    c.recordForwardedAttributesDropped(2);
    expect(value(c, "report_dropped")).toBe(7);
    expect(value(c, "forwarded_attributes_dropped")).toBe(2);
    c.totalRemoteReportOtherErrors = 29;
    c.totalRemoteQuotaPrefetchCalls = 16;
    expect(value(c, "total_check_calls")).toBe(11);
    expect(value(c, "total_remote_report_other_errors")).toBe(29);
    expect(value(c, "total_remote_quota_prefetch_calls")).toBe(16);
    expect(c.valueAt(-1)).toBe(0);
    expect(c.valueAt(COUNTER_COUNT)).toBe(0);
    // Names are unique.
    const names = c.names();
    for (let i = 0; i < names.length; i++) for (let j = i + 1; j < names.length; j++) expect(names[i]).not.toBe(names[j]);
  });

  it("a scripted sequence keeps upstream's invariants", () => {
    const c = new ClientCounters();
    script(c);
    expectInvariants(c);
    expect(c.totalCheckCalls).toBe(6);
    expect(c.totalCheckCacheHits).toBe(3);
    expect(c.totalCheckCacheHitDenies).toBe(1);
    expect(c.totalQuotaCalls).toBe(3);
    expect(c.totalRemoteQuotaPrefetchCalls).toBe(1);
    expect(c.totalRemoteQuotaCalls).toBe(2);
    expect(c.totalRemoteCalls).toBe(4);
    expect(c.totalRemoteCallRetries).toBe(2);
    expect(c.totalRemoteCallTimeouts).toBe(1);
    expect(c.totalRemoteCallCancellations).toBe(1);
    expect(c.totalRemoteCallOtherErrors).toBe(1);
    expect(c.totalReportCalls).toBe(3);
    expect(c.totalRemoteReportCalls).toBe(1);
    expect(c.totalRemoteReportSuccesses).toBe(1);
  });

  it("deltas: what grew since the last publication", () => {
    const c = new ClientCounters();
    script(c);
    const checks = indexOf(c, "total_check_calls");
    expect(c.deltaAt(checks)).toBe(6);
    expect(c.takeDelta(checks)).toBe(6);
    expect(c.takeDelta(checks)).toBe(0);
    c.markPublished();
    script(c);
    let total: i64 = 0;
    for (let i = 0; i < COUNTER_COUNT; i++) total += c.takeDelta(i);
    let expected: i64 = 0;
    for (let i = 0; i < COUNTER_COUNT; i++) expected += c.valueAt(i);
    expect(total * 2).toBe(expected); // the second run added exactly what the first had
    for (let i = 0; i < COUNTER_COUNT; i++) expect(c.deltaAt(i)).toBe(0);
    expect(c.takeDelta(-1)).toBe(0);
  });
});

class OutcomeRow {
  constructor(
    public code: i32,
    public message: string,
    public outcome: TransportOutcome,
  ) {}
}

describe("transportOutcome", () => {
  it("table (hub-client §6.4)", () => {
    const rows: OutcomeRow[] = [
      new OutcomeRow(0, "", TransportOutcome.Success),
      new OutcomeRow(14, "upstream request timeout", TransportOutcome.Timeout),
      new OutcomeRow(14, "upstream connect error or disconnect/reset before headers", TransportOutcome.SendError),
      new OutcomeRow(14, "upstream connect error or disconnect/reset before headers. reset reason: connection failure", TransportOutcome.SendError),
      new OutcomeRow(14, "no healthy upstream", TransportOutcome.Other),
      new OutcomeRow(4, "upstream request timeout", TransportOutcome.Other),
      new OutcomeRow(1, "cancelled", TransportOutcome.Other),
    ];
    for (let i = 0; i < rows.length; i++) {
      expect(transportOutcome(rows[i].code, rows[i].message)).toBe(rows[i].outcome, rows[i].message);
    }
  });
});
