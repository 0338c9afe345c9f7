/**
 * The value of `--proxyAccessLogService` and `--proxyMetricsService`: the
 * address of the gRPC service, as `host:port`, or upstream's RemoteService
 * JSON (`{"address": "host:port"}`; the form upstream's agent reads). The
 * connection is plain text: `tlsSettings` other than `{"mode": "DISABLE"}`
 * and `tcpKeepalive` are refused (an error naming the flag and the field),
 * never dropped silently.
 */
export function parseRemoteService(flag: string, text: string): { address: string } {
  const trimmed = text.trim();
  let address: unknown = trimmed;
  if (trimmed.startsWith("{")) {
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(trimmed) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${flag}: not valid JSON: ${(e as Error).message}`);
    }
    for (const key of Object.keys(json)) {
      if (key === "address") continue;
      if (key === "tlsSettings" && JSON.stringify(json.tlsSettings) === JSON.stringify({ mode: "DISABLE" })) continue;
      if (key === "tlsSettings" || key === "tcpKeepalive")
        throw new Error(`${flag}: ${key} is not supported: the service is reached in plain text with gRPC's keepalive defaults`);
      throw new Error(`${flag}: unknown field ${JSON.stringify(key)} (a RemoteService has address, tlsSettings, tcpKeepalive)`);
    }
    address = json.address;
  }
  const m = typeof address === "string" ? /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(address) : null;
  if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) {
    throw new Error(
      `${flag}: expected host:port of the gRPC service (or {"address": "host:port"}), got ${JSON.stringify(typeof address === "string" ? address : text)}`,
    );
  }
  return { address: address as string };
}
