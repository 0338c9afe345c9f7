import type { Command } from "commander";
import { runConvertIngress } from "../convert_ingress/run.ts";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";

/** A stringSlice flag (pflag): repeatable, each value may list several comma-separated items. */
const collectSlice = (value: string, previous: string[]) => [...previous, ...value.split(",").filter((v) => v.length > 0)];

/** `meshctl convert-ingress` and its alias `meshctl experimental convert-ingress` (spec 3, graduated). */
export function registerConvertIngress(program: Command, experimental: Command, io: MeshctlIo): void {
  for (const parent of [program, experimental]) {
    parent
      .command("convert-ingress")
      .description(
        "Convert Ingress resources into a Gateway and VirtualServices on a best-effort basis; warnings on stderr where the conversion is imperfect. Input must be Ingress documents",
      )
      .option("-f, --filenames <files>", "input files (`-` for stdin); repeat or separate with commas", collectSlice, [])
      .option("-o, --output <file>", "output filename (`-` for stdout)", "-")
      .action((opts: { filenames: string[]; output: string }, cmd: Command) => {
        // Global flags of spec 3: -i/--meshNamespace places the Gateway, -n/--namespace is the Ingresses' default namespace.
        const globals = globalFlags(cmd);
        io.exitCode = runConvertIngress({
          filenames: opts.filenames,
          output: opts.output,
          gatewayNamespace: globals.meshNamespace,
          namespace: globals.namespace,
          stdout: io.stdout,
          stderr: io.stderr,
          stdin: io.stdinText,
        });
      });
  }
}
