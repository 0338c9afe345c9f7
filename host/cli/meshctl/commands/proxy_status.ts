import { type Command, Option } from "commander";
import { EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { outputOption } from "../admin_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";
import { formatProxyStatus, proxyStatus, proxyStatusJson, selectPods } from "../proxy_status.ts";
import { parseAdminTarget } from "../sidecar_admin.ts";

/** What `--sds` adds: there are no secrets to compare. */
export const NO_SDS = "SDS: the sidecars hold no certificates yet and there are no node agents: nothing to compare";

interface ProxyStatusFlags {
  admin: string[];
  output: "short" | "json";
  sds: boolean;
  sdsJson: boolean;
}

/** `meshctl proxy-status [<pod[.ns]>…] --admin URL…` (alias `ps`). */
export function registerProxyStatus(program: Command, _experimental: Command, io: MeshctlIo): void {
  program
    .command("proxy-status")
    .alias("ps")
    .description(
      "Show whether each sidecar it is told about (--admin) has a configuration applied, with a summary of it; no control plane here, so no xDS sync",
    )
    .argument("[pods...]", "only these <pod-name[.namespace]> (matched against each sidecar's identity)")
    .addOption(
      new Option("--admin <url>", "admin address of a sidecar (http://host:port, host:port or a port on 127.0.0.1); repeatable")
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), parseAdminTarget(value)])
        .default([]),
    )
    .addOption(outputOption())
    .option("-s, --sds", "compare active secrets with node agents (experimental)", false)
    .option("--sds-json", "the SDS comparison as JSON", false)
    .action(async (pods: string[], opts: ProxyStatusFlags) => {
      io.exitCode = await runProxyStatus(pods, opts, io);
    });
}

async function runProxyStatus(pods: string[], opts: ProxyStatusFlags, io: MeshctlIo): Promise<number> {
  if (opts.admin.length === 0) return needsOrchestrator("proxy-status", "`--admin URL` for each sidecar (repeatable)", io.stderr);
  const all = await proxyStatus(opts.admin);
  const { rows, missing } = selectPods(all, pods);
  io.stdout.write(opts.output === "json" ? proxyStatusJson(rows) : formatProxyStatus(rows));
  if (opts.sds || opts.sdsJson) io.stdout.write(opts.sdsJson ? `${JSON.stringify({ sds: [], note: NO_SDS }, null, 2)}\n` : `${NO_SDS}\n`);
  for (const p of missing) io.stderr.write(`Error: meshctl proxy-status: no sidecar among --admin is ${p}\n`);
  return missing.length > 0 || rows.some((r) => r.status !== "SYNCED") ? EXIT_FAILURE : EXIT_OK;
}
