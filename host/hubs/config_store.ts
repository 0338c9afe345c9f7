import { parseDocuments } from "../config/documents.ts";
import { decodeHubDocument, isHubDocument, type HubResource } from "../config/resources/hub_rules.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { FolderSource } from "../config/folder_source.ts";
import { buildHubConfig, type HubConfig } from "./hub_config.ts";
import type { CompileRegex } from "../regex/engine.ts";

/** The configuration in force and the problems that kept parts of the files out. */
export interface LoadedConfig {
  config: HubConfig;
  resources: readonly HubResource[];
  /** One line per bad file or left-out resource: file, resource, field path, what was expected. */
  errors: readonly string[];
  /** How many of the bad files failed on a StringMatch regex. */
  matchErrors: number;
}

interface HubConfigBuild {
  resources: readonly HubResource[];
  built: ReturnType<typeof buildHubConfig>;
}

export interface FsConfigStoreOptions {
  dir: string;
  defaultNamespace: string;
  compileRegex: CompileRegex;
  log: ScopedLogger;
  onChange: (loaded: LoadedConfig) => void;
  rescanIntervalMs?: number;
}

/** `fs://DIR` → DIR; undefined for other schemes. */
export function fsStoreDir(url: string): string | undefined {
  return url.startsWith("fs://") ? url.slice("fs://".length) : undefined;
}

/**
 * The `fs://DIR` config store: the folder source of host/config/folder_source.ts
 * (each file decoded on its own; a file that stops decoding keeps its last
 * good version, errors logged with file, resource and field path) over the
 * hub's kinds. Documents of other groups or kinds are ignored; resources
 * that conflict across files are left out by buildHubConfig and counted.
 */
export class FsConfigStore {
  private readonly source: FolderSource<readonly HubResource[], HubConfigBuild>;
  private current?: LoadedConfig;

  constructor(private readonly options: FsConfigStoreOptions) {
    const { log } = options;
    this.source = new FolderSource({
      dir: options.dir,
      decodeFile: (file, text) => {
        const warnings: string[] = [];
        const resources = parseDocuments(text, file)
          .filter(isHubDocument)
          .map((doc) => decodeHubDocument(doc, options, warnings));
        for (const w of warnings) log.warn(w);
        log.info(`config file loaded: ${file}`, { resources: resources.length });
        return resources;
      },
      combine: (files) => {
        const resources = files.flatMap((f) => f.value);
        return { resources, built: buildHubConfig(resources, options.defaultNamespace) };
      },
      apply: (build) => {
        for (const p of build.built.problems) log.error(p);
        this.publish(build);
        return true;
      },
      problemsChanged: () => {
        if (this.lastBuild) this.publish(this.lastBuild);
      },
      report: (problem) => log.error(problem),
      ...(options.rescanIntervalMs !== undefined ? { rescanIntervalMs: options.rescanIntervalMs } : {}),
    });
  }

  private lastBuild?: HubConfigBuild;

  get loaded(): LoadedConfig | undefined {
    return this.current;
  }

  /** Resolves once DIR exists; rejects after `timeoutMs` (`--configWaitTimeout`). */
  waitForDir(timeoutMs: number, pollMs = 100): Promise<void> {
    return this.source.waitForDir(timeoutMs, pollMs);
  }

  /** Reads the directory; returns the new configuration when anything changed (also passed to onChange). */
  scan(): LoadedConfig | undefined {
    const before = this.current;
    this.source.scan(this.current === undefined);
    return this.current === before ? undefined : this.current;
  }

  private publish(build: HubConfigBuild): void {
    this.lastBuild = build;
    const problems = this.source.problems;
    this.current = {
      config: build.built.config,
      resources: build.resources,
      errors: [...problems.map((p) => p.error.message), ...build.built.problems],
      matchErrors: problems.filter((p) => p.error.fieldPath.endsWith(".regex")).length,
    };
    this.options.onChange(this.current);
  }

  /** Starts watching (fs.watch, debounced, plus a periodic rescan). */
  watch(): void {
    this.source.watch();
  }

  close(): void {
    this.source.stop();
  }
}
