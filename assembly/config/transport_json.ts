import { encodeForwardedAttributes } from "../proto/forwarded";
import { JsonValue } from "../json";
import { readAttributes } from "./attributes_json";
import { NetworkFailPolicy, TransportConfig } from "./transport_config";
import { ConfigReader } from "./reader";

// TransportConfig and NetworkFailPolicy as HttpClientConfig and
// TcpClientConfig both carry them (spec: TransportConfig, NetworkFailPolicy;
// defaults hub-client.md §6.4–6.5, §8).

/** A TransportConfig object (null = absent: every default). `p` is the field path used in errors. */
export function readTransport(r: ConfigReader, obj: JsonValue | null, p: string): TransportConfig {
  const t = new TransportConfig();
  if (obj === null) return t;
  t.disableCheckCache = r.bool(r.member(obj, "disableCheckCache"), p + ".disableCheckCache");
  t.disableQuotaCache = r.bool(r.member(obj, "disableQuotaCache"), p + ".disableQuotaCache");
  t.disableReportBatch = r.bool(r.member(obj, "disableReportBatch"), p + ".disableReportBatch");
  const policy = r.object(r.member(obj, "networkFailPolicy"), p + ".networkFailPolicy");
  if (policy !== null) t.networkFailPolicy = readFailPolicy(r, policy, p + ".networkFailPolicy");
  const stats = r.durationNanos(r.member(obj, "statsUpdateInterval"), p + ".statsUpdateInterval", t.statsUpdateIntervalNanos);
  // 0 or negative means "use the default" (hub-client.md §6.5).
  if (stats > 0) t.statsUpdateIntervalNanos = stats;
  t.checkCluster = r.string(r.member(obj, "checkCluster"), p + ".checkCluster", t.checkCluster);
  t.reportCluster = r.string(r.member(obj, "reportCluster"), p + ".reportCluster", t.reportCluster);
  if (t.checkCluster.length == 0) r.fail(p + ".checkCluster", "expected a non-empty cluster name");
  if (t.reportCluster.length == 0) r.fail(p + ".reportCluster", "expected a non-empty cluster name");
  t.attributesForHubProxy = readAttributes(r, r.member(obj, "attributesForHubProxy"), p + ".attributesForHubProxy");
  t.hubProxyHeader = encodeForwardedAttributes(t.attributesForHubProxy);
  const entries = <u32>r.integer(r.member(obj, "reportBatchMaxEntries"), p + ".reportBatchMaxEntries", 0, 4294967295);
  if (entries > 0) t.reportBatchMaxEntries = entries;
  const maxTime = r.durationNanos(r.member(obj, "reportBatchMaxTime"), p + ".reportBatchMaxTime", 0);
  if (maxTime > 0) t.reportBatchMaxTimeNanos = maxTime;
  // Unlike the batch sizes, an explicit 0 means "keep nothing".
  const bufferEntries = r.member(obj, "reportBufferMaxEntries");
  if (bufferEntries !== null) t.reportBufferMaxEntries = <u32>r.integer(bufferEntries, p + ".reportBufferMaxEntries", 0, 4294967295);
  const bufferBytes = r.member(obj, "reportBufferMaxBytes");
  if (bufferBytes !== null) t.reportBufferMaxBytes = <u32>r.integer(bufferBytes, p + ".reportBufferMaxBytes", 0, 4294967295);
  return t;
}

/** A NetworkFailPolicy object; waits replace the defaults only when set. */
export function readFailPolicy(r: ConfigReader, obj: JsonValue, p: string): NetworkFailPolicy {
  const f = new NetworkFailPolicy();
  const policy = r.string(r.member(obj, "policy"), p + ".policy", "FAIL_OPEN");
  if (policy == "FAIL_CLOSE") f.failClose = true;
  else if (policy != "FAIL_OPEN") r.fail(p + ".policy", "expected FAIL_OPEN or FAIL_CLOSE");
  f.maxRetry = <u32>r.integer(r.member(obj, "maxRetry"), p + ".maxRetry", 0, 4294967295);
  f.baseRetryWaitNanos = r.durationNanos(r.member(obj, "baseRetryWait"), p + ".baseRetryWait", f.baseRetryWaitNanos);
  f.maxRetryWaitNanos = r.durationNanos(r.member(obj, "maxRetryWait"), p + ".maxRetryWait", f.maxRetryWaitNanos);
  if (f.baseRetryWaitNanos < 0) r.fail(p + ".baseRetryWait", "expected a non-negative duration");
  // Upstream drew the jitter from an inverted range here; refuse it instead.
  if (f.baseRetryWaitNanos > f.maxRetryWaitNanos) r.fail(p + ".maxRetryWait", "expected a duration no shorter than baseRetryWait");
  return f;
}
