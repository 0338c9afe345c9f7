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
  /** Upstream's metadata (google.protobuf.Struct as JSON); `ImpersonatedIdentity` is the one key read. */
  metadata?: { ImpersonatedIdentity?: string } & Record<string, unknown>;
}

/** The metadata key a registration authority names the workload it asks for with (upstream's). */
export const IMPERSONATED_IDENTITY = "ImpersonatedIdentity";

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

export const encodeCreateCertificateRequest = (r: CreateCertificateRequest): Buffer =>
  encode("CreateCertificateRequest", r.metadata ? { ...r, metadata: structOf(r.metadata) } : r);
/** Throws protobufjs's error on malformed bytes. */
export function decodeCreateCertificateRequest(b: Buffer): CreateCertificateRequest {
  const t = type("CreateCertificateRequest");
  const m = t.toObject(t.decode(b), { longs: Number, defaults: true }) as { csr: string; validityDuration: number; metadata?: StructJson };
  const metadata = m.metadata ? jsonOfStruct(m.metadata) : undefined;
  return { csr: m.csr, validityDuration: m.validityDuration, ...(metadata && Object.keys(metadata).length > 0 ? { metadata } : {}) };
}

/** google.protobuf.Struct as protobufjs reads it (no JSON mapping without the wrappers): string values only are needed here. */
interface StructJson {
  fields?: Record<string, { stringValue?: string; kind?: string }>;
}

function structOf(json: Record<string, unknown>): StructJson {
  return { fields: Object.fromEntries(Object.entries(json).map(([k, v]) => [k, { stringValue: String(v) }])) };
}

function jsonOfStruct(s: StructJson): Record<string, string> {
  return Object.fromEntries(Object.entries(s.fields ?? {}).flatMap(([k, v]) => (typeof v.stringValue === "string" ? [[k, v.stringValue]] : [])));
}
export const encodeCreateCertificateResponse = (r: CreateCertificateResponse): Buffer => encode("CreateCertificateResponse", r);
export const decodeCreateCertificateResponse = (b: Buffer): CreateCertificateResponse => decode("CreateCertificateResponse", b);

/** The method definition on raw bytes (decoding happens in the handler, so garbage is INVALID_ARGUMENT, never a crash). */
export const CREATE_CERTIFICATE_METHOD = rawUnaryMethod(CREATE_CERTIFICATE_PATH);
