import type { Command } from "commander";
import { EXIT_BAD_CONFIG } from "../../../daemon/exit_codes.ts";
import { runOrchInject } from "../orch_inject.ts";
import type { MeshctlIo } from "../io.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";
import { INJECTABLE_KINDS } from "../../../inject/workloads.ts";

interface OrchInjectFlags {
  filename: string;
  output: string;
  injectConfigFile?: string;
  injectConfigMapName: string;
  meshConfigFile?: string;
  meshConfigMapName: string;
  valuesFile?: string;
  revision?: string;
}

/** `meshctl orch-inject` (upstream `kube-inject`): offline sidecar injection. */
export function registerOrchInject(program: Command, _experimental: Command, io: MeshctlIo): void {
  program
    .command("orch-inject")
    .alias("kube-inject")
    .description(
      `Inject the sidecar into workload documents (${INJECTABLE_KINDS.join(", ")}); other documents pass through unchanged. Works on files only: without --injectConfigFile/--meshConfigFile/--valuesFile the built-in defaults are used`,
    )
    .requiredOption("-f, --filename <file>", "input YAML or JSON (`-` for stdin)")
    .option("-o, --output <file>", "output file (`-` for stdout)", "-")
    .option("--injectConfigFile <file>", "injection settings (docs/meshctl.md#orch-inject); cannot be used with --injectConfigMapName")
    .option("--injectConfigMapName <name>", "ConfigMap with the injection settings (needs an orchestrator API)", "mesh-sidecar-injector")
    .option("--meshConfigFile <file>", "mesh config: defaultConfig ports, image, hub address; rootNamespace")
    .option("--meshConfigMapName <name>", "ConfigMap with the mesh config (needs an orchestrator API)", "mesh")
    .option("--valuesFile <file>", "values: global.hub, global.tag, global.caAddress, global.proxy.image/resources/statusPort/logLevel and capture defaults")
    .option(
      "-r, --revision <revision>",
      "control plane revision: the sidecar's control plane is disco-discovery-<revision> unless the mesh config's defaultConfig.discoveryAddress says otherwise",
    )
    .action((opts: OrchInjectFlags, cmd: Command) => {
      // The ConfigMaps live in a cluster; this meshctl has no orchestrator API, so naming one is an error, not a silent default.
      const fromCli = (flag: string) => cmd.getOptionValueSource(flag) === "cli";
      if (fromCli("injectConfigMapName") && opts.injectConfigFile !== undefined) {
        return fail(io, "--injectConfigFile cannot be used with --injectConfigMapName");
      }
      for (const [mapFlag, fileFlag] of [
        ["injectConfigMapName", "injectConfigFile"],
        ["meshConfigMapName", "meshConfigFile"],
      ] as const) {
        if (fromCli(mapFlag) && opts[fileFlag] === undefined) {
          io.exitCode = needsOrchestrator(`orch-inject --${mapFlag}`, `--${fileFlag}`, io.stderr);
          return;
        }
      }
      if (opts.revision !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(opts.revision))
        return fail(io, `--revision: expected a revision name (a DNS-1123 label: lower-case letters, digits and '-'), got ${JSON.stringify(opts.revision)}`);
      io.exitCode = runOrchInject({ ...opts, stdout: io.stdout, stderr: io.stderr, stdin: io.stdinText });
    });
}

function fail(io: MeshctlIo, message: string): void {
  io.stderr.write(`error: ${message}\n`);
  io.exitCode = EXIT_BAD_CONFIG;
}
