/** A failure answered as a gRPC status (code from status_codes.ts) instead of a response message. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/**
 * The start of every attribute-decoding failure message. Upstream clients
 * shrink their global word list to the original 111 words when a check or
 * report fails with INVALID_ARGUMENT starting with `Request could not be
 * processed due to invalid` (hub-client.md §6.4), so the prefix is a contract.
 */
export const INVALID_ATTRIBUTES = "Request could not be processed due to invalid attributes";
