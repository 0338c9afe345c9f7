import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Stack frames of the bundled programs (build/out/*.mjs) named by their
 * TypeScript sources: each bundle has a linked source map (build/build.mjs),
 * read here on first use. Node's own source-map support
 * (`--enable-source-maps`) would miss the modules a program loaded before
 * the logger turned it on, and would apply to every error of the process.
 */
const maps = new Map<string, SourceMap | null>();

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    map = null;
    try {
      if (existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")));
    } catch {
      map = null; // an unreadable map leaves the bundle's positions
    }
    maps.set(file, map);
  }
  return map;
}

const FRAME = /^(\s*at (?:.*? \()?)((?:file:\/\/)?\/[^():]+):(\d+):(\d+)(\)?)$/;

/** The frame with its bundle position replaced by the source's (`/repo/host/x.ts:12:3`); other frames unchanged. */
export function sourceFrame(frame: string): string {
  const m = FRAME.exec(frame);
  if (!m || !/\.m?js$/.test(m[2])) return frame;
  const file = m[2].startsWith("file://") ? fileURLToPath(m[2]) : m[2];
  const map = mapOf(file);
  const entry = map?.findEntry(Number(m[3]) - 1, Number(m[4]) - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
  if (!entry?.originalSource || entry.originalLine === undefined) return frame;
  const source = entry.originalSource.startsWith("file://") ? fileURLToPath(entry.originalSource) : resolve(dirname(file), entry.originalSource);
  return `${m[1]}${source}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}${m[5]}`;
}

/** `host/proxy/sidecar.ts:311`: the repository-relative file and line of a (source-mapped) frame. */
export function sourceLocation(frame: string): string | undefined {
  const m = /\(?((?:file:\/\/)?[^()\s]+):(\d+):\d+\)?$/.exec(frame.trim());
  if (!m) return undefined;
  const path = m[1].replace(/^file:\/\//, "");
  const host = path.lastIndexOf("/host/");
  return `${host >= 0 ? path.slice(host + 1) : path.split("/").slice(-2).join("/")}:${m[2]}`;
}
