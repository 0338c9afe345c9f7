import { Counter, Gauge, type Registry } from "prom-client";
import { counterName, daemonRegistry, specCounter } from "../telemetry/spec_metrics.ts";

/** The `request_type` of the agent's outgoing requests (upstream: `csr`, `token_exchange`; this agent only sends CSRs to mesh_ca). */
export type OutgoingRequestType = "csr";

/** What the agent's pulled metrics read when scraped. */
export interface AgentMetricSources {
  /** Configurations refused since start (files that do not decode, configurations the filter or the security path refuse). */
  rejectedConfigs(): number;
  /** VirtualServices in the applied configuration. */
  virtualServices(): number;
  /** Key-set fetches of jwksUri rules. */
  jwksFetches(): { successes: number; failures: number };
}

/**
 * The `disco-agent` rows of spec 2 ("Exported counters and gauges": AG) that
 * have meaning in this sidecar, exported through prom-client on the admin
 * port's `/stats/prometheus` (after the proxy stats) and the status port's:
 * mesh_build, the outgoing-request counters (CSRs to mesh_ca), the secret
 * counters of the in-process certificate hand-over, and the discovery gauges
 * the sidecar can know. Names per docs/metrics.md.
 */
export class AgentMetrics {
  readonly registry: Registry;
  private readonly outgoing: Counter<"request_type">;
  private readonly failed: Counter<"request_type">;
  private readonly retries: Counter<"request_type">;
  private readonly latency: Counter<"request_type">;
  private readonly pushes: Counter;
  private readonly updateFailures: Counter;

  constructor(sources: AgentMetricSources, component = "disco-agent") {
    const r = (this.registry = daemonRegistry(component));
    this.outgoing = specCounter(r, "num_outgoing_requests", "Outgoing requests (CSRs to mesh_ca)", ["request_type"]);
    this.failed = specCounter(r, "num_failed_outgoing_requests", "Failed outgoing requests (CSRs to mesh_ca refused or unanswered)", ["request_type"]);
    this.retries = specCounter(r, "num_outgoing_retries", "Outgoing requests retried after a failure", ["request_type"]);
    // The spec's unit (milliseconds), as upstream's view: a dashboard written against the spec divides by 1000.
    this.latency = specCounter(r, "outgoing_latency", "Total latency of outgoing requests, in milliseconds", ["request_type"]);
    this.pushes = specCounter(r, "total_pushes", "Workload certificates handed to the listeners (first certificate and each rotation)");
    this.updateFailures = specCounter(r, "total_secret_update_failures", "Failed workload certificate renewals");
    for (const request_type of ["csr"] as const) for (const c of [this.outgoing, this.failed, this.retries, this.latency]) c.labels({ request_type }).inc(0);
    pulledCounter(r, "disco_total_rejected_configs", "Configurations rejected (kept out, the last good one serving)", sources.rejectedConfigs);
    pulledCounter(r, "disco_jwks_resolver_network_fetch_success_total", "Successful key-set network fetches (jwksUri)", () => sources.jwksFetches().successes);
    pulledCounter(r, "disco_jwks_resolver_network_fetch_fail_total", "Failed key-set network fetches (jwksUri)", () => sources.jwksFetches().failures);
    new Gauge({
      name: "disco_virt_services",
      help: "VirtualServices in the applied configuration",
      registers: [r],
      collect() {
        this.set(sources.virtualServices());
      },
    });
  }

  /** One outgoing request: its outcome and latency. */
  outgoingRequest(type: OutgoingRequestType, ok: boolean, latencyMs: number): void {
    this.outgoing.labels({ request_type: type }).inc();
    if (!ok) this.failed.labels({ request_type: type }).inc();
    this.latency.labels({ request_type: type }).inc(latencyMs);
  }

  outgoingRetry(type: OutgoingRequestType): void {
    this.retries.labels({ request_type: type }).inc();
  }

  certificatePushed(): void {
    this.pushes.inc();
  }

  secretUpdateFailed(): void {
    this.updateFailures.inc();
  }
}

/** A counter whose value is read from its source at scrape time. */
function pulledCounter(registry: Registry, specName: string, help: string, read: () => number): void {
  new Counter({
    name: counterName(specName),
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
