import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Run, meshctlInProcess } from "./in_process.ts";
import { tempDir } from "../support/processes.ts";

export type { Run };

export const MESHCTL = join(import.meta.dirname, "..", "..", "build", "out", "meshctl.mjs");
export const FIXTURES = join(import.meta.dirname, "fixtures");

/** Runs meshctl (in-process: in_process.ts) in the fixtures folder, so messages name fixture files by their short names. */
export function meshctl(args: string[], input?: string): Promise<Run> {
  return meshctlInProcess(args, { cwd: FIXTURES, input });
}

export function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), "utf8");
}

/** Compares with a golden file; `UPDATE_GOLDEN=1` rewrites it instead (review the diff). */
export function assertGolden(actual: string, name: string): void {
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(join(FIXTURES, name), actual);
  assert.equal(actual, fixture(name), `output differs from fixtures/${name} (UPDATE_GOLDEN=1 rewrites it)`);
}

/** Writes text to a fresh temp file and returns its path. */
export function tempFile(text: string, name = "input.yaml"): string {
  const file = join(tempDir("meshctl-cli-"), name);
  writeFileSync(file, text);
  return file;
}
