import type { Command } from "commander";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { runValidate } from "../validate.ts";

/** `meshctl validate -f FILE… [-x]` (deprecated in favour of `analyze`). */
export function registerValidate(program: Command, _experimental: Command, io: MeshctlIo): void {
  program
    .command("validate")
    .description("Validate mesh policy and rules files (deprecated: use `meshctl analyze`)")
    .requiredOption(
      "-f, --filename <files...>",
      "YAML or JSON files or directories; - reads stdin; repeatable or comma-separated",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(",").filter((s) => s.length > 0)],
    )
    .option("-x, --referential", "also check references between resources (bindings to specs, virtual services to gateways)", false)
    .action((opts: { filename: string[]; referential: boolean }, command: Command) => {
      io.exitCode = runValidate({
        files: opts.filename,
        referential: opts.referential,
        namespace: globalFlags(command).namespace,
        output: io.stdout,
        errors: io.stderr,
        stdin: io.stdinText,
      });
    });
}
