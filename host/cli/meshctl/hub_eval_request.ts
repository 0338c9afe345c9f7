import type { RequestInput } from "../../wasm/filter_module.ts";

/**
 * Turns one hub-eval input line into the module's request form. The line is
 * `{"method","path","host","scheme","headers":{},"destinationService",
 * "connection":{"sourceIp","sourcePort","destinationIp","destinationPort","mtls",
 * "peerPrincipal","localPrincipal","requestedServerName"},"auth":{claims},"time"}`;
 * only method and path are required. Returns an error text for a bad line.
 */
export function requestFromLine(line: string, now: () => bigint): RequestInput | { error: string } {
  let input: unknown;
  try {
    input = JSON.parse(line);
  } catch (e) {
    return { error: `input is not JSON: ${(e as Error).message}` };
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { error: "input must be a JSON object" };
  const o = input as Record<string, unknown>;
  const problems: string[] = [];
  const str = (v: unknown, name: string, required = false): string | undefined => {
    if (v === undefined || v === null) {
      if (required) problems.push(`${name}: expected a string`);
      return undefined;
    }
    if (typeof v !== "string") {
      problems.push(`${name}: expected a string`);
      return undefined;
    }
    return v;
  };
  const method = str(o.method, "method", true);
  const path = str(o.path, "path", true);
  const host = str(o.host, "host");
  const scheme = str(o.scheme, "scheme");
  const destinationService = str(o.destinationService, "destinationService");

  const headers: Array<[string, string]> = [];
  if (method !== undefined) headers.push([":method", method]);
  if (path !== undefined) headers.push([":path", path]);
  if (host !== undefined) headers.push([":authority", host]);
  if (scheme !== undefined) headers.push([":scheme", scheme]);
  if (o.headers !== undefined) {
    if (typeof o.headers !== "object" || o.headers === null || Array.isArray(o.headers)) problems.push("headers: expected an object of strings");
    else {
      for (const [k, v] of Object.entries(o.headers)) {
        if (typeof v !== "string") problems.push(`headers.${k}: expected a string`);
        else headers.push([k.toLowerCase(), v]);
      }
    }
  }

  const properties: Array<[string, string]> = [];
  if (destinationService !== undefined) properties.push(["mesh.destination_service", destinationService]);
  const c = o.connection;
  if (c !== undefined) {
    if (typeof c !== "object" || c === null || Array.isArray(c)) problems.push("connection: expected an object");
    else {
      const conn = c as Record<string, unknown>;
      const address = (ipName: string, portName: string, property: string) => {
        const ip = str(conn[ipName], `connection.${ipName}`);
        const port = conn[portName];
        if (port !== undefined && (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535)) {
          problems.push(`connection.${portName}: expected a port number`);
          return;
        }
        if (ip === undefined) return;
        const host = ip.includes(":") ? `[${ip}]` : ip;
        properties.push([property, port === undefined ? (ip.includes(":") ? ip : ip) : `${host}:${port}`]);
      };
      address("sourceIp", "sourcePort", "source.address");
      address("destinationIp", "destinationPort", "destination.address");
      if (conn.mtls !== undefined) {
        if (typeof conn.mtls !== "boolean") problems.push("connection.mtls: expected true or false");
        else properties.push(["connection.mtls", String(conn.mtls)]);
      }
      const peer = str(conn.peerPrincipal, "connection.peerPrincipal");
      if (peer) properties.push(["connection.uri_san_peer_certificate", peer]);
      const local = str(conn.localPrincipal, "connection.localPrincipal");
      if (local) properties.push(["connection.uri_san_local_certificate", local]);
      const sni = str(conn.requestedServerName, "connection.requestedServerName");
      if (sni) properties.push(["connection.requested_server_name", sni]);
    }
  }
  if (o.auth !== undefined) {
    if (typeof o.auth !== "object" || o.auth === null || Array.isArray(o.auth)) problems.push("auth: expected the claims object of a validated token");
    else properties.push(["mesh.authn.payload", JSON.stringify(o.auth)]);
  }
  let timeNanos = now();
  const time = str(o.time, "time");
  if (time !== undefined) {
    const ms = Date.parse(time);
    if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(time)) problems.push("time: expected an RFC 3339 timestamp");
    else {
      const frac = /\.(\d+)/.exec(time)?.[1] ?? "";
      const subMs = frac.length > 3 ? BigInt(frac.slice(3, 9).padEnd(6, "0")) : 0n;
      timeNanos = BigInt(ms) * 1_000_000n + subMs;
    }
  }
  if (problems.length > 0) return { error: problems.join("; ") };
  return { headers, properties, timeNanos };
}
