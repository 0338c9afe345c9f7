import { join } from "node:path";
import protobuf from "protobufjs";
import { PROTO_DIR } from "../wire/protos.ts";
import { rawUnaryMethod } from "../wire/raw_grpc.ts";

/** The gRPC service of proto/mesh/anchor/v1/anchor.proto. */
export const CERTIFICATE_SERVICE = "mesh.anchor.v1.CertificateService";
export const CREATE_CERTIFICATE_PATH = `/${CERTIFICATE_SERVICE}/CreateCertificate`;

export interface CreateCertificateRequest {
  csr: string;
  /** Seconds; 0 = the server's default TTL. */
  validityDuration: number;
}

export interface CreateCertificateResponse {
  certChain: string[];
  gracePeriodRatio: number;
  minGracePeriodSeconds: number;
}

let root: protobuf.Root | undefined;
function type(name: string): protobuf.Type {
  root ??= protobuf.loadSync(join(PROTO_DIR, "mesh", "anchor", "v1", "anchor.proto"));
  return root.lookupType(`mesh.anchor.v1.${name}`);
}

function encode(name: string, value: object): Buffer {
  const bytes = type(name).encode(type(name).fromObject(value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function decode<T>(name: string, bytes: Buffer): T {
  const t = type(name);
  return t.toObject(t.decode(bytes), { longs: Number, defaults: true }) as T;
}

export const encodeCreateCertificateRequest = (r: CreateCertificateRequest): Buffer => encode("CreateCertificateRequest", r);
/** Throws protobufjs's error on malformed bytes. */
export const decodeCreateCertificateRequest = (b: Buffer): CreateCertificateRequest => decode("CreateCertificateRequest", b);
export const encodeCreateCertificateResponse = (r: CreateCertificateResponse): Buffer => encode("CreateCertificateResponse", r);
export const decodeCreateCertificateResponse = (b: Buffer): CreateCertificateResponse => decode("CreateCertificateResponse", b);

/** The method definition on raw bytes (decoding happens in the handler, so garbage is INVALID_ARGUMENT, never a crash). */
export const CREATE_CERTIFICATE_METHOD = rawUnaryMethod(CREATE_CERTIFICATE_PATH);
