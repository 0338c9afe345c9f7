import { existsSync, readdirSync, readFileSync, statSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config/errors.ts";
import { parseDocuments } from "../config/documents.ts";
import { decodeHubDocument, isHubDocument, type HubResource } from "../config/resources/hub_rules.ts";
import type { ScopedLogger } from "../telemetry/logger.ts";
import { buildHubConfig, type HubConfig } from "./hub_config.ts";
import type { CompileRegex } from "../regex/engine.ts";

/** Periodic rescan on top of fs.watch (which misses events on some file systems). */
export const DEFAULT_RESCAN_INTERVAL_MS = 1000;
const WATCH_DEBOUNCE_MS = 50;
const CONFIG_EXTENSIONS = [".yaml", ".yml", ".json"];

/** The configuration in force and the problems that kept parts of the files out. */
export interface LoadedConfig {
  config: HubConfig;
  resources: readonly HubResource[];
  /** One line per bad file or left-out resource: file, resource, field path, what was expected. */
  errors: readonly string[];
  /** How many of the bad files failed on a StringMatch regex. */
  matchErrors: number;
}

interface FileState {
  text: string;
  /** The last version of the file that decoded without errors (undefined: never). */
  good?: readonly HubResource[];
  error?: string;
  matchError: boolean;
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

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue; // editor swap files, orchestrator ..data links
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...listFiles(path));
    else if (st?.isFile() && CONFIG_EXTENSIONS.some((e) => name.endsWith(e))) out.push(path);
  }
  return out.sort();
}

/**
 * The `fs://DIR` config store: every .yaml/.yml/.json file under DIR
 * (recursively, dot files skipped), watched. Each file is taken as a whole:
 * when a changed file has any error, its last good version stays in force
 * (or nothing, for a file that never decoded) and the error is logged with
 * file, resource and field path. Documents of other groups or kinds are ignored.
 */
export class FsConfigStore {
  private readonly files = new Map<string, FileState>();
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private current?: LoadedConfig;

  constructor(private readonly options: FsConfigStoreOptions) {}

  get loaded(): LoadedConfig | undefined {
    return this.current;
  }

  /** Resolves once DIR exists; rejects after `timeoutMs` (`--configWaitTimeout`). */
  async waitForDir(timeoutMs: number, pollMs = 100): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(this.options.dir)) {
      if (Date.now() >= deadline) throw new Error(`config store ${this.options.dir} did not appear within the config wait timeout`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /** Reads the directory; returns the new configuration when anything changed (also passed to onChange). */
  scan(): LoadedConfig | undefined {
    const { dir, log } = this.options;
    let paths: string[];
    try {
      paths = listFiles(dir);
    } catch (e) {
      log.error(`config store ${dir}: ${(e as Error).message}; keeping the current configuration`);
      return undefined;
    }
    let changed = this.current === undefined;
    for (const file of [...this.files.keys()]) {
      if (!paths.includes(file)) {
        this.files.delete(file);
        log.info(`config file removed: ${file}`);
        changed = true;
      }
    }
    for (const file of paths) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue; // removed between listing and reading; the next scan sees it gone
      }
      const previous = this.files.get(file);
      if (previous?.text === text) continue;
      changed = true;
      this.files.set(file, this.decodeFile(file, text, previous));
    }
    if (!changed) return undefined;
    return this.publish();
  }

  private decodeFile(file: string, text: string, previous: FileState | undefined): FileState {
    const { log } = this.options;
    const warnings: string[] = [];
    try {
      const resources = parseDocuments(text, file)
        .filter(isHubDocument)
        .map((doc) => decodeHubDocument(doc, this.options, warnings));
      for (const w of warnings) log.warn(w);
      log.info(`config file loaded: ${file}`, { resources: resources.length });
      return { text, good: resources, matchError: false };
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const kept = previous?.good ? "keeping its last good version" : "the file is ignored";
      log.error(`${e.message}; ${kept}`);
      return { text, good: previous?.good, error: e.message, matchError: e.fieldPath.endsWith(".regex") };
    }
  }

  private publish(): LoadedConfig {
    const resources: HubResource[] = [];
    const errors: string[] = [];
    let matchErrors = 0;
    for (const [, state] of [...this.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (state.good) resources.push(...state.good);
      if (state.error) errors.push(state.error);
      if (state.matchError) matchErrors++;
    }
    const built = buildHubConfig(resources, this.options.defaultNamespace);
    for (const p of built.problems) this.options.log.error(p);
    errors.push(...built.problems);
    this.current = { config: built.config, resources, errors, matchErrors };
    this.options.onChange(this.current);
    return this.current;
  }

  /** Starts watching (fs.watch, debounced, plus a periodic rescan). */
  watch(): void {
    const rescan = () => {
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => this.scan(), WATCH_DEBOUNCE_MS);
    };
    try {
      this.watcher = watch(this.options.dir, { recursive: true }, rescan);
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // recursive watching unsupported here: the periodic rescan still applies changes
    }
    this.timer = setInterval(() => this.scan(), this.options.rescanIntervalMs ?? DEFAULT_RESCAN_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    this.watcher?.close();
    clearInterval(this.timer);
    clearTimeout(this.debounce);
  }
}
