import * as grpc from "@grpc/grpc-js";
import type { Resource, ResourceSet } from "./resource_set.ts";
import { NameSets, type Selection, selectionChange, selectionOf } from "./selection.ts";
import { decodeDeltaDiscoveryRequest, decodeDiscoveryRequest, deltaResourceBytes, type NodeFields, readSotwAck, sotwResourceBytes } from "./ads_wire.ts";
import { ENDPOINT, SHORT_TYPE, WILDCARD_TYPES } from "./type_urls.ts";
import {
  type AdsObserver,
  type ConnectionState,
  DEFAULT_PUSH_POLICY,
  type ProxyNode,
  type PushPolicy,
  type QueuedPush,
  type StreamAccess,
} from "./ads_types.ts";
import {
  CARRIED_KEPT,
  acknowledgedAs,
  ackedMap,
  heldCount,
  heldNames,
  heldVersion,
  ownHeld,
  sameNames,
  sentDelta,
  type Subscription,
  syncTo,
} from "./ads_subscription.ts";
import { Connection, structToJson } from "./ads_connection.ts";
import { WriteBudget } from "./ads_flow.ts";

/**
 * The Aggregated Discovery Service (envoy.service.discovery.v3): each proxy
 * opens a stream, subscribes per resource type, and is sent that type's
 * resources whenever they change for it. State of the world
 * (`StreamAggregatedResources`): every response holds all of the type's
 * resources the proxy asked for. Incremental (`DeltaAggregatedResources`,
 * Envoy's `DELTA_GRPC`): a response holds only the resources whose version
 * changed for the proxy and the names of those removed; subscriptions change
 * name by name, and a reconnecting proxy's `initial_resource_versions` spare
 * it what it already has. ACKs and NACKs are honoured: a NACKed version is
 * logged and counted and nothing is resent until the resources change again,
 * so the proxy keeps its last good configuration (on incremental streams the
 * resources a refused response carried are sent again with the next push).
 */

const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const DELTA_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";
const identity = (b: Buffer): Buffer => b;

export class AggregatedDiscoveryService {
  private readonly connections = new Set<Connection>();
  /** Proxies a push has not reached yet, in push order (DISCO_PUSH_THROTTLE). */
  private readonly queue = new Map<Connection, QueuedPush>();
  private draining = false;
  private nextId = 0;
  /** Subscriptions that name the same resources share one set (and the selections computed for it). */
  private readonly nameSets = new NameSets();
  /** How a name set's names were first seen on the wire (their resource_names fields): an ACK repeating them is known by its bytes. */
  private readonly namesOnWire = new WeakMap<ReadonlySet<string>, Buffer>();
  /** Response bytes in flight on all streams together (host/discovery/ads_flow.ts). */
  private readonly budget: WriteBudget;

  /**
   * @param resourcesFor the resources a proxy may be served, computed from the
   *   mesh model; called again for every connection on each push.
   */
  constructor(
    private resourcesFor: (node: ProxyNode) => ResourceSet,
    private readonly observer: AdsObserver = {},
    private readonly policy: PushPolicy = DEFAULT_PUSH_POLICY,
  ) {
    this.budget = new WriteBudget(policy.writeLimitBytes, policy.parkWritesAfterMs);
  }

  /** Registers the service on a gRPC server; `access` checks each caller first. */
  addTo(server: grpc.Server, access?: StreamAccess): void {
    const bidi = (path: string) => ({
      path,
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    });
    const definition = { StreamAggregatedResources: bidi(ADS_PATH), DeltaAggregatedResources: bidi(DELTA_PATH) };
    const open = (delta: boolean) => (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      const san = call.getAuthContext()?.sslPeerCertificate?.subjectaltname;
      const problem = access?.peerProblem(san);
      if (problem === undefined) return this.serve(call, access?.peerIdentity(san), delta);
      this.observer.refused?.(call.getPeer(), problem);
      call.emit("error", { code: grpc.status.PERMISSION_DENIED, details: problem });
    };
    server.addService(definition as unknown as grpc.ServiceDefinition, { StreamAggregatedResources: open(false), DeltaAggregatedResources: open(true) });
  }

  /** The connected proxies and what each was sent and acknowledged. */
  state(): ConnectionState[] {
    return [...this.connections].filter((c) => c.node).map((c) => ({ id: c.id, node: c.node!, connectedAt: c.connectedAt, subscriptions: c.subscriptions }));
  }

  /**
   * New resources for every proxy: each subscription whose content changed
   * for it is sent again (every subscription when pushes are not scoped).
   * `changedAt` (performance.now() of the change) times each proxy's
   * convergence: until it has answered every response of the push. The
   * first `throttle` proxies are pushed to now, the others in the next
   * turns of the event loop; a proxy still queued from an earlier push is
   * pushed once, with the newest resources.
   */
  push(resourcesFor?: (node: ProxyNode) => ResourceSet, changedAt = performance.now()): void {
    if (resourcesFor) this.resourcesFor = resourcesFor;
    const enqueuedAt = performance.now();
    for (const c of this.connections) if (c.node && !this.queue.has(c)) this.queue.set(c, { enqueuedAt, changedAt });
    if (!this.draining) this.drain();
  }

  private drain(): void {
    this.draining = true;
    let n = 0;
    for (const [c, q] of this.queue) {
      if (n++ >= this.policy.throttle) break;
      this.queue.delete(c);
      this.observer.dequeued?.(c.node!, performance.now() - q.enqueuedAt);
      const set = this.resourcesFor(c.node!);
      let sent = false;
      for (const [type, sub] of c.subscriptions) sent = this.respond(c, type, sub, set, true) || sent;
      if (sent && c.changedAt === undefined) c.changedAt = q.changedAt;
    }
    if (this.queue.size === 0) this.draining = false;
    else setImmediate(() => this.drain());
  }

  private serve(call: grpc.ServerDuplexStream<Buffer, Buffer>, identity: ProxyNode["identity"], delta: boolean): void {
    const failed = (type: string, e: Error) => (connection.node ? this.observer.sendFailed?.(connection.node, type, e) : this.observer.internalError?.(e));
    const peer = call.getPeer();
    const connection = new Connection(`${peer}-${++this.nextId}`, this.budget.writer(call, peer, failed), identity, delta);
    this.connections.add(connection);
    const close = () => {
      connection.close();
      if (!this.connections.delete(connection)) return;
      this.queue.delete(connection);
      if (connection.node) this.observer.disconnected?.(connection.node);
    };
    call.on("data", (bytes: Buffer) => {
      try {
        if (delta) this.onDeltaRequest(connection, bytes);
        else this.onRequest(connection, bytes);
      } catch (e) {
        this.observer.internalError?.(e as Error);
        call.destroy(e as Error);
        close();
      }
    });
    call.on("end", () => {
      close();
      call.end();
    });
    call.on("error", close);
    call.on("cancelled", close);
  }

  private onRequest(c: Connection, bytes: Buffer): void {
    const ack = readSotwAck(bytes);
    // Most requests are ACKs naming what the proxy subscribed to already: its names are not decoded again.
    const known = ack?.nonce ? c.subscriptions.get(ack.typeUrl) : undefined;
    if (ack && known && c.node) {
      if (ack.nonce !== known.sentNonce) return this.observer.expiredNonce?.(c.node, ack.typeUrl);
      if (known.names === "*" ? ack.names.byteLength === 0 : this.namesOnWire.get(known.names)?.equals(ack.names))
        return this.answered(c, ack.typeUrl, known, undefined, ack.version);
    }
    const req = decodeDiscoveryRequest(bytes);
    const node = this.nodeOf(c, req.node);
    const names: ReadonlySet<string> | "*" = req.resource_names.length === 0 && WILDCARD_TYPES.has(req.type_url) ? "*" : new Set(req.resource_names);
    let sub = c.subscriptions.get(req.type_url);
    if (sub && req.response_nonce && req.response_nonce !== sub.sentNonce) {
      this.observer.expiredNonce?.(node, req.type_url); // answers an older response: superseded
      return;
    }
    if (sub && req.response_nonce) {
      this.answered(c, req.type_url, sub, req.error_detail, req.version_info);
      if (sameNames(sub.names, names)) return;
    }
    if (!sub) {
      sub = { names };
      c.subscriptions.set(req.type_url, sub);
    }
    sub.names = names === "*" ? names : this.nameSets.intern(names);
    if (ack && sub.names !== "*" && !this.namesOnWire.has(sub.names)) this.namesOnWire.set(sub.names, Buffer.from(ack.names));
    sub.sentVersion = undefined; // a new subscription is answered even when nothing changed, with all it names
    sub.syncedWith = undefined;
    this.respond(c, req.type_url, sub, this.resourcesFor(node), false);
  }

  /** The proxy answered the last response of a subscription: a NACK (`error`) or an ACK of `version`. */
  private answered(c: Connection, type: string, sub: Subscription, error: { message?: string } | undefined, version: string): void {
    sub.answered = true;
    if (error) {
      sub.pending = undefined; // refused: the proxy keeps what it acknowledged before
      sub.nacked = { version: sub.sentVersion ?? "", message: error.message ?? "" };
      // The proxy does not hold what it refused: the next response is whole (incremental streams keep what it holds, as a map of their own).
      if (c.delta) ownHeld(sub);
      else sub.syncedWith = undefined;
      this.observer.nacked?.(c.node!, type, sub.nacked.version, sub.nacked.message);
    } else {
      sub.ackedVersion = version;
      sub.ackedConfig = sub.sentConfig;
      sub.nacked = undefined;
      sub.ackedAt = Date.now();
      if (sub.pending?.to) {
        sub.ackedSelection = sub.pending.to; // shared: what it holds now is exactly that selection
        sub.acked = undefined;
      } else if (sub.pending) {
        const acked = ackedAfter(ackedMap(sub), sub.pending);
        if (c.delta) acknowledgedAs(sub, acked);
        else sub.acked = acked; // state of the world: already one map per list, shared
      }
      sub.pending = undefined;
      this.observer.acked?.(c.node!, type, version);
    }
    this.checkConverged(c);
  }

  /** The proxy of a stream, from its first request's Node. */
  private nodeOf(c: Connection, n: NodeFields | undefined): ProxyNode {
    if (!c.node) {
      c.node = {
        id: n?.id ?? "",
        cluster: n?.cluster ?? "",
        metadata: structToJson(n?.metadata),
        userAgentName: n?.user_agent_name ?? "",
        ...(c.identity ? { identity: c.identity } : {}),
      };
      this.observer.connected?.(c.node);
    }
    return c.node;
  }

  /**
   * An incremental request: an ACK or NACK of the last response (what a
   * NACKed one carried is sent again with the next push), and subscriptions changed
   * name by name. The first request of a type with no names subscribes to
   * all of a wildcard type (as `*` does); `initial_resource_versions` is what
   * a reconnecting proxy already holds. A new or widened subscription is
   * always answered, if only with nothing, so the proxy can finish warming.
   */
  private onDeltaRequest(c: Connection, bytes: Buffer): void {
    const req = decodeDeltaDiscoveryRequest(bytes);
    const node = this.nodeOf(c, req.node);
    let sub = c.subscriptions.get(req.type_url);
    // A refused response, even a superseded one: what it carried is held in a version we do not know, so it is sent again.
    if (sub && req.response_nonce && req.error_detail) {
      const held = ownHeld(sub);
      for (const n of sub.carried?.get(req.response_nonce) ?? []) held.set(n, "");
    }
    if (sub && req.response_nonce && req.response_nonce !== sub.sentNonce) this.observer.expiredNonce?.(node, req.type_url);
    else if (sub && req.response_nonce) {
      this.answered(c, req.type_url, sub, req.error_detail, sub.sentVersion ?? "");
      // A proxy answers responses in order: with the newest answered, no earlier one can still be refused, so what they carried is forgotten.
      sub.carried = undefined;
    }
    const first = !sub;
    if (!sub) {
      const initial = Object.entries(req.initial_resource_versions ?? {});
      sub = { names: new Set<string>(), ...(initial.length > 0 ? { held: new Map(initial) } : {}) };
      c.subscriptions.set(req.type_url, sub);
    }
    // Most requests are ACKs: the names change only when a request subscribes or unsubscribes.
    if (!first && req.resource_names_subscribe.length === 0 && req.resource_names_unsubscribe.length === 0) return;
    const wanted = new Set(sub.names === "*" ? ["*"] : sub.names);
    if (first && req.resource_names_subscribe.length === 0 && WILDCARD_TYPES.has(req.type_url)) wanted.add("*");
    for (const n of req.resource_names_subscribe) wanted.add(n);
    for (const n of req.resource_names_unsubscribe) {
      wanted.delete(n);
      if (heldVersion(sub, n) !== undefined) ownHeld(sub).delete(n); // the proxy forgets what it unsubscribes from
    }
    const widened = req.resource_names_subscribe.some((n) => (sub.names === "*" ? false : !sub.names.has(n)));
    sub.names = wanted.has("*") ? "*" : this.nameSets.intern(wanted);
    if (first || widened) this.respondDelta(c, req.type_url, sub, this.resourcesFor(node), false, true);
  }

  /**
   * What changed for an incremental subscription since what the proxy
   * holds: the resources whose version differs (all of them on an unscoped
   * push) and the names it holds that are gone. Whether a response was sent.
   */
  private respondDelta(c: Connection, type: string, sub: Subscription, set: ResourceSet, push: boolean, answerAnyway: boolean): boolean {
    const started = performance.now();
    const selection = selectionOf(set, type, sub.names);
    const { changed, removed: gone, shared } = this.deltaChanges(sub, selection, push && !this.policy.scoped);
    // Answering a new subscription, a name asked for that does not exist is said to be absent (so the proxy need not wait for it).
    const absent = answerAnyway && sub.names !== "*" ? [...sub.names].filter((n) => !selection.versions.has(n) && heldVersion(sub, n) === undefined) : [];
    const removed = absent.length === 0 ? gone : [...gone, ...absent];
    const config = this.policy.configVersion?.();
    if (changed.length === 0 && removed.length === 0 && !answerAnyway) {
      syncTo(sub, selection);
      if (config !== undefined) {
        sub.sentConfig = config;
        if (sub.answered && !sub.nacked) sub.ackedConfig = config;
      }
      return false;
    }
    // system_version_info only tells what was sent (debugging): digested once per selection.
    const version = selection.version();
    try {
      sub.sentNonce = c.sendDelta(type, version, () => deltaResourceBytes(changed, shared), removed, this.policy.identifier, config);
    } catch (e) {
      this.observer.sendFailed?.(c.node!, type, e as Error);
      return false;
    }
    // What the proxy holds is now exactly this selection: the next push's changes can be computed once for all that hold it.
    sentDelta(sub, selection, changed, removed);
    const carried = (sub.carried ??= new Map());
    carried.set(
      sub.sentNonce,
      changed.map((r) => r.name),
    );
    if (carried.size > CARRIED_KEPT) carried.delete(carried.keys().next().value!);
    sub.sentVersion = version;
    sub.sentConfig = config;
    sub.sentAt = Date.now();
    if (this.policy.keepSent) sub.sentResources = [...changed];
    sub.answered = false;
    this.observer.sent?.(c.node!, type, version, changed.length, push, performance.now() - started);
    return true;
  }

  /**
   * What an incremental subscription must be sent to hold `selection`: all
   * of it on an unscoped push; when it holds exactly an earlier selection,
   * the change between the two (shared by every proxy that held it); else
   * the resources whose version differs from what it holds, and what it
   * holds that is gone.
   */
  private deltaChanges(
    sub: Subscription,
    selection: Selection,
    unscoped: boolean,
  ): { changed: readonly Resource[]; removed: readonly string[]; shared: boolean } {
    if (!unscoped && sub.syncedWith === selection) return { changed: [], removed: [], shared: false };
    if (!unscoped && sub.syncedWith) return { ...selectionChange(sub.syncedWith, selection), shared: true };
    const removed = [...heldNames(sub)].filter((n) => !selection.versions.has(n));
    if (unscoped || heldCount(sub) === 0) return { changed: selection.resources, removed, shared: true };
    const changed = selection.resources.filter((r) => heldVersion(sub, r.name) !== selection.versions.get(r.name));
    // All of it (a proxy that holds none of it in this version): the selection's own list, encoded once.
    return changed.length === selection.resources.length ? { changed: selection.resources, removed, shared: true } : { changed, removed, shared: false };
  }

  /** Whether a response was sent (the subscription's content changed). */
  private respond(c: Connection, type: string, sub: Subscription, set: ResourceSet, push: boolean): boolean {
    if (c.delta) return this.respondDelta(c, type, sub, set, push, false);
    const started = performance.now();
    const selection = selectionOf(set, type, sub.names);
    const { resources } = selection;
    const version = selection.version();
    const config = this.policy.configVersion?.();
    // Unscoped pushes re-send what the proxy already has (upstream's full push to every proxy).
    if (version === sub.sentVersion && !(push && !this.policy.scoped)) {
      // Nothing changed for this proxy: what it has (or will ACK) is also this configuration's.
      if (config !== undefined) {
        sub.sentConfig = config;
        if (sub.answered && !sub.nacked) sub.ackedConfig = config;
      }
      return false;
    }
    // Load assignments are not a whole-state type: a scoped push sends only those that changed since what the proxy was sent (upstream's incremental EDS).
    const partial = type === ENDPOINT && push && this.policy.scoped && sub.syncedWith && !sub.nacked ? selectionChange(sub.syncedWith, selection) : undefined;
    const sent = partial && partial.removed.length === 0 ? partial.changed : resources;
    try {
      sub.sentNonce = c.send(type, version, sotwResourceBytes(sent), this.policy.identifier, config);
    } catch (e) {
      this.observer.sendFailed?.(c.node!, type, e as Error);
      return false;
    }
    sub.syncedWith = selection;
    sub.sentVersion = version;
    sub.sentConfig = config;
    sub.sentAt = Date.now();
    sub.pending = { full: true, resources, removed: [] };
    if (this.policy.keepSent) sub.sentResources = [...sent];
    sub.answered = false;
    this.observer.sent?.(c.node!, type, version, sent.length, push, performance.now() - started);
    return true;
  }

  /** After an ACK or NACK: a proxy that has answered every response of a push has converged. */
  private checkConverged(c: Connection): void {
    if (c.changedAt === undefined) return;
    for (const sub of c.subscriptions.values()) if (sub.sentVersion !== undefined && !sub.answered) return;
    this.observer.converged?.(c.node!, performance.now() - c.changedAt);
    c.changedAt = undefined;
  }
}

/** Acknowledged whole lists (state of the world), as maps by name: one map per list, shared by every proxy that acknowledged it, never changed. */
const ackedLists = new WeakMap<readonly Resource[], Map<string, Resource>>();
const sharedAcked = new WeakSet<Map<string, Resource>>();

/** What a proxy holds once it acknowledged `pending` on top of `acked`: its own map is updated in place, a shared one copied. */
function ackedAfter(acked: Map<string, Resource> | undefined, pending: NonNullable<Subscription["pending"]>): Map<string, Resource> {
  if (pending.full && pending.removed.length === 0) {
    let map = ackedLists.get(pending.resources);
    if (!map) {
      map = new Map(pending.resources.map((r) => [r.name, r]));
      ackedLists.set(pending.resources, map);
      sharedAcked.add(map);
    }
    return map;
  }
  const held = pending.full ? new Map<string, Resource>() : acked && !sharedAcked.has(acked) ? acked : new Map(acked);
  for (const r of pending.resources) held.set(r.name, r);
  for (const n of pending.removed) held.delete(n);
  return held;
}

export { SHORT_TYPE };
export type { AdsObserver, ConnectionState, ProxyNode, PushPolicy, StreamAccess };
