// Workload identities as the hub client reports them.

const SPIFFE_PREFIX = "spiffe://";

/** `spiffe://cluster.local/ns/a/sa/b` → `cluster.local/ns/a/sa/b`; other forms unchanged. */
export function principalFromSan(san: string): string {
  return san.startsWith(SPIFFE_PREFIX) ? san.substring(SPIFFE_PREFIX.length) : san;
}

/**
 * The namespace inside an identity: the text between the first `/ns/` and the
 * next `/` (`cluster.local/ns/abc/sa/x` → `abc`, `cluster.local/ns/` → ``).
 * Null when there is no `/ns/` (matching is case-sensitive, as upstream).
 */
export function namespaceOfPrincipal(principal: string): string | null {
  const at = principal.indexOf("/ns/");
  if (at < 0) return null;
  const start = at + 4;
  const end = principal.indexOf("/", start);
  return end < 0 ? principal.substring(start) : principal.substring(start, end);
}
