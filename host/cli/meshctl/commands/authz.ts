import type { Command } from "commander";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { addAdminOptions, adminFrom, outputOption } from "../admin_flags.ts";
import { AuthzCheckError, authzCheck, authzCheckJson, formatAuthzCheck } from "../authz_check.ts";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { ViewError, loadView } from "../mesh_view.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";
import { AdminError, DumpError, podMatchesIdentity, splitPodName } from "../sidecar_admin.ts";
import { DEFAULT_MESH_NAMESPACE } from "../global_flags.ts";
import { runAuthzConvert } from "../authz_convert/run.ts";
import { meshctlLog } from "../log.ts";

interface AuthzCheckFlags {
  file: string[];
  all: boolean;
  admin?: string;
  proxyAdminPort?: string;
  output: "short" | "json";
}

/** A stringSlice flag (pflag): repeatable, each value may list several comma-separated items. */
const collectSlice = (value: string, previous: string[]) => [...previous, ...value.split(",").filter((v) => v.length > 0)];

interface AuthzConvertFlags {
  file: string[];
  service: string[];
  rootNamespace?: string;
  allowNoClusterRbacConfig: boolean;
}

/**
 * `meshctl experimental authz check <pod[.ns]>` (`-f config_dump.json`, or
 * `--admin` for a running sidecar); `meshctl authz` points there (spec 3).
 */
export function registerAuthz(program: Command, experimental: Command, io: MeshctlIo): void {
  program
    .command("authz")
    .description("Moved: use `meshctl experimental authz`")
    .argument("[args...]")
    .allowUnknownOption()
    .action(() => {
      io.stderr.write(
        "meshctl authz: authz commands are experimental: use `meshctl experimental authz check <pod> -f config_dump.json` (or `meshctl x authz check …`)\n",
      );
      io.exitCode = EXIT_BAD_CONFIG;
    });
  const authz = experimental.command("authz").description("Authorization policy commands (experimental)");
  const check = authz
    .command("check")
    .description("Show which AuthorizationPolicy and RequestAuthentication policies apply to a pod, and their rules (under active development)")
    .argument("[pod]", "<pod-name[.namespace]>; with a sidecar or a config dump, defaults to the sidecar's own identity")
    .option(
      "-f, --file <file>",
      "a sidecar /config_dump JSON file, or resource documents (Pod/Deployment and policies; files or directories, repeatable or comma-separated)",
      (value: string, previous: string[]) => [...previous, ...value.split(",").filter((s) => s.length > 0)],
      [] as string[],
    )
    .option("-a, --all", "show every rule in full (sources, operations, conditions) and the JWT rules (issuers, key sets, token locations)", false);
  addAdminOptions(check)
    .addOption(outputOption())
    .action(async (pod: string | undefined, opts: AuthzCheckFlags, command: Command) => {
      io.exitCode = await runAuthzCheck(pod, opts, command, io);
    });
  authz
    .command("convert")
    .description(
      "Convert v1alpha1 RBAC policies (ServiceRole, ServiceRoleBinding, ClusterRbacConfig) to v1beta1 AuthorizationPolicies, offline, best effort. PLEASE ALWAYS REVIEW THE CONVERTED POLICIES BEFORE APPLYING",
    )
    .option("-f, --file <files>", "yaml files (or directories) with the v1alpha1 RBAC policies; repeat or separate with commas", collectSlice, [] as string[])
    .option(
      "-s, --service <files>",
      "yaml files with the Services that map service names to workload selectors (required with -f)",
      collectSlice,
      [] as string[],
    )
    .option("-r, --rootNamespace <namespace>", `root namespace of the mesh, where mesh-wide policies go (default: -i, ${DEFAULT_MESH_NAMESPACE})`)
    .option("--allowNoClusterRbacConfig", "convert even when no ClusterRbacConfig is given (every role as if RBAC were enforced)", false)
    .action((opts: AuthzConvertFlags, command: Command) => {
      const g = globalFlags(command);
      io.exitCode = runAuthzConvert({
        files: opts.file,
        serviceFiles: opts.service,
        rootNamespace: opts.rootNamespace ?? g.meshNamespace,
        allowNoClusterRbacConfig: opts.allowNoClusterRbacConfig,
        namespace: g.namespace,
        stdout: io.stdout,
        stderr: io.stderr,
        stdin: io.stdinText,
        log: meshctlLog(g.logOutputLevel, io.stderr),
      });
    });
}

async function runAuthzCheck(podArg: string | undefined, opts: AuthzCheckFlags, command: Command, io: MeshctlIo): Promise<number> {
  const g = globalFlags(command);
  const admin = adminFrom(opts);
  if (!admin && opts.file.length === 0)
    return needsOrchestrator("experimental authz check", "`-f config_dump.json` or `--admin URL` (a running sidecar)", io.stderr);
  const fail = (message: string, code = EXIT_FAILURE) => {
    io.stderr.write(`Error: meshctl experimental authz check: ${message}\n`);
    return code;
  };
  try {
    const view = await loadView({ files: opts.file.length > 0 ? opts.file : undefined, admin, namespace: g.namespace }, io.stderr);
    let pod = podArg;
    if (pod === undefined) {
      if (!view.sidecar) return fail("a pod is required with resource files (<pod-name[.namespace]>)", EXIT_BAD_CONFIG);
      pod = view.sidecar.id;
    } else if (view.sidecar && admin && !podMatchesIdentity(pod, view.sidecar.id)) {
      return fail(`the sidecar at ${admin} is ${view.sidecar.id}, not ${pod}`);
    }
    const where = splitPodName(pod, g.namespace || "default");
    const report = authzCheck(view, where.pod, where.namespace, g.meshNamespace);
    io.stdout.write(opts.output === "json" ? authzCheckJson(report) : formatAuthzCheck(report, opts.all));
    return EXIT_OK;
  } catch (e) {
    if (e instanceof ViewError) return fail(e.message, e.exitCode);
    if (e instanceof AuthzCheckError || e instanceof AdminError || e instanceof DumpError) return fail(e.message);
    throw e;
  }
}
