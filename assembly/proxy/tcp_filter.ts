import { addConnectionAttributes, ConnectionView } from "../attributes/tcp_attributes";
import { addConnectionReportAttributes, ConnectionEvent, ConnectionReport } from "../attributes/tcp_report";
import { CachedCheck } from "../client/check_cache";
import { TransportOutcome, transportOutcome } from "../client/counters";
import { NetworkFailPolicy } from "../config/client_config";
import { decodeCheckResponse } from "../hub/check_response";
import { encodeCheckRequest } from "../hub/check_request";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { StatusCode } from "../status_codes";
import { quotaCharges } from "../quota";
import { Action, LogLevel } from "../abi/enums";
import * as host from "../abi/host";
import * as property from "../abi/properties";
import { decideCheck, Verdict } from "./check_decision";
import { applyPrefetchAnswer, decideQuotasFromCache, quotasNeedHub, toShape } from "./quota_from_cache";
import { CallKind, PendingCall, Plugin } from "./plugin";
import { TcpClient } from "./tcp_client";
import { ConnectionState, TcpConnection } from "./tcp_connection";

// The per-connection flow of the hub client for TCP (hub-client.md §7;
// upstream src/envoy/tcp/mixer/filter.cc): attributes at accept, the check on
// the first downstream data with reading paused, then `open`, periodic
// `continue` and `close` reports. Decisions are the pure code's (caches,
// decideCheck, quotaCharges); this file sequences them over the ABI.

/** proxy_on_new_connection: the check attributes, built when the connection is accepted. */
export function onNewConnection(plugin: Plugin, conn: TcpConnection): Action {
  const tcp = plugin.tcp;
  if (plugin.config === null || tcp === null) return Action.Continue;
  const now = host.nowNanos();
  conn.served = true;
  conn.startNanos = now;
  const view = readConnection();
  view.timeNanos = now;
  view.connectionId = tcp.connectionId(conn.id);
  const bag = tcp.config.hubAttributes.clone();
  addConnectionAttributes(bag, view);
  conn.attributes = bag;
  quotaCharges(tcp.config.connectionQuotaRules, bag, conn.quotas);
  return Action.Continue;
}

/**
 * proxy_on_downstream_data: the first data starts the check (TLS facts are
 * known by then) and pauses reading until it completes. `size` is what the
 * proxy's buffer holds: while paused the held bytes come again with new ones.
 */
export function onDownstreamData(plugin: Plugin, conn: TcpConnection, size: u32): Action {
  if (!conn.served) return Action.Continue;
  const bytes = <i64>size;
  if (conn.state == ConnectionState.Checking) {
    conn.traffic.receivedBytes += bytes >= conn.heldBytes ? bytes - conn.heldBytes : bytes;
    conn.heldBytes = bytes;
    return Action.Pause;
  }
  // A connection the filter closed forwards nothing (upstream closes without flushing).
  if (conn.state == ConnectionState.Closed) return conn.closedByFilter ? Action.Pause : Action.Continue;
  conn.traffic.receivedBytes += bytes;
  if (conn.state != ConnectionState.Accepted) return Action.Continue;
  conn.heldBytes = bytes;
  return startCheck(plugin, conn);
}

/** proxy_on_upstream_data: counts the bytes sent to the client; never held. */
export function onUpstreamData(conn: TcpConnection, size: u32): Action {
  if (conn.served && conn.state != ConnectionState.Closed) conn.traffic.sentBytes += <i64>size;
  return Action.Continue;
}

/** Either side closed (or the context ends): the close report, once; a check in flight is cancelled. */
export function onConnectionClosed(plugin: Plugin, conn: TcpConnection): void {
  if (!conn.served || conn.state == ConnectionState.Closed) return;
  if (conn.state == ConnectionState.Checking && conn.checkToken >= 0) {
    const token = <u32>conn.checkToken;
    if (plugin.pending.has(token)) {
      plugin.pending.delete(token);
      host.grpcCancel(token);
      const tcp = plugin.tcp;
      if (tcp !== null) tcp.counters.recordRemoteCallCancelled();
    }
  }
  close(plugin, conn, host.nowNanos());
}

/** proxy_on_tick: `continue` reports of open connections, then the batch, caches and counters. */
export function onConnectionsTick(plugin: Plugin): void {
  const tcp = plugin.tcp;
  if (tcp === null) return;
  const now = host.nowNanos();
  const interval = tcp.config.reportIntervalNanos;
  const ids = tcp.open.keys();
  let switched = false;
  for (let i = 0; i < ids.length; i++) {
    const conn = tcp.open.get(ids[i]);
    if (conn.state != ConnectionState.Open) {
      tcp.open.delete(ids[i]);
      continue;
    }
    if (now < conn.nextReportNanos) continue;
    // The report reads the connection's properties: act on its context.
    if (!host.setEffectiveContext(conn.id)) {
      tcp.open.delete(ids[i]);
      continue;
    }
    switched = true;
    report(plugin, tcp, conn, ConnectionEvent.Continue, now);
    // Keep the cadence; a tick that came late does not shift later reports.
    conn.nextReportNanos += interval;
    if (conn.nextReportNanos <= now) conn.nextReportNanos = now + interval;
  }
  if (switched) host.setEffectiveContext(plugin.rootId);
  if (tcp.reports.isDue(now)) plugin.flushTcpReports();
  tcp.quotaCache.removeIdle(now);
  tcp.publishCountersIfDue(now);
}

/** proxy_on_grpc_receive for a connection's check, prefetch or report. */
export function onConnectionCallAnswered(plugin: Plugin, call: PendingCall, bytes: Uint8Array, conn: TcpConnection | null): void {
  const tcp = plugin.tcp;
  if (tcp === null) {
    resumeUnserved(conn);
    return;
  }
  const now = host.nowNanos();
  tcp.counters.recordRemoteCallDone(TransportOutcome.Success);
  plugin.onHubReachable();
  const response = decodeCheckResponse(bytes);
  if (call.kind == CallKind.ConnectionPrefetch) {
    applyPrefetchAnswer(tcp.counters, tcp.quotaCache, call.prefetch!, response, now);
    return;
  }
  if (conn === null || conn.state != ConnectionState.Checking) return;
  conn.checkToken = -1;
  if (response === null) {
    decide(plugin, tcp, conn, new Verdict(StatusCode.INVALID_ARGUMENT, "malformed answer from the hub"), now, true);
    return;
  }
  const failOpen = !tcp.config.transport.networkFailPolicy.failClose;
  const verdict = decideCheck(response, conn.quotas, failOpen);
  const precondition = response.precondition;
  tcp.counters.recordRemoteCheckResult(precondition.status.code == StatusCode.OK);
  if (conn.quotas.length > 0) tcp.counters.recordRemoteQuotaResult(verdict.ok);
  if (response.hasPrecondition && precondition.referenced.valid) {
    const result = new CachedCheck(precondition.status.code, precondition.status.message);
    tcp.checkCache.insert(conn.attributes, toShape(precondition.referenced), result, precondition.validDurationNanos, precondition.validUseCount, now);
  }
  decide(plugin, tcp, conn, verdict, now, true);
}

/** proxy_on_grpc_close for a connection's call: failed after the host's retries. */
export function onConnectionCallFailed(plugin: Plugin, call: PendingCall, code: i32, message: string, conn: TcpConnection | null): void {
  const tcp = plugin.tcp;
  if (tcp === null) {
    resumeUnserved(conn);
    return;
  }
  const outcome = transportOutcome(code, message);
  const now = host.nowNanos();
  if (call.kind == CallKind.ConnectionPrefetch) {
    tcp.counters.recordRemoteCallDone(outcome);
    // A failed prefetch grants in full: quota fails open on its own.
    tcp.quotaCache.onPrefetchResponse(call.prefetch!, 0, -1, true, now);
    return;
  }
  const waiting = conn !== null && conn.state == ConnectionState.Checking;
  if (waiting) conn!.checkToken = -1;
  // Under its NetworkFailPolicy the check is tried again (unless the host retries itself).
  if (waiting && plugin.retryLater(call, code, message)) return;
  tcp.counters.recordRemoteCallDone(outcome);
  if (!waiting) return;
  transportFailure(plugin, tcp, conn!, code, message, now, true);
}

/** A connection check's backoff has passed: sent again while the connection still waits for it. */
export function retryConnectionCheck(plugin: Plugin, call: PendingCall, conn: TcpConnection | null): void {
  const tcp = plugin.tcp;
  if (tcp === null) {
    resumeUnserved(conn);
    return;
  }
  if (conn === null || conn.state != ConnectionState.Checking) {
    tcp.counters.recordRemoteCallCancelled();
    return;
  }
  tcp.counters.recordRemoteCallRetry();
  const token = plugin.dispatch(call);
  if (token >= 0) {
    conn.checkToken = token;
    return;
  }
  tcp.counters.recordRemoteCallDone(TransportOutcome.SendError);
  transportFailure(plugin, tcp, conn, call.lastCode, call.lastMessage, host.nowNanos(), true);
}

function startCheck(plugin: Plugin, conn: TcpConnection): Action {
  const tcp = plugin.tcp;
  if (tcp === null) {
    // The TCP client went away with a reconfiguration: nothing to enforce.
    conn.state = ConnectionState.Open;
    return Action.Continue;
  }
  const now = host.nowNanos();
  const config = tcp.config;
  conn.state = ConnectionState.Checking;
  if (config.disableCheckCalls) return open(plugin, tcp, conn, now, false);

  const cached = tcp.checkCache.lookup(conn.attributes, now);
  if (cached !== null) {
    if (!quotasNeedHub(tcp.quotaCache, cached.statusCode, conn.quotas.length)) {
      conn.outcome.known = true;
      conn.outcome.checkCacheHit = true;
      tcp.counters.recordCheckCacheHit(cached.statusCode == StatusCode.OK);
      let verdict = new Verdict(cached.statusCode, cached.statusMessage);
      if (verdict.ok && conn.quotas.length > 0) verdict = quotaFromCache(plugin, tcp, conn, now);
      return decide(plugin, tcp, conn, verdict, now, false);
    }
    tcp.counters.recordCheckCacheHit(true);
  } else {
    tcp.counters.recordCheckCacheMiss();
  }
  if (conn.quotas.length > 0) tcp.counters.recordQuotaCacheMiss();

  const message = encodeCheckRequest(conn.attributes, GLOBAL_WORD_COUNT, plugin.nextDeduplicationId(), conn.quotas, false);
  tcp.counters.recordRemoteCall(true, conn.quotas.length > 0, false);
  const t = config.transport;
  const token = plugin.callCluster(t.checkCluster, CallKind.ConnectionCheck, "Check", message, t.networkFailPolicy, conn.id, null);
  if (token < 0) {
    tcp.counters.recordRemoteCallDone(TransportOutcome.SendError);
    return transportFailure(plugin, tcp, conn, StatusCode.UNAVAILABLE, "hub call could not be sent", now, false);
  }
  conn.checkToken = token;
  return Action.Pause;
}

// After a policy-cache hit the quota cache decides the connection quota
// locally, prefetching in the background (as for HTTP requests).
function quotaFromCache(plugin: Plugin, tcp: TcpClient, conn: TcpConnection, now: i64): Verdict {
  return decideQuotasFromCache(plugin, tcp.counters, tcp.quotaCache, tcp.config.transport.checkCluster, CallKind.ConnectionPrefetch, conn.id, conn.attributes, conn.quotas, now, conn.outcome);
}

// NetworkFailPolicy of the TCP transport: FAIL_OPEN lets the connection
// through (nothing cached); FAIL_CLOSE closes it with the transport status.
function transportFailure(plugin: Plugin, tcp: TcpClient, conn: TcpConnection, code: i32, message: string, now: i64, resume: bool): Action {
  if (!tcp.config.transport.networkFailPolicy.failClose) {
    host.log(LogLevel.Warn, "hub unreachable, connection allowed (FAIL_OPEN): " + message);
    tcp.counters.recordRemoteCheckResult(true);
    return decide(plugin, tcp, conn, new Verdict(StatusCode.OK, ""), now, resume);
  }
  tcp.counters.recordRemoteCheckResult(false);
  const status = code == StatusCode.OK ? <i32>StatusCode.UNAVAILABLE : code;
  return decide(plugin, tcp, conn, new Verdict(status, message), now, resume);
}

/**
 * The check's final status: allowed → open (reading resumed when it was
 * paused); anything else → the connection is closed without forwarding and
 * the close report carries the check error.
 */
function decide(plugin: Plugin, tcp: TcpClient, conn: TcpConnection, verdict: Verdict, now: i64, resume: bool): Action {
  const outcome = conn.outcome;
  outcome.known = true;
  outcome.code = verdict.code;
  outcome.message = verdict.message;
  if (verdict.ok) return open(plugin, tcp, conn, now, resume);
  host.log(LogLevel.Debug, "connection " + conn.id.toString() + " closed by the hub check: " + verdict.message);
  conn.closedByFilter = true;
  host.closeDownstream();
  close(plugin, conn, now);
  return Action.Pause;
}

function open(plugin: Plugin, tcp: TcpClient, conn: TcpConnection, now: i64, resume: bool): Action {
  conn.state = ConnectionState.Open;
  conn.heldBytes = 0;
  if (!tcp.config.disableReportCalls) {
    report(plugin, tcp, conn, ConnectionEvent.Open, now);
    conn.nextReportNanos = now + tcp.config.reportIntervalNanos;
    tcp.open.set(conn.id, conn);
  }
  if (resume) host.continueDownstream();
  return Action.Continue;
}

function close(plugin: Plugin, conn: TcpConnection, now: i64): void {
  conn.state = ConnectionState.Closed;
  conn.checkToken = -1;
  const tcp = plugin.tcp;
  if (tcp === null) return;
  tcp.open.delete(conn.id);
  if (!tcp.config.disableReportCalls) report(plugin, tcp, conn, ConnectionEvent.Close, now);
}

function report(plugin: Plugin, tcp: TcpClient, conn: TcpConnection, event: ConnectionEvent, now: i64): void {
  const r = new ConnectionReport();
  r.event = event;
  r.timeNanos = now;
  r.durationNanos = now - conn.startNanos;
  r.upstreamAddress = host.propertyString(property.UPSTREAM_ADDRESS);
  const bag = conn.attributes.clone();
  addConnectionReportAttributes(bag, r, conn.traffic, conn.outcome);
  tcp.counters.recordReportCall();
  if (tcp.reports.add(bag, now)) plugin.flushTcpReports();
}

// A check answered after the TCP client was configured away: let it through.
function resumeUnserved(conn: TcpConnection | null): void {
  if (conn === null || conn.state != ConnectionState.Checking) return;
  conn.state = ConnectionState.Open;
  host.continueDownstream();
}

function readConnection(): ConnectionView {
  const v = new ConnectionView();
  v.sourceAddress = host.propertyString(property.SOURCE_ADDRESS);
  v.destinationAddress = host.propertyString(property.DESTINATION_ADDRESS);
  v.mtls = host.propertyBool(property.CONNECTION_MTLS);
  v.peerPrincipal = host.propertyString(property.PEER_URI_SAN);
  v.localPrincipal = host.propertyString(property.LOCAL_URI_SAN);
  v.requestedServerName = host.propertyString(property.REQUESTED_SERVER_NAME);
  return v;
}
