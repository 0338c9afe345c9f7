import * as grpc from "@grpc/grpc-js";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { GRPC_CODES, grpcCodeName } from "../wire/status_codes.ts";
import type { CertificateAuthority } from "./certificate_authority.ts";
import { authorizeCaller, authorizeImpersonation, bearerTokenOf, type CallerCredentials } from "./caller_authentication.ts";
import { AnchorError, type AnchorErrorCode } from "./errors.ts";
import type { ServiceAccountTokenVerifier } from "./service_account_token.ts";
import type { AnchorMetrics } from "./metrics.ts";
import {
  CERTIFICATE_SERVICE,
  CREATE_CERTIFICATE_METHOD,
  decodeCreateCertificateRequest,
  encodeCreateCertificateResponse,
  type CreateCertificateRequest,
} from "./protocol.ts";

/** The gRPC status of each refusal (docs/mesh_ca.md, "Errors"). */
export const STATUS_OF: Record<AnchorErrorCode, number> = {
  CSR_INVALID: GRPC_CODES.INVALID_ARGUMENT,
  IDENTITY_INVALID: GRPC_CODES.INVALID_ARGUMENT,
  TTL_INVALID: GRPC_CODES.INVALID_ARGUMENT,
  NAMESPACE_NOT_ALLOWED: GRPC_CODES.PERMISSION_DENIED,
  UNAUTHENTICATED: GRPC_CODES.UNAUTHENTICATED,
  IDENTITY_NOT_AUTHORIZED: GRPC_CODES.PERMISSION_DENIED,
  CA_CERT_NOT_ALLOWED: GRPC_CODES.PERMISSION_DENIED,
  CA_NOT_READY: GRPC_CODES.UNAVAILABLE,
  CERT_GENERATION_FAILED: GRPC_CODES.INTERNAL,
};

/** Max request size: a CSR is a few kilobytes. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** What a call presented: its bearer token and, when the TLS handshake verified one, its client certificate's URI SANs. */
export function callerCredentials(call: grpc.ServerUnaryCall<Buffer, Buffer>): CallerCredentials {
  const authorization = call.metadata.get("authorization")[0];
  const peer = call.getAuthContext?.()?.sslPeerCertificate;
  const uris = (peer?.subjectaltname ?? "")
    .split(", ")
    .filter((s) => s.startsWith("URI:"))
    .map((s) => s.slice(4));
  return { bearerToken: bearerTokenOf(typeof authorization === "string" ? authorization : authorization?.toString()), verifiedCertificateUris: uris };
}

/**
 * The gRPC server of `mesh.anchor.v1.CertificateService`. Requests are
 * decoded in the handler, so garbage is INVALID_ARGUMENT (counted as a CSR
 * parse error), never a crash. Every caller must prove the identity its CSR
 * asks for (caller_authentication.ts): a client certificate verified by the
 * TLS handshake, or a service-account token checked by `tokens`.
 */
export function createCertificateServer(
  ca: CertificateAuthority,
  metrics: AnchorMetrics,
  log: ScopedLogger,
  tokens?: ServiceAccountTokenVerifier,
  trustedNodeAccounts: ReadonlySet<string> = new Set(),
): grpc.Server {
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
    const credentials = callerCredentials(call);
    let authenticatedBy = "";
    const impersonated = request.metadata?.ImpersonatedIdentity;
    const authorize = async (identity: Parameters<typeof authorizeCaller>[0]) => {
      authenticatedBy = impersonated
        ? authorizeImpersonation(identity, impersonated, credentials, trustedNodeAccounts)
        : await authorizeCaller(identity, credentials, tokens);
    };
    ca.createCertificate(request.csr, request.validityDuration, authorize).then(
      (response) => {
        log.info("issued certificate", {
          identity: response.issued.identity,
          serial: response.issued.serial,
          notAfter: response.issued.notAfter.toISOString(),
          authenticatedBy,
          peer,
        });
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
  return bindWith(server, hostPort, grpc.ServerCredentials.createInsecure());
}

/**
 * Binds with TLS from a certificate provider: the provider's certificate is
 * served, and a client certificate is requested and verified against the
 * provider's roots when offered but not required (a first request has none;
 * upstream's VerifyClientCertIfGiven).
 */
export function bindTls(server: grpc.Server, hostPort: string, provider: grpc.experimental.CertificateProvider): Promise<number> {
  return bindWith(server, hostPort, grpc.experimental.createCertificateProviderServerCredentials(provider, provider, false));
}

function bindWith(server: grpc.Server, hostPort: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(hostPort, credentials, (err, port) => (err ? reject(err) : resolve(port)));
  });
}
