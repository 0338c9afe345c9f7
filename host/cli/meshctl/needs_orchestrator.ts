import type { Writable } from "node:stream";
import { EXIT_UNAVAILABLE } from "../../daemon/exit_codes.ts";

/**
 * For commands (or modes such as `analyze --use-kube`, `version --remote`)
 * that need a live orchestrator API or control plane: this build of meshctl
 * works on files and on running sidecars only, so it says so plainly and
 * returns EXIT_UNAVAILABLE (69) for the command to use.
 *
 * @example io.exitCode = needsOrchestrator("proxy-status", "`meshctl proxy-status --file config_dump.json`", io.stderr);
 */
export function needsOrchestrator(command: string, offline: string, errors: Writable): number {
  errors.write(`meshctl ${command}: this command needs an orchestrator API, which is not available here; use ${offline} offline instead\n`);
  return EXIT_UNAVAILABLE;
}

/**
 * For commands that cannot work at all without an orchestrator API (spec 3:
 * install, upgrade, dashboards, registration …): one line saying what the
 * command would need, exit EXIT_UNAVAILABLE (69); nothing is done.
 *
 * @example io.exitCode = unavailableCommand("manifest apply", "to apply the install manifests to a cluster", io.stderr);
 */
export function unavailableCommand(command: string, would: string, errors: Writable): number {
  errors.write(
    `meshctl ${command}: needs an orchestrator API ${would}; this build works on files and running sidecars only, so nothing was done (docs/meshctl.md#commands-that-need-an-orchestrator)\n`,
  );
  return EXIT_UNAVAILABLE;
}

/**
 * For the global flags that select an orchestrator (`--context`, `-c/--orchconfig`):
 * given with a value, they would ask for a cluster this build cannot reach, so
 * the command says so and does nothing (exit EXIT_UNAVAILABLE, 69), as the
 * orchestrator-bound commands do, rather than ignore them.
 */
export function orchestratorFlagGiven(command: string, flag: string, errors: Writable): number {
  errors.write(
    `meshctl ${command}: ${flag}: needs an orchestrator API to read that cluster's configuration; this build works on files and running sidecars only, so nothing was done (docs/meshctl.md#global-flags)\n`,
  );
  return EXIT_UNAVAILABLE;
}
