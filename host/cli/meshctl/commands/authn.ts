import type { Command } from "commander";
import { EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { addAdminOptions, adminFrom, collectFiles, outputOption } from "../admin_flags.ts";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { ViewError, loadView } from "../mesh_view.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";
import { AdminError, DumpError, podMatchesIdentity, splitPodName } from "../sidecar_admin.ts";
import { TlsCheckError, formatTlsCheck, tlsCheck, tlsCheckJson } from "../tls_check.ts";

interface TlsCheckFlags {
  filename?: string[];
  admin?: string;
  proxyAdminPort?: string;
  output: "short" | "json";
}

/** `meshctl authn tls-check [<pod[.ns]>] [<service>]` against files (`-f`) or a running sidecar (`--admin`). */
export function registerAuthn(program: Command, _experimental: Command, io: MeshctlIo): void {
  const authn = program.command("authn").description("Authentication policy commands");
  const check = authn
    .command("tls-check")
    .description(
      "Check which PeerAuthentication and DestinationRule apply to each service port of a pod, and whether client and server TLS settings agree (OK / CONFLICT)",
    )
    .argument("[pod]", "<pod-name[.namespace]>; without it (and with -f) every service of the files")
    .argument("[service]", "only this destination service (name, name.namespace or FQDN)")
    .option(
      "-f, --filename <file>",
      "orchestrator documents (Pod, Deployment, Service) and PeerAuthentication/DestinationRule files or directories; repeatable or comma-separated",
      collectFiles,
    );
  addAdminOptions(check)
    .addOption(outputOption())
    .action(async (pod: string | undefined, service: string | undefined, opts: TlsCheckFlags, command: Command) => {
      io.exitCode = await runTlsCheck(pod, service, opts, command, io);
    });
}

async function runTlsCheck(podArg: string | undefined, service: string | undefined, opts: TlsCheckFlags, command: Command, io: MeshctlIo): Promise<number> {
  const g = globalFlags(command);
  const admin = adminFrom(opts);
  if (!admin && !opts.filename?.length)
    return needsOrchestrator("authn tls-check", "`-f FILE…` (Pod/Service and policy documents) or `--admin URL` (a running sidecar)", io.stderr);
  try {
    const view = await loadView({ files: opts.filename, admin, namespace: g.namespace }, io.stderr);
    let pod = podArg;
    if (view.sidecar) {
      if (pod !== undefined && !podMatchesIdentity(pod, view.sidecar.id)) {
        io.stderr.write(`Error: meshctl authn tls-check: the sidecar at ${admin} is ${view.sidecar.id}, not ${pod}\n`);
        return EXIT_FAILURE;
      }
      pod = view.sidecar.id;
    }
    const where = pod === undefined ? undefined : splitPodName(pod, g.namespace || "default");
    const report = tlsCheck(view, { pod: where?.pod, namespace: where?.namespace ?? "", service, rootNamespace: g.meshNamespace });
    io.stdout.write(opts.output === "json" ? tlsCheckJson(report) : formatTlsCheck(report));
    return EXIT_OK;
  } catch (e) {
    if (e instanceof ViewError) {
      io.stderr.write(`Error: meshctl authn tls-check: ${e.message}\n`);
      return e.exitCode;
    }
    if (e instanceof TlsCheckError || e instanceof AdminError || e instanceof DumpError) {
      io.stderr.write(`Error: meshctl authn tls-check: ${e.message}\n`);
      return EXIT_FAILURE;
    }
    throw e;
  }
}
