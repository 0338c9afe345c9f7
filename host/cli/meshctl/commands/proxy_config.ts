import { type Command, InvalidArgumentError, Option } from "commander";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { addAdminOptions, adminFrom, outputOption } from "../admin_flags.ts";
import type { MeshctlIo } from "../io.ts";
import { readClustersFile } from "../clusters_json.ts";
import { needsOrchestrator } from "../needs_orchestrator.ts";
import {
  formatEndpoints,
  formatListeners,
  formatLogLevels,
  formatRoutes,
  formatSecrets,
  parseLogLevels,
  selectEndpoints,
  selectListeners,
  selectRoutes,
  setLogLevels,
} from "../proxy_config.ts";
import { AdminError, type ConfigDump, DumpError, fetchDump, podMatchesIdentity, readDumpFile } from "../sidecar_admin.ts";
import { type XdsType, acknowledgedResources, formatXdsListeners, formatXdsRoutes, xdsEndpoints } from "../control_plane_config.ts";
import { DebugPortError } from "../control_plane_status.ts";
import { globalFlags } from "../global_flags.ts";
import { debugAddress } from "./debug_address.ts";

interface SourceFlags {
  file?: string;
  admin?: string;
  proxyAdminPort?: string;
  output: "short" | "json";
}

type Run = (dump: ConfigDump, opts: SourceFlags & Record<string, unknown>) => string;

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function portFilter(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError("expected a port from 0 to 65535 (0: any)");
  return Number(value);
}

function fail(io: MeshctlIo, sub: string, message: string, code = EXIT_FAILURE): number {
  io.stderr.write(`Error: meshctl proxy-config ${sub}: ${message}\n`);
  return code;
}

/** Reads the dump named by `--file`, or fetches it from `--admin`; checks `[pod]` against the sidecar's identity. */
async function withDump(io: MeshctlIo, sub: string, pod: string | undefined, opts: SourceFlags, run: (dump: ConfigDump) => string): Promise<number> {
  const admin = adminFrom(opts);
  if (!admin && !opts.file) return needsOrchestrator(`proxy-config ${sub}`, "`--admin URL` (a running sidecar) or `--file config_dump.json`", io.stderr);
  try {
    const dump = admin ? await fetchDump(admin) : readDumpFile(opts.file!);
    if (pod !== undefined && !podMatchesIdentity(pod, dump.identity.id))
      return fail(io, sub, `${admin ?? opts.file} is the sidecar ${dump.identity.id}, not ${pod}`);
    io.stdout.write(run(dump));
    return EXIT_OK;
  } catch (e) {
    if (e instanceof AdminError || e instanceof DumpError) return fail(io, sub, e.message);
    throw e;
  }
}

function subcommand(group: Command, name: string, aliases: string[], description: string): Command {
  const c = group.command(name).aliases(aliases).description(description).argument("[pod]", "<pod-name[.namespace]>: checked against the sidecar's identity");
  c.option("-f, --file <file>", "a saved sidecar /config_dump JSON instead of a running sidecar");
  return addAdminOptions(c).addOption(outputOption("output format: short (tables) or json"));
}

/** `--debugAddress` on listener, route and endpoints: the proxy's configuration as disco-discovery knows it (host/cli/meshctl/control_plane_config.ts). */
function withDebugAddress(c: Command): Command {
  return c.option(
    "--debugAddress <host:port>",
    "disco-discovery's debug address (its --httpAddr): the xDS resources the pod's proxy acknowledged, as the control plane knows them; repeat for every replica",
    debugAddress,
  );
}

async function viaControlPlane(
  io: MeshctlIo,
  sub: string,
  pod: string | undefined,
  opts: SourceFlags & Record<string, unknown>,
  cmd: Command,
  type: XdsType,
  format: (resources: Record<string, any>[]) => string,
): Promise<number> {
  if (pod === undefined) return fail(io, sub, "with --debugAddress, name the proxy: <pod-name[.namespace]>", EXIT_BAD_CONFIG);
  try {
    const { resources } = await acknowledgedResources(
      opts.debugAddress as Array<{ host: string; port: number }>,
      pod,
      globalFlags(cmd).namespace || "default",
      type,
    );
    io.stdout.write(opts.output === "json" ? json(resources) : format(resources));
    return EXIT_OK;
  } catch (e) {
    if (e instanceof DebugPortError) return fail(io, sub, e.message);
    throw e;
  }
}

function action(io: MeshctlIo, name: string, run: Run) {
  return async (pod: string | undefined, opts: SourceFlags & Record<string, unknown>) => {
    io.exitCode = await withDump(io, name, pod, opts, (dump) => run(dump, opts));
  };
}

/**
 * `meshctl proxy-config listener|route|endpoints|secret|log [pod]` against a
 * running sidecar (`--admin`, `--proxyAdminPort`) or a saved dump (`--file`).
 */
export function registerProxyConfig(program: Command, _experimental: Command, io: MeshctlIo): void {
  const group = program
    .command("proxy-config")
    .alias("pc")
    .description("Show a sidecar's configuration (listeners, routes, endpoints, secrets) or change its log levels");

  const listener = subcommand(group, "listener", ["listeners", "l"], "Listeners: address, port, type, filters in order, destination")
    .addOption(new Option("--port <port>", "only listeners on this port (0: any)").argParser(portFilter).default(0))
    .option("--address <address>", "only listeners bound to this address")
    .option("--type <type>", "only listeners of this type (HTTP or TCP)");
  const listenerFromDump = action(io, "listener", (dump, o) => {
    const list = selectListeners(dump, { port: o.port as number, address: o.address as string | undefined, type: o.type as string | undefined });
    return o.output === "json" ? json(list) : formatListeners(list);
  });
  withDebugAddress(listener).action(async (pod: string | undefined, opts: SourceFlags & Record<string, unknown>, cmd: Command) => {
    if (!opts.debugAddress) return listenerFromDump(pod, opts);
    io.exitCode = await viaControlPlane(io, "listener", pod, opts, cmd, "lds", (list) => formatXdsListeners(list, opts.port as number));
  });

  const route = subcommand(group, "route", ["routes", "r"], "Routes: virtual hosts and their upstream per authority").option(
    "--name <name>",
    "only the route of this name",
  );
  const routeFromDump = action(io, "route", (dump, o) => {
    const list = selectRoutes(dump, o.name as string | undefined);
    return o.output === "json" ? json(list) : formatRoutes(list);
  });
  withDebugAddress(route).action(async (pod: string | undefined, opts: SourceFlags & Record<string, unknown>, cmd: Command) => {
    if (!opts.debugAddress) return routeFromDump(pod, opts);
    io.exitCode = await viaControlPlane(io, "route", pod, opts, cmd, "rds", (list) => formatXdsRoutes(list, opts.name as string | undefined));
  });

  const endpoints = subcommand(group, "endpoints", ["endpoint", "ep"], "Endpoints of each cluster (from a /config_dump: health not checked, UNKNOWN)").option(
    "--name <name>",
    "only the endpoints of this cluster",
  );
  endpoints.options.find((o) => o.long === "--file")!.description =
    "a saved sidecar /config_dump JSON, or the proxy admin's /clusters?format=json, instead of a running sidecar";
  const fromDump = action(io, "endpoints", (dump, o) => {
    const list = selectEndpoints(dump, o.name as string | undefined);
    return o.output === "json" ? json(list) : formatEndpoints(list);
  });
  withDebugAddress(endpoints).action(async (pod: string | undefined, opts: SourceFlags & Record<string, unknown>, cmd: Command) => {
    if (opts.debugAddress) {
      io.exitCode = await viaControlPlane(io, "endpoints", pod, opts, cmd, "eds", (list) =>
        formatEndpoints(xdsEndpoints(list, opts.name as string | undefined)),
      );
      return;
    }
    // Spec 3: `--file <clusters-json-file>`; it names no workload, so a pod argument cannot be checked against it.
    let clusters;
    try {
      clusters = opts.file && !adminFrom(opts) ? readClustersFile(opts.file) : undefined;
    } catch (e) {
      if (!(e instanceof DumpError)) throw e;
      io.exitCode = fail(io, "endpoints", e.message);
      return;
    }
    if (!clusters) return fromDump(pod, opts);
    const list = clusters.filter((c) => !opts.name || c.cluster === opts.name);
    io.stdout.write(opts.output === "json" ? json(list) : formatEndpoints(list));
    io.exitCode = EXIT_OK;
  });

  subcommand(group, "secret", ["s"], "Certificates the sidecar holds: its workload certificate and the mesh roots (with --caAddress)").action(
    action(io, "secret", (dump, o) => (o.output === "json" ? json(dump.secrets ?? { certificates: [] }) : formatSecrets(dump))),
  );

  const log = group
    .command("log")
    .alias("o")
    .description("Show or change a running sidecar's log levels (experimental)")
    .argument("[pod]", "<pod-name[.namespace]>: checked against the sidecar's identity")
    .option(
      "--level <levels>",
      "comma list of [<logger>:]<level>; levels trace, debug, info, warning, error, critical, off; without a logger every scope changes",
    )
    .option("-r, --reset", "reset every logger to the default level (warning) first", false);
  addAdminOptions(log)
    .addOption(outputOption())
    .action(async (pod: string | undefined, opts: SourceFlags & { level?: string; reset: boolean }) => {
      io.exitCode = await runLog(pod, opts, io);
    });
}

async function runLog(pod: string | undefined, opts: SourceFlags & { level?: string; reset: boolean }, io: MeshctlIo): Promise<number> {
  const admin = adminFrom(opts);
  if (!admin) return needsOrchestrator("proxy-config log", "`--admin URL` (a running sidecar; log levels cannot be changed in a file)", io.stderr);
  let levels;
  try {
    levels = opts.level === undefined ? [] : parseLogLevels(opts.level);
  } catch (e) {
    return fail(io, "log", `--level: ${(e as Error).message}`, EXIT_BAD_CONFIG);
  }
  try {
    if (pod !== undefined) {
      const dump = await fetchDump(admin);
      if (!podMatchesIdentity(pod, dump.identity.id)) return fail(io, "log", `${admin} is the sidecar ${dump.identity.id}, not ${pod}`);
    }
    const result = await setLogLevels(admin, opts.reset, levels);
    io.stdout.write(opts.output === "json" ? json(result) : formatLogLevels(result));
    return EXIT_OK;
  } catch (e) {
    if (e instanceof AdminError || e instanceof DumpError) return fail(io, "log", e.message);
    throw e;
  }
}
