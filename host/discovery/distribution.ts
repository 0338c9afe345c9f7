import { createHash } from "node:crypto";
import type { Catalog } from "../config/catalog.ts";
import type { SourceDocument } from "../config/documents.ts";
import { CLUSTER, CONFIG_DOCUMENT, ENDPOINT, LISTENER, ROUTE } from "./type_urls.ts";

/**
 * Config distribution tracking (DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING,
 * upstream's /debug/config_distribution): which version of one resource each
 * connected proxy has. Every configuration version the control plane builds
 * is recorded in a ledger, resource by resource; a proxy's acknowledged
 * configuration version (host/discovery/ads_server.ts) is then looked up in
 * it. Versions older than DISCO_DISTRIBUTION_HISTORY_RETENTION are forgotten:
 * a proxy still on one reads as unknown.
 */

/** A resource as one configuration version holds it. */
export interface ResourceVersion {
  /** metadata.resourceVersion when the document gives one, else a digest of the whole document: changes with any change. */
  readonly resourceVersion: string;
  /** metadata.generation when the document gives one, else 1 at first sight and one more at each change outside metadata (the orchestrator's meaning). */
  readonly generation: number;
}

/** `Kind/namespace/name` (namespace "" for cluster-scoped kinds), upstream's config key. */
export function resourceKey(r: { kind: string; namespace: string; name: string }): string {
  return `${r.kind}/${r.namespace}/${r.name}`;
}

const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 12);

/**
 * The versions of every valid resource of each configuration, one
 * configuration after the other. Generations are remembered for the
 * daemon's life, also across a resource's absence (a file caught while it
 * is rewritten must not restart them at 1).
 */
export class ResourceVersioning {
  private readonly seen = new Map<string, { generation: number; specDigest: string; version: ResourceVersion }>();

  next(catalog: Pick<Catalog, "resources">, documents: readonly SourceDocument[]): Map<string, ResourceVersion> {
    const byOrigin = new Map(documents.map((d) => [`${d.file}#${d.index}`, d]));
    const out = new Map<string, ResourceVersion>();
    for (const r of catalog.resources) {
      const body = byOrigin.get(`${r.origin.file}#${r.origin.index}`)?.body ?? {};
      const metadata = (body.metadata ?? {}) as { resourceVersion?: unknown; generation?: unknown };
      const { metadata: _metadata, status: _status, ...spec } = body;
      const specDigest = digest(spec);
      const key = resourceKey(r);
      const before = this.seen.get(key);
      const counted = before === undefined ? 1 : before.specDigest === specDigest ? before.generation : before.generation + 1;
      const generation = Number.isSafeInteger(metadata.generation) ? (metadata.generation as number) : counted;
      const resourceVersion = typeof metadata.resourceVersion === "string" && metadata.resourceVersion !== "" ? metadata.resourceVersion : digest(body);
      // An unchanged resource shares its value with the versions before it: the ledger holds many versions.
      const version =
        before?.version.resourceVersion === resourceVersion && before.version.generation === generation ? before.version : { resourceVersion, generation };
      this.seen.set(key, { generation, specDigest, version });
      out.set(key, version);
    }
    return out;
  }
}

/** What a configuration version says of one resource. */
export type ResourceAt =
  | { readonly state: "present"; readonly resourceVersion: string; readonly generation: number }
  | { readonly state: "absent" }
  | { readonly state: "unknown" };

interface LedgerEntry {
  readonly resources: ReadonlyMap<string, ResourceVersion>;
  /** When a newer version replaced this one (ms, the injected clock); undefined for the newest. */
  supersededAt?: number;
}

/** Every recent configuration version, resource by resource (DISCO_DISTRIBUTION_HISTORY_RETENTION). */
export class DistributionLedger {
  private readonly versions = new Map<number, LedgerEntry>();
  private newest: number | undefined;

  constructor(
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  record(version: number, resources: ReadonlyMap<string, ResourceVersion>): void {
    const at = this.now();
    if (this.newest !== undefined) this.versions.get(this.newest)!.supersededAt = at;
    this.versions.set(version, { resources });
    this.newest = version;
    for (const [v, e] of this.versions) if (e.supersededAt !== undefined && at - e.supersededAt > this.retentionMs) this.versions.delete(v);
  }

  /** The resource `key` as configuration `version` had it. */
  at(version: number | undefined, key: string): ResourceAt {
    const entry = version === undefined ? undefined : this.versions.get(version);
    if (!entry || (entry.supersededAt !== undefined && this.now() - entry.supersededAt > this.retentionMs)) return { state: "unknown" };
    const r = entry.resources.get(key);
    return r ? { state: "present", resourceVersion: r.resourceVersion, generation: r.generation } : { state: "absent" };
  }

  /** The newest configuration's view of `key`. */
  current(key: string): ResourceAt {
    return this.at(this.newest, key);
  }
}

/** One proxy's line of /debug/config_distribution (upstream's SyncedVersions, plus what our proxies subscribe to). */
export interface SyncedVersion {
  readonly ProxyID: string;
  /** The resource's version in the configuration the proxy acknowledged, per resource type it subscribes to ("" when absent or unknown, as upstream). */
  readonly ClusterVersion?: string;
  readonly ListenerVersion?: string;
  readonly RouteVersion?: string;
  readonly EndpointVersion?: string;
  readonly DocumentVersion?: string;
  /** The configuration version the proxy has acknowledged for every type it subscribes to; absent before its first ACK. */
  readonly ConfigVersion?: number;
  /** The resource in that configuration: present (with its resourceVersion and generation), absent, or unknown (before the first ACK, or older than the retention). */
  readonly State: ResourceAt["state"];
  readonly ResourceVersion: string;
  readonly Generation: number;
}

/** Proxy side of the lookup: its id and, per subscribed type URL, the configuration version it acknowledged (undefined: none yet). */
export interface ProxyAcks {
  readonly id: string;
  readonly acked: ReadonlyMap<string, number | undefined>;
}

const TYPE_FIELDS: Readonly<Record<string, keyof SyncedVersion>> = {
  [CLUSTER]: "ClusterVersion",
  [LISTENER]: "ListenerVersion",
  [ROUTE]: "RouteVersion",
  [ENDPOINT]: "EndpointVersion",
  [CONFIG_DOCUMENT]: "DocumentVersion",
};

/**
 * Each proxy's version of `key`: per type it subscribes to, and as a whole
 * (the oldest configuration among its types: a proxy has a configuration
 * only once every type it subscribes to has acknowledged it).
 */
export function configDistribution(ledger: DistributionLedger, proxies: readonly ProxyAcks[], key: string): SyncedVersion[] {
  const text = (at: ResourceAt) => (at.state === "present" ? at.resourceVersion : "");
  return proxies
    .filter((p) => p.acked.size > 0)
    .map((p) => {
      const perType: Record<string, string> = {};
      for (const [type, v] of p.acked) if (TYPE_FIELDS[type]) perType[TYPE_FIELDS[type]] = text(ledger.at(v, key));
      const versions = [...p.acked.values()];
      const config = versions.some((v) => v === undefined) ? undefined : Math.min(...(versions as number[]));
      const at = ledger.at(config, key);
      return {
        ProxyID: p.id,
        ...perType,
        ...(config !== undefined ? { ConfigVersion: config } : {}),
        State: at.state,
        ResourceVersion: text(at),
        Generation: at.state === "present" ? at.generation : 0,
      };
    });
}
