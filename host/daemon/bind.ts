/**
 * A listener that could not be opened, named by the flag that sets it: the
 * daemon's start fails with this one line and exits 1 (`--monitoringPort
 * 15014: cannot listen: address already in use`), instead of the socket
 * library's message that names neither the flag nor what to change.
 */
export class ListenerBindError extends Error {
  constructor(
    readonly flag: string,
    readonly address: string,
    readonly cause: unknown,
  ) {
    super(`${flag} ${address}: cannot listen: ${bindReason(cause)}`);
  }
}

/** The errno behind a failed bind, in words (grpc-js wraps it in its own message). */
export function bindReason(cause: unknown): string {
  const text = cause instanceof Error ? cause.message : String(cause);
  if (/EADDRINUSE/.test(text)) return "address already in use";
  if (/EACCES/.test(text)) return "permission denied (ports below 1024 need privileges)";
  if (/EADDRNOTAVAIL/.test(text)) return "address not available on this host";
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return "host name not found";
  return text;
}

/** `bind`'s result, or a ListenerBindError naming `flag` and `address`. */
export async function bindNamed<T>(flag: string, address: string | number, bind: Promise<T>): Promise<T> {
  try {
    return await bind;
  } catch (e) {
    throw new ListenerBindError(flag, String(address), e);
  }
}
