import type { Command } from "commander";
import { EXIT_BAD_CONFIG } from "../../../daemon/exit_codes.ts";
import type { MeshctlIo } from "../io.ts";
import { DEFAULT_PARALLEL_SCENARIOS, runSimulate } from "../simulate/run.ts";

/** `meshctl experimental simulate -f FILE` (alias `x simulate`; issue 6 item 6). */
export function registerSimulate(experimental: Command, io: MeshctlIo): void {
  experimental
    .command("simulate")
    .description(
      "Run security scenarios on loopback with the real CA, sidecars and echo apps, certificates and signed tokens; prints one JSON line per scenario with the outcome, what the client sent and what the destination received",
    )
    .requiredOption("-f, --file <file>", 'a scenario, or {"scenarios": [...]}, as JSON or YAML (`-` for stdin)')
    .option("--parallel <n>", "scenarios run at the same time", String(DEFAULT_PARALLEL_SCENARIOS))
    .option("--keep", "keep the temporary configuration directories (their path is printed on stderr)", false)
    .action(async (opts: { file: string; parallel: string; keep: boolean }) => {
      const parallel = Number(opts.parallel);
      if (!Number.isInteger(parallel) || parallel < 1) {
        io.stderr.write(`Error: meshctl x simulate: --parallel: expected a positive integer, got ${JSON.stringify(opts.parallel)}\n`);
        io.exitCode = EXIT_BAD_CONFIG;
        return;
      }
      io.exitCode = await runSimulate({ file: opts.file, parallel, keep: opts.keep, output: io.stdout, errors: io.stderr, stdin: io.stdinText, env: io.env });
    });
}
