import { addReportAttributes, ResponseView } from "../attributes/report";
import { FORWARDED_HEADER } from "../proto/forwarded";
import { CachedCheck } from "../client/check_cache";
import { TransportOutcome, transportOutcome } from "../client/counters";
import { ClientConfig, NetworkFailPolicy } from "../config/client_config";
import { evaluateRequest, Evaluation } from "../evaluate";
import { decodeCheckResponse } from "../hub/check_response";
import { encodeCheckRequest } from "../hub/check_request";
import { GLOBAL_WORD_COUNT } from "../hub/global_words";
import { HeaderOperation, HeaderOperationKind, RouteDirective } from "../hub/route_directive";
import { httpStatusForCode, StatusCode, statusCodeName } from "../status_codes";
import { QuotaCharge } from "../quota";
import { requestWithHeaders } from "../request";
import { HeaderMap } from "../attributes/header_map";
import { knownSlotOfString } from "../known_strings";
import { RepeatedText } from "../recent_strings";
import { isNullString } from "../text";
import { encodeUtf8 } from "../utf8";
import { Action, LogLevel, MapType } from "../abi/enums";
import * as host from "../abi/host";
import { readRequestProperties, readResponseProperties, SKIP_REQUEST_SIZE, SKIP_RESPONSE_SIZE, SKIP_UPSTREAM_ADDRESS } from "../abi/stream_properties";
import { DESTINATION_IP, DESTINATION_PORT } from "../attributes/names";
import { decideCheck, OK_VERDICT, Verdict } from "./check_decision";
import { applyPrefetchAnswer, decideQuotasFromCache, quotasNeedHub, toShape } from "./quota_from_cache";
import { CheckState, HttpStream } from "./http_stream";
import { CallKind, PendingCall, Plugin } from "./plugin";

// The per-request flow of the hub client over the proxy-wasm ABI. Decisions
// are made by pure code (evaluate, caches, decideCheck); this file only
// sequences them and carries out their effects through the host.

const EMPTY: Array<string> = [];

// The outgoing forwarded header's value is the configuration's (one string
// per service config, the same object from request to request): its UTF-8
// is kept for as long as the same string comes.
const FORWARDED_HEADER_UTF8 = encodeUtf8(FORWARDED_HEADER);
let lastForwarded: string = "";
let lastForwardedUtf8: ArrayBuffer = new ArrayBuffer(0);

function forwardedUtf8(value: string): ArrayBuffer {
  if (changetype<usize>(value) != changetype<usize>(lastForwarded)) {
    lastForwarded = value;
    lastForwardedUtf8 = encodeUtf8(value);
  }
  return lastForwardedUtf8;
}

/** A cached check answer that carries the hub's route directive with its status. */
class RoutedCheck extends CachedCheck {
  constructor(code: i32, message: string, public directive: RouteDirective) {
    super(code, message);
  }
}

/** proxy_on_request_headers: derive attributes, then answer from cache or ask the hub. */
// @ts-ignore: decorator
@inline
export function onRequestHeaders(plugin: Plugin, stream: HttpStream): Action {
  if (plugin.config === null) return Action.Continue;
  const config = plugin.config as ClientConfig;
  const now = host.nowNanos();
  stream.startNanos = now;
  // A finished request's view and header map are refilled (stream_pool.ts).
  const spare = plugin.streamPool.request();
  const spareHeaders = spare !== null ? spare.headers : null;
  const headers = host.headerMapInto(MapType.RequestHeaders, spareHeaders instanceof HeaderMap ? <HeaderMap>spareHeaders : new HeaderMap(32));
  const request = requestWithHeaders(headers, spare);
  // The incoming forwarded header must never reach the application.
  if (!isNullString(request.forwarded)) host.removeHeader(MapType.RequestHeaders, FORWARDED_HEADER);
  readRequestProperties(request);
  request.timeNanos = now;
  if (request.destinationService.length == 0) request.destinationService = serviceFromAuthority(config, headers);
  stream.request = request;

  const e = evaluateRequest(config, request, false, plugin.streamPool.evaluation());
  stream.evaluation = e;
  plugin.counters.recordForwardedAttributesDropped(e.forwardedDropped);
  if (e.forwardHeader.length > 0) host.replaceHeaderUtf8(MapType.RequestHeaders, FORWARDED_HEADER_UTF8, forwardedUtf8(e.forwardHeader));

  const service = e.service;
  if (service === null || service.disableCheckCalls) return Action.Continue;

  const cached = plugin.checkCache.lookup(e.view, now);
  if (cached !== null) {
    if (!quotasNeedHub(plugin.quotaCache, cached.statusCode, e.quotas.length)) return answerFromCache(plugin, stream, cached, now);
    plugin.counters.recordCheckCacheHit(true);
  } else {
    plugin.counters.recordCheckCacheMiss();
  }
  if (e.quotas.length > 0) plugin.counters.recordQuotaCacheMiss();

  const message = encodeCheckRequest(e.attributes, GLOBAL_WORD_COUNT, plugin.nextDeduplicationId(), e.quotas, false);
  plugin.counters.recordRemoteCall(true, e.quotas.length > 0, false);
  const token = plugin.call(CallKind.Check, "Check", message, config.failPolicyFor(service), stream.id, null);
  if (token < 0) {
    plugin.counters.recordRemoteCallDone(TransportOutcome.SendError);
    return applyTransportFailure(plugin, stream, StatusCode.UNAVAILABLE, "hub call could not be sent") ? Action.Continue : Action.Pause;
  }
  stream.state = CheckState.Waiting;
  return Action.Pause;
}

// A policy-cache hit: the quota cache decides quotas locally, prefetching in
// the background (upstream uses the quota cache only after a policy hit).
// @ts-ignore: decorator
@inline
function answerFromCache(plugin: Plugin, stream: HttpStream, cached: CachedCheck, now: i64): Action {
  const e = stream.evaluation!;
  const outcome = stream.outcome;
  outcome.known = true;
  outcome.checkCacheHit = true;
  plugin.counters.recordCheckCacheHit(cached.statusCode == StatusCode.OK);
  let verdict = cached.statusCode == StatusCode.OK && cached.statusMessage.length == 0 ? OK_VERDICT : new Verdict(cached.statusCode, cached.statusMessage);
  if (verdict.ok && e.quotas.length > 0) verdict = quotaFromCache(plugin, stream, e.quotas, now);
  const directive = cached instanceof RoutedCheck ? (cached as RoutedCheck).directive : null;
  return finish(plugin, stream, verdict, directive, false);
}

function quotaFromCache(plugin: Plugin, stream: HttpStream, quotas: Array<QuotaCharge>, now: i64): Verdict {
  const cluster = (plugin.config as ClientConfig).transport.checkCluster;
  return decideQuotasFromCache(plugin, plugin.counters, plugin.quotaCache, cluster, CallKind.Prefetch, stream.id, stream.evaluation!.view, quotas, now, stream.outcome);
}

/** proxy_on_grpc_receive for a check or prefetch. */
export function onCallAnswered(plugin: Plugin, call: PendingCall, bytes: Uint8Array, stream: HttpStream | null): void {
  const now = host.nowNanos();
  plugin.counters.recordRemoteCallDone(TransportOutcome.Success);
  plugin.onHubReachable();
  const response = decodeCheckResponse(bytes);
  if (call.kind == CallKind.Prefetch) {
    applyPrefetchAnswer(plugin.counters, plugin.quotaCache, call.prefetch!, response, now);
    return;
  }
  if (stream === null || stream.state != CheckState.Waiting) return;
  const e = stream.evaluation!;
  const config = plugin.config as ClientConfig;
  const failOpen = !config.failPolicyFor(e.service).failClose;
  if (response === null) {
    finishWaiting(plugin, stream, new Verdict(StatusCode.INVALID_ARGUMENT, "malformed answer from the hub"), null);
    return;
  }
  const verdict = decideCheck(response, e.quotas, failOpen);
  const precondition = response.precondition;
  plugin.counters.recordRemoteCheckResult(precondition.status.code == StatusCode.OK);
  if (e.quotas.length > 0) plugin.counters.recordRemoteQuotaResult(verdict.ok);
  if (response.hasPrecondition && precondition.referenced.valid) {
    const directive = precondition.routeDirective;
    const result: CachedCheck =
      directive !== null
        ? new RoutedCheck(precondition.status.code, precondition.status.message, directive as RouteDirective)
        : new CachedCheck(precondition.status.code, precondition.status.message);
    plugin.checkCache.insert(e.attributes, toShape(precondition.referenced), result, precondition.validDurationNanos, precondition.validUseCount, now);
  }
  finishWaiting(plugin, stream, verdict, precondition.routeDirective);
}

/**
 * proxy_on_grpc_close: an attempt failed. A check of a stream still waiting
 * is retried under its NetworkFailPolicy (unless the host retries itself);
 * the final failure goes to the fail policy.
 */
export function onCallFailed(plugin: Plugin, call: PendingCall, code: i32, message: string, stream: HttpStream | null): void {
  if (call.kind == CallKind.Prefetch) {
    plugin.counters.recordRemoteCallDone(transportOutcome(code, message));
    // A failed prefetch grants in full: quota fails open on its own.
    plugin.quotaCache.onPrefetchResponse(call.prefetch!, 0, -1, true, host.nowNanos());
    return;
  }
  const waiting = stream !== null && stream.state == CheckState.Waiting;
  if (waiting && plugin.retryLater(call, code, message)) return;
  plugin.counters.recordRemoteCallDone(transportOutcome(code, message));
  if (!waiting) return;
  if (applyTransportFailure(plugin, stream!, code, message)) host.continueRequest();
}

/**
 * A check's backoff has passed: sent again while its stream still waits
 * (`stream` null when the client went away: the call is abandoned).
 */
export function retryCheck(plugin: Plugin, call: PendingCall, stream: HttpStream | null): void {
  if (stream === null || stream.state != CheckState.Waiting) {
    plugin.counters.recordRemoteCallCancelled();
    return;
  }
  plugin.counters.recordRemoteCallRetry();
  if (plugin.dispatch(call) >= 0) return;
  plugin.counters.recordRemoteCallDone(TransportOutcome.SendError);
  if (applyTransportFailure(plugin, stream, call.lastCode, call.lastMessage)) host.continueRequest();
}

// NetworkFailPolicy: FAIL_OPEN lets the request through (nothing cached);
// FAIL_CLOSE answers with the transport status (UNAVAILABLE → 503).
// Returns true when the request may continue.
function applyTransportFailure(plugin: Plugin, stream: HttpStream, code: i32, message: string): bool {
  const e = stream.evaluation!;
  const policy = (plugin.config as ClientConfig).failPolicyFor(e.service);
  stream.state = CheckState.Done;
  stream.outcome.known = true;
  if (!policy.failClose) {
    host.log(LogLevel.Warn, "hub unreachable, request allowed (FAIL_OPEN): " + message);
    plugin.counters.recordRemoteCheckResult(true);
    return true;
  }
  const status = code == StatusCode.OK ? <i32>StatusCode.UNAVAILABLE : code;
  plugin.counters.recordRemoteCheckResult(false);
  reply(stream, new Verdict(status, message));
  return false;
}

function finishWaiting(plugin: Plugin, stream: HttpStream, verdict: Verdict, directive: RouteDirective | null): void {
  if (finish(plugin, stream, verdict, directive, true) == Action.Continue) host.continueRequest();
}

// @ts-ignore: decorator
@inline
function finish(plugin: Plugin, stream: HttpStream, verdict: Verdict, directive: RouteDirective | null, remote: bool): Action {
  stream.state = CheckState.Done;
  const outcome = stream.outcome;
  outcome.known = true;
  outcome.code = verdict.code;
  outcome.message = verdict.message;
  if (directive !== null && directive.directResponseCode != 0 && verdict.ok) {
    host.sendLocalResponse(directive.directResponseCode, "hub_direct_response", directive.directResponseBody, EMPTY, EMPTY);
    stream.repliedLocally = true;
    return Action.Pause;
  }
  if (!verdict.ok) {
    reply(stream, verdict);
    return Action.Pause;
  }
  if (directive !== null) {
    applyHeaderOperations(MapType.RequestHeaders, directive.requestHeaderOps);
    if (directive.responseHeaderOps.length > 0) stream.responseHeaderOps = directive.responseHeaderOps;
  }
  return Action.Continue;
}

/** The denial as a local reply: mapped HTTP status, body `<CODE_NAME>:<message>`. */
function reply(stream: HttpStream, verdict: Verdict): void {
  stream.outcome.code = verdict.code;
  stream.outcome.message = verdict.message;
  stream.repliedLocally = true;
  host.sendLocalResponse(
    <u32>httpStatusForCode(verdict.code),
    "hub_check_denied",
    statusCodeName(verdict.code) + ":" + verdict.message,
    ["content-type"],
    ["text/plain"],
  );
}

function applyHeaderOperations(map: MapType, ops: Array<HeaderOperation>): void {
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op.operation == HeaderOperationKind.REMOVE) host.removeHeader(map, op.name);
    else if (op.operation == HeaderOperationKind.APPEND) host.addHeader(map, op.name, op.value);
    else host.replaceHeader(map, op.name, op.value);
  }
}

/** proxy_on_response_headers: the route directive's response header operations. */
export function onResponseHeaders(stream: HttpStream): Action {
  const ops = stream.responseHeaderOps;
  if (ops !== null) applyHeaderOperations(MapType.ResponseHeaders, ops);
  return Action.Continue;
}

/** proxy_on_log: the report of a finished request joins the batch. */
// @ts-ignore: decorator
@inline
export function onLog(plugin: Plugin, stream: HttpStream): void {
  report(plugin, stream);
  plugin.streamPool.release(stream);
}

// @ts-ignore: decorator
@inline
function report(plugin: Plugin, stream: HttpStream): void {
  const e = stream.evaluation;
  if (plugin.config === null || e === null) return;
  const service = e.service;
  if (service === null || service.disableReportCalls) return;
  const now = host.nowNanos();
  const response = plugin.responseView;
  // The headers are filled again below (emptied when the host has none).
  response.resetForHeaders();
  readResponseProperties(response, knownOutcome(stream, e));
  host.headerMapInto(MapType.ResponseHeaders, response.headers as HeaderMap);
  // Trailers only when the response had some (resetForHeaders left the map empty).
  if (stream.responseTrailers) host.headerMapInto(MapType.ResponseTrailers, response.trailers as HeaderMap);
  response.timeNanos = now;
  response.durationNanos = stream.startNanos > 0 ? now - stream.startNanos : 0;
  // The check's own bag and values become the report's: it is encoded into
  // the batch at once, before the stream gives them back (onLog).
  const bag = e.attributes;
  addReportAttributes(bag, response, stream.outcome, stream.request!.headers, e.values);
  plugin.addReport(bag, now);
}

// The outcome properties the module knows without asking the host (each
// costs a host call, and a present value an allocation): a body's size
// when the headers ended the stream (no body: 0, as the host would say);
// the upstream's address when the report will not use it (it only fills in
// destination.ip and destination.port, which the request's own
// destination.address or a static attribute gave already).
// @ts-ignore: decorator
@inline
function knownOutcome(stream: HttpStream, e: Evaluation): u32 {
  let skip: u32 = 0;
  if (stream.requestBodyless) skip |= SKIP_REQUEST_SIZE;
  if (stream.responseBodyless) skip |= SKIP_RESPONSE_SIZE;
  const view = e.view;
  if (view.getId(DESTINATION_IP) !== null && view.getId(DESTINATION_PORT) !== null) skip |= SKIP_UPSTREAM_ADDRESS;
  return skip;
}

// Without a destination-service property (a proxy that sets none), the
// authority names the service when it is a configured one. The authority
// repeats from request to request: read in place, its bytes are compared
// with the last ones (RepeatedText gives back the same string for them), and
// the answer for the same authority under the same configuration is the
// last one.
const AUTHORITY_SLOT = knownSlotOfString(":authority");
const lastAuthority = new RepeatedText();
let lastAuthorityName: string = "";
let lastAuthorityConfig: ClientConfig | null = null;
let lastAuthorityService: string = "";

// @ts-ignore: decorator
@inline
function serviceFromAuthority(config: ClientConfig, headers: HeaderMap): string {
  const at = headers.indexOfSlot(AUTHORITY_SLOT);
  if (at < 0) return "";
  const authority = headers.isViewing ? lastAuthority.of(headers.valuePtr(at), headers.valueLength(at)) : headers.valueAt(at);
  if (changetype<usize>(authority) == changetype<usize>(lastAuthorityName) && config === lastAuthorityConfig) return lastAuthorityService;
  const service = configuredAuthority(config, authority);
  lastAuthorityName = authority;
  lastAuthorityConfig = config;
  lastAuthorityService = service;
  return service;
}

function configuredAuthority(config: ClientConfig, authority: string): string {
  const colon = authority.lastIndexOf(":");
  const host = colon > 0 && authority.indexOf("]") < colon ? authority.substring(0, colon) : authority;
  return config.services.has(host) ? host : "";
}

/** The shape a check or quota answer's referenced attributes give to the caches. */

