import { type Catalog, decodeDocuments } from "./catalog.ts";
import { parseDocuments, readDocuments, type SourceDocument } from "./documents.ts";
import { FolderSource, listConfigFiles } from "./folder_source.ts";
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

/**
 * Reads every configuration file of `dir` (as the watcher lists them) into one
 * plugin configuration plus the catalog of the other documents; throws
 * ConfigError for a bad file.
 */
export function loadConfigDir(dir: string, checks: PatternChecks, domain: string): LoadedConfig {
  const files = listConfigFiles(dir);
  return loadDocuments(
    files.flatMap((f) => readDocuments(f)),
    files,
    checks,
    domain,
  );
}

/** The same from documents already read (a directory's, or those the control plane sent), short hosts resolved in the mesh's DNS domain; throws ConfigError. */
export function loadDocuments(docs: SourceDocument[], files: string[], checks: PatternChecks, domain: string, { references = true } = {}): LoadedConfig {
  const bundle = decodeHubClientDocuments(
    docs.filter((d) => HUB_CLIENT_KINDS.has(d.kind)),
    checks,
    { references },
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
 * Watches a configuration directory (the sidecar's and disco-discovery's
 * `--configDir`) with the folder semantics of host/config/folder_source.ts:
 * each file decoded on its own, a file that stops decoding keeps its last
 * good version, a removed file is removed. `apply` gets each new
 * configuration; each refusal goes to `reject`.
 */
export class ConfigDirWatcher {
  private readonly source: FolderSource<SourceDocument[], LoadedConfig>;

  constructor(
    dir: string,
    checks: PatternChecks,
    /** The mesh's DNS domain (host/mesh/hosts.ts). */
    domain: string,
    apply: (config: LoadedConfig) => boolean,
    reject: (problem: string) => void,
  ) {
    this.source = new FolderSource({
      dir,
      decodeFile: (path, text) => {
        const docs = parseDocuments(text, path);
        // On its own: references to other files' resources are checked when the files are put together.
        loadDocuments(docs, [path], checks, domain, { references: false });
        return docs;
      },
      combine: (files) =>
        loadDocuments(
          files.flatMap((f) => f.value),
          files.map((f) => f.path),
          checks,
          domain,
        ),
      apply,
      report: reject,
    });
  }

  /** Loads now and starts watching; returns whether the first configuration was applied. */
  start(): boolean {
    return this.source.start();
  }

  stop(): void {
    this.source.stop();
  }

  /** Reads the directory now and applies it, changed or not (SIGHUP); false when it was refused. */
  reloadNow(): boolean {
    return this.source.scan(true);
  }
}

export { describeFilterProblem };
