import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { meshctlInProcess } from "./in_process.ts";
import { tempDir } from "../support/processes.ts";

/** Writes YAML text to a fresh temp file and returns its path. */
export function configFile(yaml: string, name = "config.yaml"): string {
  const dir = tempDir("hub-eval-");
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

export interface HubEvalRun {
  status: number | null;
  lines: Array<Record<string, any>>;
  stderr: string;
}

/** Runs `meshctl x hub-eval` (in-process) with request lines on stdin. */
export async function hubEval(files: string[], requests: Array<object | string>): Promise<HubEvalRun> {
  const input = requests.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n");
  const run = await meshctlInProcess(["x", "hub-eval", ...files.flatMap((f) => ["-f", f])], { input });
  const lines = run.stdout
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
  return { status: run.status, lines, stderr: run.stderr };
}

export const T0 = "2026-11-22T10:00:00Z";
