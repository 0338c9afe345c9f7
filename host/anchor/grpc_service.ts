import * as grpc from "@grpc/grpc-js";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { GRPC_CODES, grpcCodeName } from "../wire/status_codes.ts";
import type { CertificateAuthority } from "./certificate_authority.ts";
import { AnchorError, type AnchorErrorCode } from "./errors.ts";
import type { AnchorMetrics } from "./metrics.ts";
import { CERTIFICATE_SERVICE, CREATE_CERTIFICATE_METHOD, decodeCreateCertificateRequest, encodeCreateCertificateResponse, type CreateCertificateRequest } from "./protocol.ts";

/** The gRPC status of each refusal (docs/mesh_ca.md, "Errors"). */
export const STATUS_OF: Record<AnchorErrorCode, number> = {
  CSR_INVALID: GRPC_CODES.INVALID_ARGUMENT,
  IDENTITY_INVALID: GRPC_CODES.INVALID_ARGUMENT,
  TTL_INVALID: GRPC_CODES.INVALID_ARGUMENT,
  NAMESPACE_NOT_ALLOWED: GRPC_CODES.PERMISSION_DENIED,
  CA_NOT_READY: GRPC_CODES.UNAVAILABLE,
  CERT_GENERATION_FAILED: GRPC_CODES.INTERNAL,
};

/** Max request size: a CSR is a few kilobytes. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * The gRPC server of `mesh.anchor.v1.CertificateService`. Requests are
 * decoded in the handler, so garbage is INVALID_ARGUMENT (counted as a CSR
 * parse error), never a crash. Callers are not authenticated (docs/mesh_ca.md,
 * "Limitations").
 */
export function createCertificateServer(ca: CertificateAuthority, metrics: AnchorMetrics, log: ScopedLogger): grpc.Server {
  const server = new grpc.Server({ "grpc.max_receive_message_length": MAX_REQUEST_BYTES });
  metrics.grpc.declare(CERTIFICATE_SERVICE, "CreateCertificate");
  const handler: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
    metrics.grpc.started(CERTIFICATE_SERVICE, "CreateCertificate");
    const peer = call.getPeer();
    const fail = (code: number, details: string) => {
      metrics.grpc.handled(CERTIFICATE_SERVICE, "CreateCertificate", grpcCodeName(code));
      callback({ code, details });
    };
    let request: CreateCertificateRequest;
    try {
      request = decodeCreateCertificateRequest(call.request);
    } catch (e) {
      metrics.csrs.inc();
      metrics.refused("CSR_INVALID");
      fail(GRPC_CODES.INVALID_ARGUMENT, `malformed CreateCertificateRequest: ${(e as Error).message}`);
      return;
    }
    ca.createCertificate(request.csr, request.validityDuration).then(
      (response) => {
        log.info("issued certificate", { identity: response.issued.identity, serial: response.issued.serial, notAfter: response.issued.notAfter.toISOString(), peer });
        metrics.grpc.handled(CERTIFICATE_SERVICE, "CreateCertificate", "OK");
        callback(null, encodeCreateCertificateResponse(response));
      },
      (e: unknown) => {
        if (e instanceof AnchorError) {
          log.warn(`refused CSR: ${e.message}`, { code: e.code, peer });
          fail(STATUS_OF[e.code], e.message);
        } else {
          log.error(`CreateCertificate failed: ${(e as Error)?.stack ?? String(e)}`, { peer });
          fail(GRPC_CODES.INTERNAL, `internal error: ${(e as Error)?.message ?? String(e)}`);
        }
      },
    );
  };
  server.addService({ CreateCertificate: CREATE_CERTIFICATE_METHOD }, { CreateCertificate: handler });
  return server;
}

/** `HOST:PORT` for grpc-js (IPv6 hosts in brackets). */
export function grpcHostPort(address: string, port: number): string {
  return address.includes(":") && !address.startsWith("[") ? `[${address}]:${port}` : `${address}:${port}`;
}

export function bindInsecure(server: grpc.Server, hostPort: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(hostPort, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port)));
  });
}
