import { type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { type Catalog, decodeDocuments } from "./catalog.ts";
import { readDocuments, type SourceDocument } from "./documents.ts";
import { ConfigError } from "./errors.ts";
import { type ConfigProblem, formatConfigProblem } from "./problems.ts";
import { type HubClientBundle, decodeHubClientDocuments, describeFilterProblem, pluginConfig } from "./hub_client_bundle.ts";
import type { PatternChecks } from "./resources/hub_client.ts";

/** A configuration read from the directory: the filter's plugin JSON and what it came from. */
export interface LoadedConfig {
  plugin: string;
  bundle: HubClientBundle;
  files: string[];
  /** Every document read, in order (what the control plane distributes). */
  documents: SourceDocument[];
  /**
   * The other documents of the directory (security, networking, orchestrator
   * kinds) decoded by the catalog. Exposed on /config_dump for meshctl;
   * enforced by the sidecar's security path (`--caAddress`).
   */
  mesh: Catalog;
}

/** The kinds the filter's plugin configuration is built from; every other document goes to the catalog. */
const HUB_CLIENT_KINDS: ReadonlySet<string> = new Set([
  "HTTPAPISpec",
  "HTTPAPISpecBinding",
  "QuotaSpec",
  "QuotaSpecBinding",
  "HttpClientConfig",
  "TcpClientConfig",
]);

/** Catalog errors, reported like any other configuration error (one message naming each file, resource and field). */
class CatalogErrors extends ConfigError {
  constructor(problems: readonly ConfigProblem[]) {
    super({ file: problems[0].file, resource: problems[0].resource }, problems[0].fieldPath, "");
    this.message = problems.map(formatConfigProblem).join("; ");
  }
}

const CONFIG_FILE = /\.(ya?ml|json)$/;
/** How often the directory is rescanned besides fs.watch events (some file systems send none). */
export const RESCAN_INTERVAL_MS = 1000;

/**
 * Reads every YAML/JSON file of `dir` (sorted) into one plugin configuration
 * plus the catalog of the other documents; throws ConfigError for a bad file.
 */
export function loadConfigDir(dir: string, checks: PatternChecks, domain: string): LoadedConfig {
  const files = readdirSync(dir)
    .filter((f) => CONFIG_FILE.test(f))
    .sort()
    .map((f) => join(dir, f));
  return loadDocuments(
    files.flatMap((f) => readDocuments(f)),
    files,
    checks,
    domain,
  );
}

/** The same from documents already read (a directory's, or those the control plane sent), short hosts resolved in the mesh's DNS domain; throws ConfigError. */
export function loadDocuments(docs: SourceDocument[], files: string[], checks: PatternChecks, domain: string): LoadedConfig {
  const bundle = decodeHubClientDocuments(
    docs.filter((d) => HUB_CLIENT_KINDS.has(d.kind)),
    checks,
  );
  const mesh = decodeDocuments(
    docs.filter((d) => !HUB_CLIENT_KINDS.has(d.kind)),
    checks,
    { domain },
  );
  if (mesh.errors.length > 0) throw new CatalogErrors(mesh.errors);
  return { plugin: JSON.stringify(pluginConfig(bundle)), bundle, files, documents: docs, mesh };
}

/**
 * Watches a configuration directory and calls `apply` with each new
 * configuration that decodes; a bad file is reported through `reject` and the
 * last good configuration stays in force.
 */
export class ConfigDirWatcher {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private fingerprint = "";

  constructor(
    private readonly dir: string,
    private readonly checks: PatternChecks,
    /** The mesh's DNS domain (host/mesh/hosts.ts). */
    private readonly domain: string,
    private readonly apply: (config: LoadedConfig) => boolean,
    private readonly reject: (problem: string) => void,
  ) {}

  /** Loads now; returns whether the first configuration was applied. */
  start(): boolean {
    const applied = this.reload();
    try {
      this.watcher = watch(this.dir, () => this.reloadIfChanged());
    } catch {
      // Rescanning alone still works.
    }
    this.timer = setInterval(() => this.reloadIfChanged(), RESCAN_INTERVAL_MS);
    this.timer.unref();
    return applied;
  }

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }

  private currentFingerprint(): string {
    try {
      return readdirSync(this.dir)
        .filter((f) => CONFIG_FILE.test(f))
        .sort()
        .map((f) => {
          const s = statSync(join(this.dir, f));
          return `${f}:${s.size}:${s.mtimeMs}`;
        })
        .join("|");
    } catch (e) {
      return `error:${(e as Error).message}`;
    }
  }

  /** Reads the directory now, changed or not (SIGHUP); false when it was refused. */
  reloadNow(): boolean {
    return this.reload();
  }

  private reloadIfChanged(): void {
    if (this.currentFingerprint() !== this.fingerprint) this.reload();
  }

  private reload(): boolean {
    this.fingerprint = this.currentFingerprint();
    let loaded: LoadedConfig;
    try {
      loaded = loadConfigDir(this.dir, this.checks, this.domain);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      this.reject(`${e.message}; keeping the last good configuration`);
      return false;
    }
    return this.apply(loaded);
  }
}

export { describeFilterProblem };
