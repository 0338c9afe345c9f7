import { Command } from "commander";
import { EXIT_BAD_CONFIG } from "../cli/exit_codes.ts";
import { runHubEval } from "../cli/meshctl/hub_eval.ts";

const program = new Command("meshctl")
  .description("Operate the mesh: validate and debug configuration, inspect sidecars")
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT_BAD_CONFIG));

const experimental = program.command("experimental").alias("x").description("Experimental commands that may be modified or deprecated");

experimental
  .command("hub-eval")
  .description(
    "Evaluate requests against hub client configuration offline: reads JSON request lines on stdin, prints one JSON line per request with the attributes, API spec match, API key and quotas",
  )
  .requiredOption("-f, --filename <file...>", "YAML or JSON files with HTTPAPISpec, HTTPAPISpecBinding, QuotaSpec, QuotaSpecBinding and HttpClientConfig documents")
  .action(async (opts: { filename: string[] }) => {
    process.exitCode = await runHubEval({ files: opts.filename, input: process.stdin, output: process.stdout, errors: process.stderr });
  });

await program.parseAsync(process.argv);
