import { type Command, Option } from "commander";
import { EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { outputOption } from "../admin_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";
import { formatProxyStatus, proxyStatus, proxyStatusJson, selectPods } from "../proxy_status.ts";
import { parseAdminTarget } from "../sidecar_admin.ts";
import { globalFlags } from "../global_flags.ts";
import { debugAddress } from "./debug_address.ts";
import { DebugPortError, debugJson, fetchSyncz, formatProxyDiff, formatProxySyncs, matchesPod, proxySyncs } from "../control_plane_status.ts";

/** What `--sds` adds: there are no secrets to compare. */
export const NO_SDS = "SDS: the sidecars hold no certificates yet and there are no node agents: nothing to compare";

interface ProxyStatusFlags {
  admin: string[];
  debugAddress?: Array<{ host: string; port: number }>;
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
      "Show the xDS sync of every proxy connected to disco-discovery (--debugAddress: CDS, LDS, EDS, RDS, ECDS sent and acknowledged), and with a pod how its configuration differs from the control plane's; or, without a control plane, whether each sidecar given by --admin has a configuration applied",
    )
    .argument("[pods...]", "only these <pod-name[.namespace]> (matched against each sidecar's identity)")
    .addOption(
      new Option("--admin <url>", "admin address of a sidecar (http://host:port, host:port or a port on 127.0.0.1); repeatable")
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), parseAdminTarget(value)])
        .default([]),
    )
    .option(
      "--debugAddress <host:port>",
      "disco-discovery's debug address (its --httpAddr): every proxy connected to it, as istioctl asks istiod; repeat for every replica",
      debugAddress,
    )
    .addOption(outputOption())
    .option("-s, --sds", "compare active secrets with node agents (experimental)", false)
    .option("--sds-json", "the SDS comparison as JSON", false)
    .action(async (pods: string[], opts: ProxyStatusFlags, cmd: Command) => {
      if (opts.debugAddress) {
        io.exitCode = await runControlPlaneStatus(pods, opts.debugAddress, globalFlags(cmd).namespace || "default", opts.output, io);
        return;
      }
      io.exitCode = await runProxyStatus(pods, opts, io);
    });
}

async function runProxyStatus(pods: string[], opts: ProxyStatusFlags, io: MeshctlIo): Promise<number> {
  if (opts.admin.length === 0)
    return needsOrchestrator(
      "proxy-status",
      "`--debugAddress HOST:PORT` (disco-discovery's debug port) or `--admin URL` for each sidecar (repeatable)",
      io.stderr,
    );
  const all = await proxyStatus(opts.admin);
  const { rows, missing } = selectPods(all, pods);
  io.stdout.write(opts.output === "json" ? proxyStatusJson(rows) : formatProxyStatus(rows));
  if (opts.sds || opts.sdsJson) io.stdout.write(opts.sdsJson ? `${JSON.stringify({ sds: [], note: NO_SDS }, null, 2)}\n` : `${NO_SDS}\n`);
  for (const p of missing) io.stderr.write(`Error: meshctl proxy-status: no sidecar among --admin is ${p}\n`);
  return missing.length > 0 || rows.some((r) => r.status !== "SYNCED") ? EXIT_FAILURE : EXIT_OK;
}

/**
 * `proxy-status --debugAddress`: the table of every connected proxy, or with
 * pods each one's diff. 0 as istioctl (a STALE proxy is reported, not an
 * error); 1 when disco-discovery cannot be asked or a pod is not connected.
 */
async function runControlPlaneStatus(
  pods: string[],
  targets: ReadonlyArray<{ host: string; port: number }>,
  namespace: string,
  output: "short" | "json",
  io: MeshctlIo,
): Promise<number> {
  try {
    const rows = await fetchSyncz(targets);
    const proxies = proxySyncs(rows);
    if (pods.length === 0) {
      io.stdout.write(output === "json" ? `${JSON.stringify(proxies, null, 2)}\n` : formatProxySyncs(proxies));
      return EXIT_OK;
    }
    for (const pod of pods) {
      const proxy = proxies.find((p) => matchesPod(pod, namespace, p));
      if (!proxy) {
        io.stderr.write(`Error: meshctl proxy-status: no proxy ${pod.includes(".") ? pod : `${pod}.${namespace}`} is connected to disco-discovery\n`);
        return EXIT_FAILURE;
      }
      const from = rows.find((r) => r.proxy === proxy.id)!.from;
      const config = await debugJson<{ configs: Array<{ type: string; disco: unknown[]; proxy: unknown[] }> }>(
        from,
        `/debug/proxy_config?proxyID=${encodeURIComponent(proxy.id)}`,
      );
      io.stdout.write(output === "json" ? `${JSON.stringify(config, null, 2)}\n` : formatProxyDiff(config).text);
    }
    return EXIT_OK;
  } catch (e) {
    if (!(e instanceof DebugPortError)) throw e;
    io.stderr.write(`Error: meshctl proxy-status: unable to query disco-discovery (--debugAddress is its --httpAddr): ${e.message}\n`);
    return EXIT_FAILURE;
  }
}
