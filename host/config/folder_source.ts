import { existsSync, type FSWatcher, readdirSync, readFileSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./errors.ts";

// The one folder-watching configuration source: the sidecar's `--configDir`,
// disco-discovery's `--configDir` and the hub's `fs://DIR` store. Its
// semantics, documented once in docs/sidecar.md, docs/discovery.md and
// docs/hubs.md:
// - every `.yaml`, `.yml` and `.json` file under the folder (recursively;
//   names starting with `.` skipped: editor swap files, the orchestrator's
//   `..data` links) is read, in path order;
// - each file is decoded on its own and taken as a whole: a file that stops
//   decoding keeps its last good version (a file that never decoded
//   contributes nothing), its error is reported once, and the other files'
//   changes still apply; a removed file is removed;
// - the files together must also agree (what the consumer's `combine` checks
//   across files, e.g. a binding naming a spec of another file): a changed
//   file that makes them disagree is held back like a file that does not
//   decode;
// - changes are seen through fs.watch (debounced) and a rescan every second.

/** Periodic rescan on top of fs.watch (which misses events on some file systems). */
export const DEFAULT_RESCAN_INTERVAL_MS = 1000;
const WATCH_DEBOUNCE_MS = 50;
const CONFIG_FILE = /\.(ya?ml|json)$/;

/** A file's last good decoded content. */
export interface FolderFile<T> {
  readonly path: string;
  readonly value: T;
}

/** A file kept out (in whole or at its last good version) and why. */
export interface FileProblem {
  readonly path: string;
  readonly error: ConfigError;
  /** Whether an earlier version of the file is in force. */
  readonly kept: boolean;
}

export interface FolderSourceOptions<T, C> {
  dir: string;
  /** Decodes one file on its own; throws ConfigError naming file, resource and field path. */
  decodeFile(path: string, text: string): T;
  /** Puts the files' good contents together, in path order; throws ConfigError when they disagree. Pure. */
  combine(files: readonly FolderFile<T>[]): C;
  /** Puts a new configuration in force; false when the consumer refuses it (the one in force stays). */
  apply(config: C): boolean;
  /** One line per refusal (a file kept out, files that disagree), naming the file, resource and field path. */
  report(problem: string): void;
  /** Called when the set of files kept out changed without the configuration changing. */
  problemsChanged?(problems: readonly FileProblem[]): void;
  rescanIntervalMs?: number;
}

interface FileState<T> {
  text: string;
  /** The last version of the file that decoded (undefined: never). */
  good?: { value: T };
  error?: ConfigError;
  /** The current text decoded on its own but held back because the files then disagreed: retried at each change. */
  pending?: { value: T };
}

/** Every configuration file under `dir`, recursively, sorted; names starting with `.` skipped. */
export function listConfigFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...listConfigFiles(path));
    else if (st?.isFile() && CONFIG_FILE.test(name)) out.push(path);
  }
  return out.sort();
}

/** The report of a file kept out: the error names its own file, or (files that disagree) the other file that names this one's resources. */
function keptOut(path: string, error: ConfigError, kept: boolean): string {
  const which = error.origin.file === path ? "its" : `${path}'s`;
  return `${error.message}; ${kept ? `keeping ${which} last good version` : `keeping the last good configuration (${error.origin.file === path ? "the file" : path} is left out)`}`;
}

/** A watched configuration folder with per-file last-good semantics (see above). */
export class FolderSource<T, C> {
  private readonly files = new Map<string, FileState<T>>();
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;

  constructor(private readonly options: FolderSourceOptions<T, C>) {}

  /** The files currently kept out (in whole or at their last good version), in path order. */
  get problems(): FileProblem[] {
    return [...this.files]
      .filter(([, s]) => s.error)
      .map(([path, s]) => ({ path, error: s.error!, kept: s.good !== undefined }))
      .sort((a, b) => (a.path < b.path ? -1 : 1));
  }

  /** Resolves once the folder exists; rejects after `timeoutMs`. */
  async waitForDir(timeoutMs: number, pollMs = 100): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(this.options.dir)) {
      if (Date.now() >= deadline) throw new Error(`config folder ${this.options.dir} did not appear within the config wait timeout`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /** Reads the folder and starts watching it; returns whether the first configuration was applied. */
  start(): boolean {
    const applied = this.scan(true);
    this.watch();
    return applied;
  }

  /**
   * Reads the folder; applies the configuration when a file's good content
   * changed (or always, with `force`: SIGHUP). Returns whether a configuration
   * was applied.
   */
  scan(force = false): boolean {
    const { dir, report } = this.options;
    let paths: string[];
    try {
      paths = listConfigFiles(dir);
    } catch (e) {
      report(`config folder ${dir}: ${(e as Error).message}; keeping the current configuration`);
      return false;
    }
    let contentChanged = false;
    let problemsChanged = false;
    for (const [path, state] of [...this.files]) {
      if (paths.includes(path)) continue;
      this.files.delete(path);
      if (state.good) contentChanged = true;
      if (state.error) problemsChanged = true;
    }
    const candidates: Array<{ path: string; text: string; value: T }> = [];
    for (const path of paths) {
      let text: string;
      try {
        text = readFileSync(path, "utf8");
      } catch {
        continue; // removed between listing and reading; the next scan sees it gone
      }
      const previous = this.files.get(path);
      if (previous?.text === text) continue;
      try {
        candidates.push({ path, text, value: this.options.decodeFile(path, text) });
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        if (this.hold(path, text, e)) problemsChanged = true;
      }
    }

    // Files held back for disagreeing are retried whenever something changed (the other side may have followed).
    if (candidates.length > 0 || contentChanged) {
      for (const [path, state] of this.files)
        if (state.pending && !candidates.some((c) => c.path === path)) candidates.push({ path, text: state.text, value: state.pending.value });
      candidates.sort((a, b) => (a.path < b.path ? -1 : 1));
    }

    // The changed files are taken together when the folder then agrees, else one by one.
    let combined: { config: C } | undefined;
    const tryWith = (accepted: typeof candidates): boolean => {
      try {
        combined = { config: this.options.combine(this.goodFiles(accepted)) };
        return true;
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        if (accepted.length === 1 && this.hold(accepted[0].path, accepted[0].text, e, { value: accepted[0].value })) problemsChanged = true;
        return false;
      }
    };
    const accept = ({ path, text, value }: (typeof candidates)[number]) => {
      if (this.files.get(path)?.error) problemsChanged = true;
      this.files.set(path, { text, good: { value } });
      contentChanged = true;
    };
    if (candidates.length > 0) {
      if (candidates.length > 1 && tryWith(candidates)) candidates.forEach(accept);
      else for (const c of candidates) if (tryWith([c])) accept(c);
    }

    if (!contentChanged && !force) {
      if (problemsChanged) this.options.problemsChanged?.(this.problems);
      return false;
    }
    if (!combined || force) {
      try {
        combined = { config: this.options.combine(this.goodFiles([])) };
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        report(`${e.message}; keeping the last good configuration`);
        if (problemsChanged) this.options.problemsChanged?.(this.problems);
        return false;
      }
    }
    const applied = this.options.apply(combined.config);
    if (!applied && problemsChanged) this.options.problemsChanged?.(this.problems);
    return applied;
  }

  /**
   * A file that does not decode, or makes the folder disagree (`pending`: its
   * text decoded on its own): its last good version stays. Reported once per
   * text and error; returns whether that is new.
   */
  private hold(path: string, text: string, error: ConfigError, pending?: { value: T }): boolean {
    const previous = this.files.get(path);
    this.files.set(path, { text, good: previous?.good, error, ...(pending ? { pending } : {}) });
    if (previous?.text === text && previous.error?.message === error.message) return false;
    this.options.report(keptOut(path, error, previous?.good !== undefined));
    return true;
  }

  /** The good contents in path order, with `changed` files at their new content. */
  private goodFiles(changed: ReadonlyArray<{ path: string; value: T }>): FolderFile<T>[] {
    const values = new Map<string, T>();
    for (const [path, state] of this.files) if (state.good) values.set(path, state.good.value);
    for (const c of changed) values.set(c.path, c.value);
    return [...values].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, value]) => ({ path, value }));
  }

  /** Watches the folder: fs.watch (debounced) plus a periodic rescan. */
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

  stop(): void {
    this.watcher?.close();
    clearInterval(this.timer);
    clearTimeout(this.debounce);
  }
}
