import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { buildInfo } from "../cli/version.ts";
import { registerBuildMetric } from "../telemetry/build_metric.ts";
import { GrpcServerMetrics } from "../telemetry/grpc_metrics.ts";
import type { AnchorErrorCode } from "./errors.ts";

/** `error` label values of anchor_server_csr_sign_err_count (upstream's CA error types). */
export const SIGN_ERROR_LABELS = ["ttl_error", "ca_not_ready", "cert_generation_error"] as const;

/**
 * Every counter mesh_ca exports (spec 2, "Authority counters", the
 * anchor_server_* rows), plus mesh_build, gRPC and process metrics.
 */
export class AnchorMetrics {
  readonly registry = new Registry();
  readonly grpc = new GrpcServerMetrics(this.registry);
  readonly csrs = new Counter({ name: "anchor_server_csr_count", help: "CSRs received", registers: [this.registry] });
  readonly authenticationFailures = new Counter({
    name: "anchor_server_authentication_failure_count",
    help: "Authentication failures: no or a bad credential (token, client certificate), or a request for an identity the caller may not have (another identity than it proved, --allowed-namespaces)",
    registers: [this.registry],
  });
  readonly csrParsingErrors = new Counter({ name: "anchor_server_csr_parsing_err_count", help: "CSR parse errors (including bad CSR signatures)", registers: [this.registry] });
  readonly idExtractionErrors = new Counter({ name: "anchor_server_id_extraction_err_count", help: "Errors extracting the ID from a CSR", registers: [this.registry] });
  readonly signErrors = new Counter({ name: "anchor_server_csr_sign_err_count", help: "CSR signing errors", labelNames: ["error"], registers: [this.registry] });
  readonly issued = new Counter({ name: "anchor_server_success_cert_issuance_count", help: "Successful issuances", registers: [this.registry] });
  readonly rootCertExpiry = new Gauge({
    name: "anchor_server_root_cert_expiry_timestamp",
    help: "Unix time in seconds when the root cert expires; negative on internal error",
    registers: [this.registry],
  });

  constructor(component = "mesh_ca") {
    collectDefaultMetrics({ register: this.registry });
    registerBuildMetric(this.registry, component, buildInfo());
    for (const error of SIGN_ERROR_LABELS) this.signErrors.labels({ error }).inc(0);
    this.rootCertExpiry.set(-1);
  }

  /** Counts one refused request in the counter its error code belongs to. */
  refused(code: AnchorErrorCode): void {
    switch (code) {
      case "CSR_INVALID":
        return this.csrParsingErrors.inc();
      case "IDENTITY_INVALID":
        return this.idExtractionErrors.inc();
      case "NAMESPACE_NOT_ALLOWED":
      case "UNAUTHENTICATED":
      case "IDENTITY_NOT_AUTHORIZED":
        return this.authenticationFailures.inc();
      case "TTL_INVALID":
        return this.signErrors.labels({ error: "ttl_error" }).inc();
      case "CA_NOT_READY":
        return this.signErrors.labels({ error: "ca_not_ready" }).inc();
      case "CERT_GENERATION_FAILED":
        return this.signErrors.labels({ error: "cert_generation_error" }).inc();
    }
  }
}
