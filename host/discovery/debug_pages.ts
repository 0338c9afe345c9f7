// disco-discovery's debug port (upstream's /debug/*): what each proxy was
// sent and acknowledged, the configuration, the ADS connections, the
// endpoints of every cluster. Served by host/discovery/server.ts.
import { unpackAny } from "../wire/envoy_protos.ts";
import type { AggregatedDiscoveryService, ProxyNode } from "./ads_server.ts";
import { documentsFromResources } from "./config_distribution.ts";
import { type DistributionLedger, type ResourceVersion, configDistribution, resourceKey } from "./distribution.ts";
import { endpointReport } from "./endpoint_report.ts";
import { type MeshSnapshot, resourcesFor } from "./mesh_snapshot.ts";
import { nodeIdentity } from "./proxy_kind.ts";
import { selectResources } from "./resource_set.ts";
import { redactedSecret } from "./secrets.ts";
import { proxyConfig, synczRows } from "./sync_status.ts";
import { CONFIG_DOCUMENT, SECRET, SHORT_TYPE } from "./type_urls.ts";

type Res = import("node:http").ServerResponse;

/** What the debug pages read. */
export interface DebugState {
  snapshot: MeshSnapshot;
  ads: AggregatedDiscoveryService;
  versions: ReadonlyMap<string, ResourceVersion>;
  /** Undefined when distribution tracking is off. */
  ledger: DistributionLedger | undefined;
  adszConfig: boolean;
  /** This instance's id (the control_plane identifier's ID), named on /debug/syncz for `meshctl proxy-status`. */
  controlPlane: string;
  scoped: boolean;
}

/** Upstream's answer when tracking is off, with our variable's name. */
export const TRACKING_OFF = "config distribution tracking is off: set DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING=true to query which proxy has which config\n";

// The debug port (upstream's /debug/*): what each proxy was sent and acknowledged, the configuration, the ADS connections.
export function debugPage(url: string, d: DebugState, res: Res): void {
  const { snapshot, ads } = d;
  const [path, query = ""] = url.split("?", 2);
  const params = new URLSearchParams(query);
  const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(`${JSON.stringify(value, null, 2)}\n`);
  const text = (status: number, body: string) => res.writeHead(status, { "content-type": "text/plain" }).end(body);
  if (path === "/debug/syncz") {
    json(synczRows(ads.state(), d.ledger !== undefined, d.controlPlane));
  } else if (path === "/debug/proxy_config") {
    const id = params.get("proxyID");
    if (!id) return void text(422, "querystring parameter 'proxyID' is required\n");
    const serveNow = (node: ProxyNode, type: string, names: ReadonlySet<string> | "*") => selectResources(resourcesFor(snapshot, node, d.scoped), type, names);
    const config = proxyConfig(ads.state(), id, serveNow, (r) => decodeSent(r.any));
    if (!config) return void text(404, `no proxy ${id} is connected\n`);
    json(config);
  } else if (path === "/debug/adsz") {
    json(
      ads.state().map((c) => ({
        connectionId: c.id,
        node: c.node,
        connectedAt: c.connectedAt.toISOString(),
        watches: Object.fromEntries([...c.subscriptions].map(([t, s]) => [SHORT_TYPE[t] ?? t, s.names === "*" ? ["*"] : [...s.names]])),
        ...(d.adszConfig
          ? {
              config: Object.fromEntries(
                [...c.subscriptions].map(([t, s]) => [SHORT_TYPE[t] ?? t, (s.sentResources ?? []).map((r) => ({ name: r.name, value: decodeSent(r.any) }))]),
              ),
            }
          : {}),
      })),
    );
  } else if (path === "/debug/configz") {
    const versionOf = (r: (typeof snapshot.catalog.resources)[number]) => {
      const v = d.versions.get(resourceKey(r));
      return v ? { resourceVersion: v.resourceVersion, generation: v.generation } : {};
    };
    // A Secret's values never leave through the debug port (host/discovery/secrets.ts).
    const spec = (r: (typeof snapshot.catalog.resources)[number]) =>
      r.kind === "Secret" ? redactedSecret(r.spec as unknown as Record<string, unknown>) : r.spec;
    json({
      version: snapshot.version,
      resources: snapshot.catalog.resources.map((r) => ({ kind: r.kind, namespace: r.namespace, name: r.name, ...versionOf(r), spec: spec(r) })),
    });
  } else if (path === "/debug/config_distribution") {
    if (!d.ledger) return void text(409, TRACKING_OFF);
    const key = params.get("resource");
    if (!key) return void text(422, "querystring parameter 'resource' is required\n");
    const namespace = params.get("proxy_namespace");
    const proxies = ads
      .state()
      .filter((c) => !namespace || nodeIdentity(c.node)?.namespace === namespace)
      .map((c) => ({ id: c.node.id, acked: new Map([...c.subscriptions].map(([t, s]) => [t, s.ackedConfig])) }));
    json(configDistribution(d.ledger, proxies, key));
  } else if (path === "/debug/endpointz") {
    json(endpointReport(snapshot.registry, snapshot.services));
  } else if (path === "/debug/resourcesz") {
    json(Object.fromEntries([...snapshot.proxyless].map(([type, m]) => [SHORT_TYPE[type] ?? type, [...m.values()].map((r) => unpackAny(r.any))])));
  } else {
    text(
      404,
      "not found: try /debug/syncz, /debug/proxy_config?proxyID=<node id>, /debug/adsz, /debug/configz, /debug/config_distribution?resource=<Kind>/<namespace>/<name>, /debug/endpointz, /debug/resourcesz\n",
    );
  }
}

/** A sent resource as JSON: Envoy's types by their protos, our configuration documents as their source; Secrets without their values. */
function decodeSent(any: { type_url: string; value: Uint8Array }): unknown {
  if (any.type_url === SECRET) return { name: unpackAny(any).name, redacted: true };
  if (any.type_url !== CONFIG_DOCUMENT) return unpackAny(any);
  const body = documentsFromResources([any])[0].body;
  return body.kind === "Secret" ? redactedSecret(body) : body;
}
