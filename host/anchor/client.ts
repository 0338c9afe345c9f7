import * as grpc from "@grpc/grpc-js";
import { X509Certificate } from "node:crypto";
import { exportPrivateKeyPem, generateKeyPair, signingAlgorithmOf, type KeyAlgorithm } from "./keys.ts";
import {
  CREATE_CERTIFICATE_METHOD,
  type CreateCertificateRequest,
  type CreateCertificateResponse,
  decodeCreateCertificateResponse,
  encodeCreateCertificateRequest,
} from "./protocol.ts";
import { DEFAULT_CA_SERVER_NAME } from "./options.ts";
import { parseSpiffeIdentity } from "./spiffe.ts";
import { rotationTime } from "./workload_ttl.ts";
import type { WorkloadCertificate } from "./workload_certificate.ts";

export { CertificateRotator, type CertificateRotatorOptions } from "./certificate_rotator.ts";
export type { WorkloadCertificate } from "./workload_certificate.ts";

export const DEFAULT_CLIENT_TIMEOUT_MS = 10_000;
export { DEFAULT_CA_SERVER_NAME };

/** How a client authenticates to mesh_ca and checks it (docs/mesh_ca.md "Authentication"). */
export interface CaCallAuth {
  /** A service-account token, sent as `authorization: Bearer <token>` (a first certificate). */
  token?: string;
  /** TLS to the CA; absent = plain text (mesh_ca --grpc-plaintext). */
  tls?: {
    /** Roots that must sign the CA's TLS certificate. */
    rootPem: string;
    /** The name its certificate must carry; default `mesh-ca`. */
    serverName?: string;
    /**
     * Checks the CA's certificate instead of its name (a control plane whose
     * certificate carries a SPIFFE identity, not the dialled host's name):
     * an Error refuses it.
     */
    checkServerIdentity?: (host: string, cert: import("node:tls").PeerCertificate) => Error | undefined;
    /** The current workload certificate, presented for a renewal over mutual TLS. */
    clientKeyPem?: string;
    clientCertChainPem?: string;
  };
}

/** A refusal or transport failure of CreateCertificate, with the gRPC status. */
export class CertificateRequestError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`CreateCertificate failed (gRPC status ${code}): ${details}`);
    this.name = "CertificateRequestError";
  }
}

export interface WorkloadCertificateRequest {
  /** `HOST:PORT` of mesh_ca's gRPC port. */
  address: string;
  /** `spiffe://<trust-domain>/ns/<ns>/sa/<sa>`. */
  identity: string;
  /** Requested lifetime in ms; 0 or absent = the CA's --workload-cert-ttl. */
  ttl?: number;
  /** `RSA` (default) or `ECDSA` (P-256). */
  keyAlgorithm?: KeyAlgorithm;
  /** RSA modulus bits; default 2048. */
  keySize?: number;
  timeoutMs?: number;
  /** Token and/or TLS settings; without any, the CA refuses the request (UNAUTHENTICATED). */
  auth?: CaCallAuth;
  /** Ask for a CA certificate (CSR with CA:TRUE; the CA must run with --sign-ca-certs): a chained mesh_ca's intermediate. */
  forCa?: boolean;
  /** How the request reaches the CA; default: a gRPC call to `address` (createCertificate). */
  transport?: CertificateTransport;
}

/** One CreateCertificate exchange with a CA; throws CertificateRequestError on a refusal. */
export type CertificateTransport = (
  address: string,
  csrPem: string,
  validitySeconds: number,
  timeoutMs: number,
  auth: CaCallAuth | undefined,
) => Promise<CreateCertificateResponse>;

/**
 * Asks mesh_ca for a certificate: generates a key pair here, sends a CSR
 * carrying the identity as its URI SAN, and checks the answer (the leaf holds
 * our key and identity, and is signed by the next certificate of the chain).
 *
 * @example
 * const wc = await requestWorkloadCertificate({ address: "127.0.0.1:8060", identity: "spiffe://cluster.local/ns/foo/sa/bar", ttl: 3_600_000 });
 * tls.createServer({ key: wc.keyPem, cert: wc.certChainPem, ca: wc.rootPem, requestCert: true, rejectUnauthorized: true });
 */
export async function requestWorkloadCertificate(request: WorkloadCertificateRequest): Promise<WorkloadCertificate> {
  parseSpiffeIdentity(request.identity); // fail before the network on a malformed identity
  // The X.509 library (about a tenth of a second of CPU to load) only once a certificate is asked for: a sidecar without --caAddress never loads it.
  const [{ x509 }, keys] = await Promise.all([import("./x509.ts"), generateKeyPair(request.keyAlgorithm ?? "RSA", request.keySize ?? 2048)]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    keys,
    signingAlgorithm: signingAlgorithmOf(keys.privateKey),
    extensions: [
      new x509.SubjectAlternativeNameExtension([{ type: "url", value: request.identity }], true),
      ...(request.forCa ? [new x509.BasicConstraintsExtension(true, undefined, true)] : []),
    ],
  });
  const response = await (request.transport ?? createCertificate)(
    request.address,
    csr.toString("pem"),
    Math.ceil((request.ttl ?? 0) / 1000),
    request.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS,
    request.auth,
  );
  if (response.certChain.length < 2)
    throw new Error(`CreateCertificate answered ${response.certChain.length} PEM strings; expected the certificate and the root at least`);
  const chain = response.certChain.slice(0, -1);
  const rootPem = response.certChain[response.certChain.length - 1];
  const leaf = new X509Certificate(chain[0]);
  const spki = Buffer.from(csr.publicKey.rawData);
  if (!leaf.publicKey.export({ type: "spki", format: "der" }).equals(spki)) throw new Error("the issued certificate does not hold the key this request sent");
  if (!(leaf.subjectAltName ?? "").split(", ").includes(`URI:${request.identity}`))
    throw new Error(`the issued certificate does not name ${request.identity} (SAN ${leaf.subjectAltName})`);
  if (request.forCa && !leaf.ca) throw new Error("the issued certificate is not a CA certificate (does the CA run with --sign-ca-certs?)");
  const issuers = [...chain.slice(1).map((p) => new X509Certificate(p)), ...splitPem(rootPem).map((p) => new X509Certificate(p))];
  if (!issuers.some((c) => leaf.checkIssued(c) && leaf.verify(c.publicKey)))
    throw new Error("the issued certificate is not signed by the chain or root the CA sent");
  const notBefore = new Date(leaf.validFrom);
  const expiresAt = new Date(leaf.validTo);
  const rotateAt = new Date(rotationTime(notBefore.getTime(), expiresAt.getTime(), response.gracePeriodRatio, response.minGracePeriodSeconds * 1000));
  return {
    identity: request.identity,
    keyPem: await exportPrivateKeyPem(keys.privateKey, true),
    certChainPem: chain.map((p) => `${p.trim()}\n`).join(""),
    rootPem,
    notBefore,
    expiresAt,
    rotateAt,
    serialNumber: leaf.serialNumber,
  };
}

/** The certificates of a PEM bundle, each as its own PEM string. */
export function splitPem(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((b) => `${b}\n`) ?? [];
}

const Stub = grpc.makeGenericClientConstructor({ CreateCertificate: CREATE_CERTIFICATE_METHOD }, "CertificateService");

/** Channel credentials and options for a call to mesh_ca. */
function channelFor(auth: CaCallAuth | undefined): { credentials: grpc.ChannelCredentials; options: grpc.ChannelOptions } {
  const tls = auth?.tls;
  if (!tls) return { credentials: grpc.credentials.createInsecure(), options: {} };
  const serverName = tls.serverName ?? DEFAULT_CA_SERVER_NAME;
  const clientCert = tls.clientKeyPem && tls.clientCertChainPem;
  const credentials = grpc.credentials.createSsl(
    Buffer.from(tls.rootPem),
    clientCert ? Buffer.from(tls.clientKeyPem!) : null,
    clientCert ? Buffer.from(tls.clientCertChainPem!) : null,
    tls.checkServerIdentity ? { checkServerIdentity: tls.checkServerIdentity } : {},
  );
  if (tls.checkServerIdentity) return { credentials, options: {} };
  return { credentials, options: { "grpc.ssl_target_name_override": serverName, "grpc.default_authority": serverName } };
}

/** One CreateCertificate call on a connection of its own; throws CertificateRequestError. */
export function createCertificate(
  address: string,
  csrPem: string,
  validitySeconds: number,
  timeoutMs = DEFAULT_CLIENT_TIMEOUT_MS,
  auth?: CaCallAuth,
  requestMetadata?: CreateCertificateRequest["metadata"],
): Promise<CreateCertificateResponse> {
  const channel = channelFor(auth);
  const client = new Stub(address, channel.credentials, channel.options);
  const request = encodeCreateCertificateRequest({ csr: csrPem, validityDuration: validitySeconds, ...(requestMetadata ? { metadata: requestMetadata } : {}) });
  const metadata = new grpc.Metadata();
  if (auth?.token) metadata.set("authorization", `Bearer ${auth.token}`);
  return new Promise<CreateCertificateResponse>((resolve, reject) => {
    client.makeUnaryRequest<Buffer, Buffer>(
      CREATE_CERTIFICATE_METHOD.path,
      CREATE_CERTIFICATE_METHOD.requestSerialize,
      CREATE_CERTIFICATE_METHOD.responseDeserialize,
      request,
      metadata,
      { deadline: Date.now() + timeoutMs },
      (err, bytes) => {
        if (err) reject(new CertificateRequestError(err.code ?? grpc.status.UNKNOWN, err.details ?? err.message));
        else resolve(decodeCreateCertificateResponse(bytes!));
      },
    );
  }).finally(() => client.close());
}
