import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import type { Registry } from "prom-client";
import { type CaCallAuth, CertificateRequestError, createCertificate, splitPem } from "../anchor/client.ts";
import { callerCredentials } from "../anchor/grpc_service.ts";
import { DEFAULT_CA_SERVER_NAME } from "../anchor/options.ts";
import {
  CREATE_CERTIFICATE_METHOD,
  type CreateCertificateRequest,
  IMPERSONATED_IDENTITY,
  decodeCreateCertificateRequest,
  encodeCreateCertificateResponse,
} from "../anchor/protocol.ts";
import type { TlsFiles } from "../security/mtls/cert_files.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { specCounter, specGauge } from "../telemetry/spec_metrics.ts";
import { grpcCodeName } from "../wire/status_codes.ts";

/**
 * disco-discovery as a registration authority (docs/discovery.md
 * "Workload certificates"): upstream's istiod serves CreateCertificate on
 * 15012; here the same service (`mesh.anchor.v1.CertificateService`) on
 * `--secureGrpcAddr` relays each request to mesh_ca (`--caAddress`), which
 * stays the one signer. A first certificate is asked with the caller's
 * service-account token, passed through (mesh_ca verifies it); a renewal,
 * whose caller proved its identity by its current certificate in the TLS
 * handshake here, is asked by disco-discovery with its own certificate and
 * the caller's identity as `ImpersonatedIdentity` (mesh_ca must list
 * disco-discovery in --trusted-node-accounts). Counted with spec 2's
 * anchor_server_* counters, which disco-discovery exports.
 */

export interface CertificateRelayOptions {
  /** mesh_ca's gRPC address, `HOST:PORT`. */
  caAddress: string;
  /** disco-discovery's own certificate (DISCO_CERT_DIR): its root checks mesh_ca; key and chain prove disco-discovery for renewals. */
  files: TlsFiles;
  /** The name mesh_ca's certificate carries; default `mesh-ca`. */
  caServerName?: string;
  /** Deadline of each relayed call; default 10 s. */
  timeoutMs?: number;
  /** Scope `serverca`. */
  log: ScopedLogger;
}

/** Spec 2's authority counters as disco-discovery counts the requests it relays. */
export class RelayMetrics {
  readonly csrs;
  readonly authenticationFailures;
  readonly csrParsingErrors;
  readonly idExtractionErrors;
  readonly signErrors;
  readonly issued;
  readonly rootCertExpiry;

  constructor(registry: Registry) {
    this.csrs = specCounter(registry, "anchor_server_csr_count", "CSRs received on --secureGrpcAddr (relayed to mesh_ca)");
    this.authenticationFailures = specCounter(
      registry,
      "anchor_server_authentication_failure_count",
      "Callers refused for their credential: none, a token or certificate that does not verify, or another identity than the CSR's",
    );
    this.csrParsingErrors = specCounter(registry, "anchor_server_csr_parsing_err_count", "Malformed requests or CSRs");
    this.idExtractionErrors = specCounter(registry, "anchor_server_id_extraction_err_count", "Callers whose certificate holds no workload identity");
    this.signErrors = specCounter(registry, "anchor_server_csr_sign_err_count", "Requests mesh_ca could not sign (unreachable, not ready, failed)", ["error"]);
    this.issued = specCounter(registry, "anchor_server_success_cert_issuance_count", "Certificates relayed back to their caller");
    this.rootCertExpiry = specGauge(
      registry,
      "anchor_server_root_cert_expiry_timestamp",
      "Unix time in seconds when the mesh root (mesh_ca's, as last seen) expires; negative when unknown",
    );
    this.rootCertExpiry.set(-1);
  }

  /** Counts a refusal by the gRPC status it ends with. */
  failed(code: number): void {
    if (code === grpc.status.UNAUTHENTICATED || code === grpc.status.PERMISSION_DENIED) this.authenticationFailures.inc();
    else if (code === grpc.status.INVALID_ARGUMENT) this.csrParsingErrors.inc();
    else this.signErrors.labels({ error: grpcCodeName(code).toLowerCase() }).inc();
  }

  /** The root's expiry from a PEM bundle (the earliest of its certificates). */
  rootSeen(rootPem: string): void {
    const ends = splitPem(rootPem).map((p) => new Date(new X509Certificate(p).validTo).getTime());
    if (ends.length > 0) this.rootCertExpiry.set(Math.floor(Math.min(...ends) / 1000));
  }
}

/** The workload identity a caller's verified certificate proves (`spiffe://<td>/ns/<ns>/sa/<sa>`). */
function workloadUri(uris: readonly string[]): string | undefined {
  return uris.find((u) => /^spiffe:\/\/[^/]+\/ns\/[^/]+\/sa\/[^/]+$/.test(u));
}

/**
 * Registers CreateCertificate on the secure gRPC server. Without `relay`
 * (no --caAddress) every call is UNIMPLEMENTED with the reason, so an agent
 * names what to change.
 */
export function addCertificateRelay(server: grpc.Server, metrics: RelayMetrics, relay: CertificateRelayOptions | undefined, log: ScopedLogger): void {
  const handler: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
    metrics.csrs.inc();
    const peer = call.getPeer();
    const fail = (code: number, details: string) => {
      metrics.failed(code);
      log.warn(`CreateCertificate from ${peer} refused: ${grpcCodeName(code)} ${details}`);
      callback({ code, details });
    };
    if (!relay) {
      fail(
        grpc.status.UNIMPLEMENTED,
        "this disco-discovery signs no certificates: start it with --caAddress (mesh_ca's address) to relay CreateCertificate, or give the agent --caAddress",
      );
      return;
    }
    let request: CreateCertificateRequest;
    try {
      request = decodeCreateCertificateRequest(call.request);
    } catch (e) {
      fail(grpc.status.INVALID_ARGUMENT, `malformed CreateCertificateRequest: ${(e as Error).message}`);
      return;
    }
    const credentials = callerCredentials(call);
    let rootPem: string;
    try {
      rootPem = readFileSync(relay.files.caCertFile, "utf8");
    } catch (e) {
      fail(grpc.status.UNAVAILABLE, `DISCO_CERT_DIR root-cert.pem ${relay.files.caCertFile}: ${(e as Error).message}`);
      return;
    }
    const serverName = relay.caServerName ?? DEFAULT_CA_SERVER_NAME;
    let auth: CaCallAuth;
    let impersonated: string | undefined;
    const certificateUris = credentials.verifiedCertificateUris ?? [];
    if (certificateUris.length > 0) {
      impersonated = workloadUri(certificateUris);
      if (!impersonated) {
        metrics.idExtractionErrors.inc();
        fail(grpc.status.UNAUTHENTICATED, `the client certificate (${certificateUris.join(", ")}) holds no workload identity spiffe://<td>/ns/<ns>/sa/<sa>`);
        return;
      }
      try {
        auth = {
          tls: {
            rootPem,
            serverName,
            clientKeyPem: readFileSync(relay.files.keyFile, "utf8"),
            clientCertChainPem: readFileSync(relay.files.certFile, "utf8"),
          },
        };
      } catch (e) {
        fail(grpc.status.UNAVAILABLE, `disco-discovery's certificate (DISCO_CERT_DIR): ${(e as Error).message}`);
        return;
      }
    } else if (credentials.bearerToken !== undefined) {
      auth = { token: credentials.bearerToken, tls: { rootPem, serverName } };
    } else {
      fail(
        grpc.status.UNAUTHENTICATED,
        "no credential: a first certificate needs a service-account token (metadata authorization: Bearer <token>), a renewal the current workload certificate over mutual TLS",
      );
      return;
    }
    const by = impersonated ? `certificate ${impersonated}` : "token";
    createCertificate(
      relay.caAddress,
      request.csr,
      request.validityDuration,
      relay.timeoutMs,
      auth,
      impersonated ? { [IMPERSONATED_IDENTITY]: impersonated } : undefined,
    ).then(
      (response) => {
        metrics.issued.inc();
        metrics.rootSeen(response.certChain[response.certChain.length - 1] ?? "");
        log.info(`certificate relayed from mesh_ca ${relay.caAddress} to ${peer} (authenticated by ${by})`);
        callback(null, encodeCreateCertificateResponse(response));
      },
      (e: unknown) => {
        const code = e instanceof CertificateRequestError ? e.code : grpc.status.INTERNAL;
        const details = e instanceof CertificateRequestError ? e.details : (e as Error).message;
        fail(code, `mesh_ca ${relay.caAddress}: ${details}`);
      },
    );
  };
  server.addService({ CreateCertificate: CREATE_CERTIFICATE_METHOD }, { CreateCertificate: handler });
}
