// disco-discovery started in the test's own process (startDiscovery), with
// the defaults tests share: loopback plain xDS on a free port, a short
// debounce, a silent log. Callers add the listeners and options under test.
import { filterChecks } from "../../../host/config/catalog.ts";
import { type DiscoveryOptions, type DiscoveryServer, startDiscovery } from "../../../host/discovery/server.ts";
import { DEFAULT_DOMAIN } from "../../../host/mesh/hosts.ts";
import { FilterModule } from "../../../host/wasm/filter_module.ts";

export const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as never;

let checks: DiscoveryOptions["checks"] | undefined;
/** The filter's pattern checks (the module is loaded once). */
export function testChecks(): DiscoveryOptions["checks"] {
  checks ??= filterChecks(FilterModule.load());
  return checks;
}

export function startTestDiscovery(configDir: string, extra: Partial<DiscoveryOptions> = {}): Promise<DiscoveryServer> {
  return startDiscovery({
    configDir,
    grpc: { host: "127.0.0.1", port: 0 },
    rootNamespace: "mesh-system",
    domain: DEFAULT_DOMAIN,
    debounceAfterMs: 10,
    debounceMaxMs: 1000,
    keepaliveIntervalMs: 30_000,
    keepaliveTimeoutMs: 10_000,
    checks: testChecks(),
    log: silent,
    ...extra,
  });
}

/** Polls `probe` (every 20 ms, at most 90 s) until it returns something other than undefined. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** An AuthorizationPolicy in namespace foo denying one path: a configuration change a test can make and see. */
export const denyPolicy = (path: string) => `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: foo}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["${path}"]}}]}]
`;
