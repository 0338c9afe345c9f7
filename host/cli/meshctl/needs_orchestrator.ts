import type { Writable } from "node:stream";
import { EXIT_FAILURE } from "../exit_codes.ts";

/**
 * For commands (or modes such as `analyze --use-kube`, `version --remote`)
 * that need a live orchestrator API or control plane: this build of meshctl
 * works on files and on running sidecars only, so it says so plainly and
 * returns a non-zero exit code for the command to use.
 *
 * @example process.exitCode = needsOrchestrator("proxy-status", "`meshctl proxy-status --file config_dump.json`");
 */
export function needsOrchestrator(command: string, offline: string, errors: Writable = process.stderr): number {
  errors.write(`meshctl ${command}: this command needs an orchestrator API, which is not available here; use ${offline} offline instead\n`);
  return EXIT_FAILURE;
}
