import type { Counter, Registry } from "prom-client";
import { daemonRegistry, specCounter, specGauge, specHistogram } from "../telemetry/spec_metrics.ts";
import { unpackAny } from "../wire/envoy_protos.ts";
import type { ProxyNode } from "./ads_server.ts";
import { endpointCounts, meshConflicts } from "./conflicts.ts";
import type { MeshSnapshot } from "./mesh_snapshot.ts";
import type { DiscoveryObserver } from "./observer.ts";
import { CLUSTER, ENDPOINT, LISTENER, ROUTE, SHORT_TYPE } from "./type_urls.ts";

/** The webhooks' counters, incremented by host/discovery/webhook_server.ts. */
export interface WebhookCounters {
  injectionRequests: Counter;
  injectionSuccess: Counter;
  injectionSkip: Counter;
  injectionFailure: Counter;
  validationPassed: Counter;
  validationFailed: Counter;
  validationHttpError: Counter;
  certKeyUpdates: Counter;
  certKeyUpdateErrors: Counter;
}

/** Upstream's buckets for push and convergence times, seconds. */
const PUSH_TIME_BUCKETS = [0.01, 0.1, 0.5, 1, 3, 5];
const CONVERGENCE_BUCKETS = [0.1, 0.5, 1, 3, 5, 10, 20, 30];
const QUEUE_BUCKETS = [0.1, 0.5, 1, 3, 5, 10, 20, 30];

const short = (type: string) => SHORT_TYPE[type] ?? type;

/**
 * The `disco_*` counters and gauges of spec 2 that have a meaning in this
 * control plane (docs/metrics.md lists every one with its status), updated
 * by the ADS server and the configuration watcher through `observer`.
 */
export class DiscoveryMetrics {
  readonly registry: Registry;
  private readonly xds;
  private readonly pushes;
  private readonly pushTime;
  private readonly convergence;
  private readonly triggers;
  private readonly rejects;
  private readonly typeRejects;
  private readonly rejectedConfigs;
  private readonly inboundUpdates;
  private readonly internalErrors;
  private readonly expiredNonces;
  private readonly services;
  private readonly virtualServices;
  private readonly noInstances;
  private readonly allLocalityEndpoints;
  private readonly edsInstances;
  private readonly duplicateClusters;
  private readonly duplicateSubsets;
  private readonly duplicateDomains;
  private readonly conflictInbound;
  private readonly conflictTcpOverHttp;
  private readonly conflictTcpOverTcp;
  private readonly conflictHttpOverHttps;
  private readonly queueTime;
  private readonly endpointNotReady;
  private readonly endpointNoPod;
  /** The admission webhooks' counters (`--httpsAddr`). */
  readonly webhooks: WebhookCounters;
  /** Per rejectable type, the streams whose last response of it was NACKed. */
  private readonly nacking = new Map<string, Set<ProxyNode>>();

  constructor(registry: Registry = daemonRegistry("disco-discovery")) {
    this.registry = registry;
    const r = registry;
    this.xds = specGauge(r, "disco_xds", "Proxies connected over xDS (ADS streams)");
    this.pushes = specCounter(
      r,
      "disco_xds_pushes",
      "xDS responses sent, by type (lds, rds, cds, eds, ecds, config); <type>_senderr: a response that could not be written",
      ["type"],
    );
    this.pushTime = specHistogram(r, "disco_xds_push_time", "Seconds to select, encode and write one xDS response, by type", PUSH_TIME_BUCKETS, ["type"]);
    this.convergence = specHistogram(
      r,
      "disco_proxy_convergence_time",
      "Seconds between a configuration change and a proxy having acknowledged (or refused) every response it caused",
      CONVERGENCE_BUCKETS,
    );
    this.triggers = specCounter(
      r,
      "disco_push_triggers",
      "Pushes triggered, by type: config (a change of the configuration folder), endpoint (only Endpoints documents changed, pushed at once: DISCO_ENABLE_EDS_DEBOUNCE=false)",
      ["type"],
    );
    this.rejects = specCounter(r, "disco_total_xds_rejects", "xDS responses rejected (NACKed) by a proxy, by type", ["type"]);
    this.typeRejects = new Map([
      [CLUSTER, specGauge(r, "disco_xds_cds_reject", "Proxies whose last CDS response was rejected")],
      [ENDPOINT, specGauge(r, "disco_xds_eds_reject", "Proxies whose last EDS response was rejected")],
      [LISTENER, specGauge(r, "disco_xds_lds_reject", "Proxies whose last LDS response was rejected")],
      [ROUTE, specGauge(r, "disco_xds_rds_reject", "Proxies whose last RDS response was rejected")],
    ]);
    this.rejectedConfigs = specCounter(
      r,
      "disco_total_rejected_configs",
      "Configuration changes refused (a file or document that does not decode); the last good configuration keeps serving",
    );
    this.inboundUpdates = specCounter(r, "disco_inbound_updates", "Configuration updates received, by type: config (the folder decoded into a new version)", [
      "type",
    ]);
    this.internalErrors = specCounter(
      r,
      "disco_total_xds_internal_errors",
      "Internal errors serving xDS: a request that could not be handled (the stream is closed)",
    );
    this.expiredNonces = specCounter(r, "disco_rds_expired_nonce", "RDS requests answering a response that was already superseded (an expired nonce)");
    this.services = specGauge(r, "disco_services", "Services known (orchestrator Services and ServiceEntry hosts)");
    this.virtualServices = specGauge(r, "disco_virt_services", "VirtualServices known");
    this.noInstances = specGauge(r, "disco_eds_no_instances", "Clusters without instances (no endpoint), as of the last configuration");
    this.allLocalityEndpoints = specGauge(
      r,
      "disco_xds_eds_all_locality_endpoints",
      "Network endpoints per cluster across localities, as of the last configuration; zero is an error",
      ["cluster"],
    );
    this.edsInstances = specGauge(r, "disco_xds_eds_instances", "Locality groups per cluster, as of the last configuration; zero is an error", ["cluster"]);
    this.duplicateClusters = specGauge(
      r,
      "disco_duplicate_proxy_clusters",
      "Service ports declared again (same host and port) by another ServiceEntry or Service: the later declaration is dropped",
    );
    this.duplicateSubsets = specGauge(r, "disco_destrule_subsets", "Subsets defined again by another DestinationRule for the same host in the same namespace");
    this.duplicateDomains = specGauge(
      r,
      "disco_vservice_dup_domain",
      "Hosts claimed by more than one VirtualService on the same gateway in the same namespace",
    );
    this.conflictInbound = specGauge(
      r,
      "disco_conflict_inbound_listener",
      "Container ports of a workload that an HTTP and a non-HTTP service port both target (the HTTP inbound chain takes them)",
    );
    this.conflictTcpOverHttp = specGauge(
      r,
      "disco_conflict_outbound_listener_tcp_over_current_http",
      "Non-HTTP service ports on a port whose outbound listener is HTTP (that listener takes their traffic)",
    );
    this.conflictTcpOverTcp = specGauge(
      r,
      "disco_conflict_outbound_listener_tcp_over_current_tcp",
      "Services without an address beyond the first on one outbound TCP port (its wildcard chain passes their traffic through)",
    );
    this.conflictHttpOverHttps = specGauge(
      r,
      "disco_conflict_outbound_listener_http_over_https",
      "HTTP service ports on 443, whose outbound listener takes every connection to port 443",
    );
    this.endpointNotReady = specGauge(
      r,
      "disco_endpoint_not_ready",
      "Addresses listed (Endpoints, EndpointSlices) or found (Pods) not ready: left out of the load assignments",
    );
    this.endpointNoPod = specGauge(r, "endpoint_no_pod", "Ready addresses of Endpoints documents whose targetRef names no Pod of the configuration");
    this.queueTime = specHistogram(
      r,
      "disco_proxy_queue_time",
      "Seconds a proxy waited in the push queue (DISCO_PUSH_THROTTLE proxies are pushed to per turn)",
      QUEUE_BUCKETS,
    );
    this.webhooks = {
      injectionRequests: specCounter(r, "sidecar_injection_requests_total", "Sidecar injection requests (AdmissionReview on /inject)"),
      injectionSuccess: specCounter(r, "sidecar_injection_success_total", "Injection requests answered with the sidecar (a JSONPatch)"),
      injectionSkip: specCounter(
        r,
        "sidecar_injection_skip_total",
        "Injection requests skipped (already injected, hostNetwork, system namespace, annotation false, not a Pod)",
      ),
      injectionFailure: specCounter(r, "sidecar_injection_failure_total", "Injection requests refused (a bad Pod or review)"),
      validationPassed: specCounter(r, "collector_validation_passed", "Resources the validation webhook accepted"),
      validationFailed: specCounter(r, "collector_validation_failed", "Resources the validation webhook refused"),
      validationHttpError: specCounter(r, "collector_validation_http_error", "Validation requests that were not an AdmissionReview v1 (answered 400)"),
      certKeyUpdates: specCounter(r, "collector_validation_cert_key_updates", "Webhook certificate and key reloads (DISCO_CERT_DIR files changed)"),
      certKeyUpdateErrors: specCounter(
        r,
        "collector_validation_cert_key_update_errors",
        "Webhook certificate reloads that failed (the previous certificate stays)",
      ),
    };
    for (const type of ["lds", "rds", "cds", "eds"]) {
      this.pushes.labels({ type }).inc(0);
      this.rejects.labels({ type }).inc(0);
    }
    this.triggers.labels({ type: "config" }).inc(0);
    this.triggers.labels({ type: "endpoint" }).inc(0);
    this.inboundUpdates.labels({ type: "config" }).inc(0);
  }

  readonly observer: DiscoveryObserver = {
    connected: () => this.xds.inc(),
    disconnected: (node) => {
      this.xds.dec();
      for (const [type, nodes] of this.nacking) if (nodes.delete(node)) this.typeRejects.get(type)?.set(nodes.size);
    },
    sent: (_node, type, _version, _resources, _push, buildMs) => {
      const t = this.ofType(type);
      t.pushes.inc();
      t.pushTime.observe(buildMs / 1000);
    },
    sendFailed: (_node, type) => this.pushes.labels({ type: `${short(type)}_senderr` }).inc(),
    acked: (node, type) => this.setNacking(type, node, false),
    nacked: (node, type) => {
      this.rejects.labels({ type: short(type) }).inc();
      this.setNacking(type, node, true);
    },
    converged: (_node, ms) => this.convergence.observe(ms / 1000),
    expiredNonce: (_node, type) => {
      if (type === ROUTE) this.expiredNonces.inc();
    },
    internalError: () => this.internalErrors.inc(),
    dequeued: (_node, ms) => this.queueTime.observe(ms / 1000),
    pushed: (reason) => this.triggers.labels({ type: reason }).inc(),
    rejected: () => this.rejectedConfigs.inc(),
    snapshot: (s) => this.snapshot(s),
  };

  /** A type's labelled push counter and time histogram, looked up once (every response sent counts in both). */
  private readonly byType = new Map<string, { pushes: { inc(): void }; pushTime: { observe(seconds: number): void } }>();
  private ofType(type: string) {
    let t = this.byType.get(type);
    if (!t) this.byType.set(type, (t = { pushes: this.pushes.labels({ type: short(type) }), pushTime: this.pushTime.labels({ type: short(type) }) }));
    return t;
  }

  private setNacking(type: string, node: ProxyNode, nacking: boolean): void {
    const gauge = this.typeRejects.get(type);
    if (!gauge) return;
    const nodes = this.nacking.get(type) ?? new Set<ProxyNode>();
    this.nacking.set(type, nodes);
    if (nacking) nodes.add(node);
    else nodes.delete(node);
    gauge.set(nodes.size);
  }

  private snapshot(s: MeshSnapshot): void {
    this.inboundUpdates.labels({ type: "config" }).inc();
    this.services.set(s.registry.services.length);
    this.virtualServices.set(s.catalog.byKind.VirtualService.length);
    const conflicts = meshConflicts(s.catalog, s.registry, s.services, s.envoy.serving);
    this.duplicateClusters.set(conflicts.duplicateClusters);
    this.conflictInbound.set(conflicts.inbound);
    this.conflictTcpOverHttp.set(conflicts.outboundTcpOverHttp);
    this.conflictTcpOverTcp.set(conflicts.outboundTcpOverTcp);
    this.conflictHttpOverHttps.set(conflicts.outboundHttpOverHttps);
    const endpoints = endpointCounts(s.catalog, s.registry);
    this.endpointNotReady.set(endpoints.notReady);
    this.endpointNoPod.set(endpoints.noPod);
    this.duplicateSubsets.set(conflicts.duplicateSubsets);
    this.duplicateDomains.set(conflicts.duplicateVirtualServiceDomains);
    // What is served: each ClusterLoadAssignment of this version, decoded.
    this.allLocalityEndpoints.reset();
    this.edsInstances.reset();
    let empty = 0;
    for (const r of s.all.get(ENDPOINT)?.values() ?? []) {
      const cla = unpackAny(r.any) as { endpoints?: Array<{ lb_endpoints?: unknown[] }> };
      const localities = cla.endpoints ?? [];
      const endpoints = localities.reduce((n, l) => n + (l.lb_endpoints?.length ?? 0), 0);
      if (endpoints === 0) empty++;
      this.allLocalityEndpoints.labels({ cluster: r.name }).set(endpoints);
      this.edsInstances.labels({ cluster: r.name }).set(localities.length);
    }
    this.noInstances.set(empty);
  }
}
