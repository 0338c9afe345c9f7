import { spawnSync } from "node:child_process";
import { FIXTURES, MESHCTL, type Run } from "./cli_golden_support.ts";

/** Runs the built meshctl in test/cli/fixtures with a controlled environment (TERM, NO_COLOR unset unless given). */
export function analyze(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Run {
  const env = { ...process.env, ...options.env };
  if (!options.env?.TERM) delete env.TERM;
  if (!options.env?.NO_COLOR) delete env.NO_COLOR;
  const run = spawnSync(process.execPath, [MESHCTL, "analyze", ...args], { cwd: FIXTURES, env, input: options.input, encoding: "utf8" });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The codes of a `-o json` run, in output order. */
export function codes(run: Run): string[] {
  return (JSON.parse(run.stdout) as Array<{ code: string }>).map((m) => m.code);
}

export const OFFLINE = "--use-kube=false";
