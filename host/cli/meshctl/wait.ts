import type { Writable } from "node:stream";
import { KINDS } from "../../config/catalog.ts";
import { resourceKey } from "../../discovery/distribution.ts";
import type { SyncedVersion } from "../../discovery/distribution.ts";
import { adminRequest } from "../../proxy/admin_client.ts";
import { EXIT_FAILURE, EXIT_OK } from "../../daemon/exit_codes.ts";

/**
 * `meshctl x wait`: polls disco-discovery's /debug/config_distribution until
 * the wanted version of one resource is on at least `threshold` of the
 * connected proxies (or, `--for delete`, gone from them), as upstream's
 * `istioctl x wait`. The wanted version is the resource's current one in
 * disco-discovery's configuration (/debug/configz, read at every poll: a
 * newer version seen meanwhile is accepted too, as upstream's watch does),
 * or the one `--resource-version` / `--generation` names.
 */

export interface WaitRequest {
  readonly for: "distribution" | "delete";
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  /** `--resource-version` (repeatable): accept these versions instead of the current one. */
  readonly resourceVersions: readonly string[];
  /** `--generation`: accept this generation instead of the current one. */
  readonly generation?: number;
  readonly threshold: number;
  readonly timeoutMs: number;
  /** disco-discovery's debug addresses (`--httpAddr` of every replica): `host:port`. */
  readonly discovery: ReadonlyArray<{ host: string; port: number }>;
  readonly pollMs: number;
  readonly verbose: boolean;
}

/** The kind a user typed (`virtualservice`, `virtual-service`, `VirtualService`), as upstream matches it; undefined when none. */
export function matchKind(typed: string): string | undefined {
  const wanted = typed.replaceAll("-", "").toLowerCase();
  return KINDS.find((k) => k.toLowerCase() === wanted);
}

/** `<name>[.<namespace>]`: the last dot separates the namespace, as upstream's. */
export function splitNameNamespace(arg: string, fallbackNamespace: string): { name: string; namespace: string } {
  const dot = arg.lastIndexOf(".");
  return dot > 0 ? { name: arg.slice(0, dot), namespace: arg.slice(dot + 1) } : { name: arg, namespace: fallbackNamespace };
}

/** A failure to ask disco-discovery: the command stops at once, as upstream's. */
class QueryFailed extends Error {}

async function getJson<T>(target: { host: string; port: number }, path: string): Promise<T> {
  let res: { status: number; body: string };
  try {
    res = await adminRequest(target.port, "GET", path, undefined, target.host);
  } catch (e) {
    throw new QueryFailed(`${target.host}:${target.port}${path}: ${(e as Error).message}`);
  }
  if (res.status !== 200) throw new QueryFailed(`${target.host}:${target.port}${path}: HTTP ${res.status}: ${res.body.trim()}`);
  return JSON.parse(res.body) as T;
}

interface ConfigzResource {
  kind: string;
  namespace: string;
  name: string;
  resourceVersion?: string;
  generation?: number;
}

/** What every replica's configuration says of the resource now: its versions, or nothing when absent everywhere. */
async function currentVersions(r: WaitRequest, key: string): Promise<Array<{ resourceVersion: string; generation: number }>> {
  const out: Array<{ resourceVersion: string; generation: number }> = [];
  for (const target of r.discovery) {
    const configz = await getJson<{ resources: ConfigzResource[] }>(target, "/debug/configz");
    for (const c of configz.resources)
      if (resourceKey(c) === key && c.resourceVersion !== undefined) out.push({ resourceVersion: c.resourceVersion, generation: c.generation ?? 0 });
  }
  return out;
}

async function distribution(r: WaitRequest, key: string): Promise<SyncedVersion[]> {
  const lists = await Promise.all(r.discovery.map((t) => getJson<SyncedVersion[]>(t, `/debug/config_distribution?resource=${encodeURIComponent(key)}`)));
  return lists.flat();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the wait; returns the exit code (0 reached, 1 timeout or disco-discovery unreachable). */
export async function runWait(r: WaitRequest, out: Writable, err: Writable): Promise<number> {
  const key = resourceKey(r);
  const deadline = Date.now() + r.timeoutMs;
  const verbose = (line: string) => r.verbose && out.write(`${line}\n`);
  const acceptedVersions = new Set(r.resourceVersions);
  const acceptedGenerations = new Set(r.generation === undefined ? [] : [r.generation]);
  const pinned = acceptedVersions.size > 0 || acceptedGenerations.size > 0;
  let seen = pinned;
  let last: { present: number; total: number; lagging: SyncedVersion[] } = { present: 0, total: 0, lagging: [] };
  try {
    for (;;) {
      const current = await currentVersions(r, key);
      if (r.for === "distribution" && !pinned) {
        for (const v of current) {
          if (!acceptedVersions.has(v.resourceVersion)) verbose(`received new target version: ${v.resourceVersion} (generation ${v.generation})`);
          acceptedVersions.add(v.resourceVersion);
        }
        seen ||= current.length > 0;
      }
      if (r.for === "delete" || seen) {
        const proxies = await distribution(r, key);
        const done = (p: SyncedVersion) =>
          r.for === "delete"
            ? p.State === "absent"
            : p.State === "present" && (acceptedVersions.has(p.ResourceVersion) || acceptedGenerations.has(p.Generation));
        const lagging = proxies.filter((p) => !done(p));
        last = { present: proxies.length - lagging.length, total: proxies.length, lagging };
        verbose(`Received poll result: ${last.present}/${last.total}`);
        const gone = r.for === "delete" ? current.length === 0 : true;
        // No proxy connected is not a distribution (upstream's 0/0 never reaches the threshold).
        if (gone && last.total > 0 && last.present / last.total >= r.threshold) {
          out.write(
            r.for === "delete"
              ? `Resource ${key} removed from ${last.present} out of ${last.total} sidecars\n`
              : `Resource ${key} present on ${last.present} out of ${last.total} sidecars\n`,
          );
          return EXIT_OK;
        }
      }
      if (Date.now() >= deadline) break;
      await sleep(Math.min(r.pollMs, Math.max(0, deadline - Date.now())));
    }
  } catch (e) {
    if (!(e instanceof QueryFailed)) throw e;
    err.write(
      `Error: unable to query disco-discovery for distribution (is it running with DISCO_ENABLE_CONFIG_DISTRIBUTION_TRACKING on, and --debugAddress its --httpAddr?): ${e.message}\n`,
    );
    return EXIT_FAILURE;
  }
  if (r.for === "distribution" && !seen) {
    err.write(`Error: unable to retrieve resource ${key}: disco-discovery's configuration (/debug/configz) has no such resource\n`);
    return EXIT_FAILURE;
  }
  err.write(
    r.for === "delete"
      ? `Error: timeout expired before resource ${key} was removed from all sidecars\n`
      : `Error: timeout expired before resource ${key} became effective on all sidecars\n`,
  );
  const detail = last.lagging.map((p) => `${p.ProxyID} (${p.State}${p.State === "present" ? ` ${p.ResourceVersion}, generation ${p.Generation}` : ""})`);
  err.write(
    last.total === 0 ? "  no proxy is connected to disco-discovery\n" : `  ${last.present} out of ${last.total} sidecars; not yet: ${detail.join(", ")}\n`,
  );
  return EXIT_FAILURE;
}
