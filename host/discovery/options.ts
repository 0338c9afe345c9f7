// Defaults of disco-discovery (spec 2: "disco-discovery", "Listeners and ports", "Limits").
export const DEFAULT_GRPC_ADDR = ":15010";
export const DEFAULT_SECURE_GRPC_ADDR = ":15012";
export const DEFAULT_HTTP_ADDR = ":8080";
export const DEFAULT_HTTPS_ADDR = ":15017";
export const DEFAULT_MONITORING_ADDR = ":15014";
export { DEFAULT_DOMAIN } from "../mesh/hosts.ts";
export const DEFAULT_MESH_CONFIG = "/etc/mesh/config/mesh";
export const DEFAULT_KEEPALIVE_INTERVAL_MS = 30_000;
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 10_000;
/** Upstream's default connection age: Go's largest duration, i.e. never. */
export const DEFAULT_MAX_CONNECTION_AGE = "2562047h47m16.854775807s";
/** Ages from this one on mean never (a timer cannot run longer: Node caps timers at 2^31-1 ms, about 24.8 days). */
export const NEVER_MS = 2 ** 31 - 1;
export const DEFAULT_DEBOUNCE_AFTER_MS = 100;
export const DEFAULT_DEBOUNCE_MAX_MS = 10_000;
export const DEFAULT_PUSH_THROTTLE = 100;
/** Spec 2's scopes of disco-discovery, every one accepted; `ads` (xDS), `default`, `validationServer` (webhooks) carry its messages, the others have none here. */
export const DISCOVERY_LOG_SCOPES = [
  "ads",
  "all",
  "attributes",
  "authn",
  "configmapcontroller",
  "default",
  "grpcAdapter",
  "mcp",
  "model",
  "pkica",
  "rbac",
  "rootcertrotator",
  "secretcontroller",
  "serverca",
  "validation",
  "validationController",
  "validationServer",
] as const;
export const LISTENING_LINE_PREFIX = "disco-discovery listening: ";
