/**
 * Envoy's logger names (spec 3, `proxy-config log`) → the sidecar's log
 * scope that covers them: filter work (the wasm module, JWT, RBAC, tap) →
 * `filter`; gRPC (the hub transport) → `hub`; configuration loading →
 * `config`; the rest → `default`. The scope names themselves are accepted
 * too. Used by `meshctl proxy-config log` and `disco-agent proxy
 * --proxyComponentLogLevel`.
 */
export const PROXY_LOGGER_SCOPES: Readonly<Record<string, "default" | "filter" | "hub" | "config">> = Object.freeze({
  default: "default",
  filter: "filter",
  hub: "hub",
  config: "config",
  jwt: "filter",
  rbac: "filter",
  tap: "filter",
  wasm: "filter",
  grpc: "hub",
  file: "config",
  init: "config",
  runtime: "config",
  secret: "config",
  admin: "default",
  assert: "default",
  backtrace: "default",
  client: "default",
  connection: "default",
  conn_handler: "default",
  forward_proxy: "default",
  hc: "default",
  health_checker: "default",
  http: "default",
  http2: "default",
  io: "default",
  main: "default",
  misc: "default",
  pool: "default",
  router: "default",
  stats: "default",
  testing: "default",
  tracing: "default",
  upstream: "default",
  udp: "default",
});
