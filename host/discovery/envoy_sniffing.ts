import { KNOWN_PROTOCOLS } from "../mesh/registry.ts";
import type { ServerMtlsMode } from "../mesh/policies.ts";
import { HTTP_ALPN, mtlsChains } from "./envoy_mtls.ts";

/**
 * Protocol sniffing, as upstream's sidecars get it for a port whose
 * protocol is not named (no `<protocol>[-suffix]` port name, no
 * `appProtocol`, or one no listener is built for): Envoy's HTTP inspector
 * reads the first bytes of a plain-text connection and sets its application
 * protocol (`http/1.0`, `http/1.1`, `h2c`); the TLS inspector sets it from
 * the client hello's ALPN. The port's filter chains come in pairs, an HTTP
 * one matching those application protocols and a TCP one matching the rest.
 * A connection that sends nothing within the listener's filter timeout
 * (server-first protocols) continues as TCP.
 *
 * DISCO_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND / _FOR_INBOUND (true) turn it
 * on per direction; off, such a port is served as TCP, as upstream does.
 * Pure.
 */

type Json = Record<string, unknown>;

export const HTTP_INSPECTOR = {
  name: "envoy.filters.listener.http_inspector",
  typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.listener.http_inspector.v3.HttpInspector" },
};

/**
 * Upstream's mesh-config default `protocolDetectionTimeout` for outbound
 * listeners (the inbound side has DISCO_INBOUND_PROTOCOL_DETECTION_TIMEOUT).
 */
export const OUTBOUND_DETECTION_TIMEOUT_MS = 100;

/** Whether a port's protocol is left to sniffing: not named, or not one the mesh model knows. */
export function isUnnamedProtocol(protocol: string | undefined): boolean {
  return protocol === undefined || !KNOWN_PROTOCOLS.has(protocol);
}

/**
 * What the HTTP inspector reports for plain-text HTTP. HTTP/1.0 only when
 * the HTTP connection manager accepts it (DISCO_HTTP10): otherwise it would
 * be refused there, while as TCP it still reaches the app (upstream's choice).
 */
export function plaintextHttpAlpn(acceptHttp10: boolean): string[] {
  return [...(acceptHttp10 ? ["http/1.0"] : []), "http/1.1", "h2c"];
}

/** The listener fields that make sniffing give up after `timeoutMs` and go on as TCP. */
export function sniffingListenerFields(timeoutMs: number): Json {
  return { listener_filters_timeout: `${timeoutMs / 1000}s`, continue_on_listener_filters_timeout: true };
}

/** `chain`'s match with the application protocols of HTTP over its transport (TLS: the ALPN our HTTP chains offer). */
function asHttp(chain: Json, acceptHttp10: boolean): Json {
  const alpn = chain.transport_socket ? HTTP_ALPN : plaintextHttpAlpn(acceptHttp10);
  return { ...chain, filter_chain_match: { ...(chain.filter_chain_match as Json), application_protocols: alpn } };
}

/**
 * The inbound filter chains of a sniffed port under its mutual TLS mode: per
 * transport the mode accepts, an HTTP chain (`http` filters) for the HTTP
 * application protocols and a TCP chain (`tcp` filters) for the rest.
 */
export function sniffedInboundChains(mode: ServerMtlsMode, port: number, http: readonly Json[], tcp: readonly Json[], acceptHttp10: boolean): Json[] {
  const match = { destination_port: port };
  const name = (tls: boolean, kind: string) => `inbound|${port}||${tls ? "mtls" : ""}-${kind}`;
  const httpChains = mtlsChains(mode, match, (tls) => ({ name: name(tls, "http"), filters: http }), HTTP_ALPN).map((c) => asHttp(c, acceptHttp10));
  const tcpChains = mtlsChains(mode, match, (tls) => ({ name: name(tls, "tcp"), filters: tcp }), []);
  return [...httpChains, ...tcpChains];
}
