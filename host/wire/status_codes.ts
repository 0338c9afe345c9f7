/**
 * gRPC status codes (google.rpc.Code) by name, as configuration writes them
 * (`deny: {code: PERMISSION_DENIED}`) and as metrics label them (`grpc_code`).
 */
export const GRPC_CODES = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const);

export type GrpcCodeName = keyof typeof GRPC_CODES;

export const GRPC_CODE_NAMES: readonly GrpcCodeName[] = Object.freeze(Object.keys(GRPC_CODES) as GrpcCodeName[]);

const BY_NUMBER: readonly string[] = GRPC_CODE_NAMES.slice().sort((a, b) => GRPC_CODES[a] - GRPC_CODES[b]);

/** `PERMISSION_DENIED` for 7; `CODE_<n>` for numbers outside the table. */
export function grpcCodeName(code: number): string {
  return BY_NUMBER[code] ?? `CODE_${code}`;
}
