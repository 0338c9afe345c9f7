import { FIXTURES, type Run } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";

/** Runs `meshctl analyze` (in-process) in test/cli/fixtures with a controlled environment (TERM, NO_COLOR unset unless given). */
export function analyze(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  const env = { ...process.env, ...options.env };
  if (!options.env?.TERM) delete env.TERM;
  if (!options.env?.NO_COLOR) delete env.NO_COLOR;
  return meshctlInProcess(["analyze", ...args], { cwd: FIXTURES, env, input: options.input });
}

/** The codes of a `-o json` run, in output order. */
export function codes(run: Run): string[] {
  return (JSON.parse(run.stdout) as Array<{ code: string }>).map((m) => m.code);
}

export const OFFLINE = "--use-kube=false";
