import { closeSync, fstatSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";

/** `--log_rotate*` flags. Sizes are in megabytes; 0 means no limit for age, backups and size. */
export interface RotateOptions {
  path: string;
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMb: number;
}

const MB = 1024 * 1024;
const DAY_MS = 86_400_000;

/**
 * A log file that is renamed to `<name>-<UTC time>.<ext>` once it would grow
 * beyond maxSizeMb (the naming of the lumberjack logger upstream daemons used),
 * keeping at most maxBackups backups younger than maxAgeDays.
 */
export class RotatingFile {
  private fd: number;
  private size: number;

  constructor(
    private readonly options: RotateOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.fd = openSync(options.path, "a");
    this.size = fstatSync(this.fd).size;
  }

  write(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.options.maxSizeMb > 0 && this.size > 0 && this.size + bytes > this.options.maxSizeMb * MB) this.rotate();
    writeSync(this.fd, line);
    this.size += bytes;
  }

  close(): void {
    closeSync(this.fd);
  }

  private rotate(): void {
    closeSync(this.fd);
    const { path } = this.options;
    const ext = extname(path);
    const stem = basename(path, ext);
    const stamp = new Date(this.now()).toISOString().replace(/:/g, "-").replace(/Z$/, "");
    renameSync(path, join(dirname(path), `${stem}-${stamp}${ext}`));
    this.fd = openSync(path, "a");
    this.size = 0;
    this.prune(stem, ext);
  }

  private prune(stem: string, ext: string): void {
    const dir = dirname(this.options.path);
    const backups = readdirSync(dir)
      .filter((f) => f.startsWith(`${stem}-`) && f.endsWith(ext))
      .map((f) => ({ file: join(dir, f), mtime: statSync(join(dir, f)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    backups.forEach((b, i) => {
      const tooMany = this.options.maxBackups > 0 && i >= this.options.maxBackups;
      const tooOld = this.options.maxAgeDays > 0 && this.now() - b.mtime > this.options.maxAgeDays * DAY_MS;
      if (tooMany || tooOld) unlinkSync(b.file);
    });
  }
}
