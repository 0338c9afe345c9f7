import { type Command, InvalidArgumentError, Option } from "commander";
import { stringify } from "yaml";
import { DEFAULT_DISCOVERY_ADDRESS, envoyBootstrap, splitHostPort } from "../../../discovery/envoy_bootstrap.ts";
import { DEFAULT_DOMAIN, isDnsDomain } from "../../../mesh/hosts.ts";
import { EXIT_BAD_CONFIG } from "../../../daemon/exit_codes.ts";
import { globalFlags } from "../global_flags.ts";
import type { MeshctlIo } from "../io.ts";

function labelList(value: string, previous: Record<string, string>): Record<string, string> {
  const out = { ...previous };
  for (const pair of value.split(",").filter((p) => p.length > 0)) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new InvalidArgumentError(`expected key=value[,key=value], got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError(`expected a port (1-65535), got ${JSON.stringify(value)}`);
  return n;
}

/** `meshctl experimental envoy-bootstrap` (alias `x envoy-bootstrap`). */
export function registerEnvoyBootstrap(experimental: Command, io: MeshctlIo): void {
  experimental
    .command("envoy-bootstrap")
    .description(
      "Print the bootstrap of an Envoy sidecar that takes its configuration (listeners, routes, clusters, the filter by ECDS) from disco-discovery over ADS",
    )
    .option(
      "--discoveryAddress <host:port>",
      "disco-discovery's xDS address: --grpcAddr, or --secureGrpcAddr with --controlPlaneAuthPolicy MUTUAL_TLS",
      DEFAULT_DISCOVERY_ADDRESS,
    )
    .addOption(
      new Option(
        "--controlPlaneAuthPolicy <policy>",
        "MUTUAL_TLS: ADS over mutual TLS with the workload certificate the node agent serves (SDS default, ROOTCA), as disco-agent's flag",
      )
        .choices(["NONE", "MUTUAL_TLS"])
        .default("NONE"),
    )
    .option("--discoIdentity <suffix>", "with MUTUAL_TLS: the suffix disco-discovery's SPIFFE identity must end with (e.g. sa/disco-discovery)")
    .option("--pod <name>", "the pod the proxy runs in (node id and inbound listeners)", "sidecar")
    .option("--ip <address>", "the pod's address (node id)", "127.0.0.1")
    .option("--labels <k=v,...>", "the workload's labels (node metadata LABELS), repeatable", labelList, {})
    .option("--serviceCluster <name>", "node cluster (default <pod>.<namespace>)")
    .addOption(new Option("--type <type>", "sidecar, or router for a gateway").choices(["sidecar", "router"]).default("sidecar"))
    .option("--adminPort <port>", "Envoy admin port on 127.0.0.1", port, 15000)
    .option("--domain <suffix>", "the mesh's DNS domain (disco-discovery's --domain): the node id's last part <namespace>.svc.<suffix>", DEFAULT_DOMAIN)
    .addOption(new Option("-o, --output <format>", "output format").choices(["yaml", "json"]).default("yaml"))
    .action(
      (
        opts: {
          discoveryAddress: string;
          controlPlaneAuthPolicy: "NONE" | "MUTUAL_TLS";
          discoIdentity?: string;
          pod: string;
          ip: string;
          labels: Record<string, string>;
          serviceCluster?: string;
          type: "sidecar" | "router";
          adminPort: number;
          domain: string;
          output: string;
        },
        cmd: Command,
      ) => {
        try {
          splitHostPort(opts.discoveryAddress);
        } catch (e) {
          io.stderr.write(`Error: meshctl x envoy-bootstrap: --discoveryAddress: ${(e as Error).message}\n`);
          io.exitCode = EXIT_BAD_CONFIG;
          return;
        }
        if (!isDnsDomain(opts.domain)) {
          io.stderr.write(`Error: meshctl x envoy-bootstrap: --domain: expected a DNS domain such as cluster.local, got ${JSON.stringify(opts.domain)}\n`);
          io.exitCode = EXIT_BAD_CONFIG;
          return;
        }
        const bootstrap = envoyBootstrap({
          discoveryAddress: opts.discoveryAddress,
          type: opts.type,
          pod: opts.pod,
          ip: opts.ip,
          labels: opts.labels,
          namespace: globalFlags(cmd).namespace || "default",
          cluster: opts.serviceCluster,
          adminPort: opts.adminPort,
          domain: opts.domain,
          controlPlaneAuthPolicy: opts.controlPlaneAuthPolicy,
          ...(opts.discoIdentity ? { discoIdentity: opts.discoIdentity } : {}),
        });
        io.stdout.write(opts.output === "json" ? `${JSON.stringify(bootstrap, null, 2)}\n` : stringify(bootstrap));
      },
    );
}
