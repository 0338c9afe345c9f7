import type { Command } from "commander";
import { runHubEval } from "../hub_eval.ts";
import type { MeshctlIo } from "../io.ts";

/** `meshctl experimental hub-eval` (alias `x hub-eval`). */
export function registerHubEval(experimental: Command, io: MeshctlIo): void {
  experimental
    .command("hub-eval")
    .description(
      "Evaluate requests against hub client configuration offline: reads JSON request lines on stdin, prints one JSON line per request with the attributes, API spec match, API key and quotas",
    )
    .requiredOption(
      "-f, --filename <file...>",
      "YAML or JSON files with HTTPAPISpec, HTTPAPISpecBinding, QuotaSpec, QuotaSpecBinding and HttpClientConfig documents",
    )
    .action(async (opts: { filename: string[] }) => {
      io.exitCode = await runHubEval({ files: opts.filename, input: io.stdin(), output: io.stdout, errors: io.stderr });
    });
}
