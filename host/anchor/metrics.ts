import type { Registry } from "prom-client";
import { GrpcServerMetrics } from "../telemetry/grpc_metrics.ts";
import { daemonRegistry, specCounter, specGauge } from "../telemetry/spec_metrics.ts";
import type { AnchorErrorCode } from "./errors.ts";

/** `error` label values of anchor_server_csr_sign_err_count (upstream's CA error types). */
export const SIGN_ERROR_LABELS = ["ttl_error", "ca_not_ready", "cert_generation_error"] as const;

/**
 * Every counter mesh_ca exports (spec 2, "Authority counters", the
 * anchor_server_* rows, counters exported with `_total` appended: see
 * docs/metrics.md), plus mesh_build, gRPC and process metrics.
 */
export class AnchorMetrics {
  readonly registry: Registry = daemonRegistry("mesh_ca");
  readonly grpc = new GrpcServerMetrics(this.registry);
  readonly csrs = specCounter(this.registry, "anchor_server_csr_count", "CSRs received");
  readonly authenticationFailures = specCounter(
    this.registry,
    "anchor_server_authentication_failure_count",
    "Authentication failures: no or a bad credential (token, client certificate), or a request for an identity the caller may not have (another identity than it proved, --allowed-namespaces)",
  );
  readonly csrParsingErrors = specCounter(this.registry, "anchor_server_csr_parsing_err_count", "CSR parse errors (including bad CSR signatures)");
  readonly idExtractionErrors = specCounter(this.registry, "anchor_server_id_extraction_err_count", "Errors extracting the ID from a CSR");
  readonly signErrors = specCounter(this.registry, "anchor_server_csr_sign_err_count", "CSR signing errors", ["error"]);
  readonly issued = specCounter(this.registry, "anchor_server_success_cert_issuance_count", "Successful issuances");
  readonly rootCertExpiry = specGauge(
    this.registry,
    "anchor_server_root_cert_expiry_timestamp",
    "Unix time in seconds when the root cert expires; negative on internal error",
  );

  constructor() {
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
      case "CA_CERT_NOT_ALLOWED":
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
