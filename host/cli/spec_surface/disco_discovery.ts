import { type NotApplicable, na } from "./not_applicable.ts";

/**
 * disco-discovery's part of spec 2 that this build does not apply (yet),
 * with the reason; docs/daemon-reference.md lists every flag.
 */
const NO_ORCH = "needs an orchestrator API: the mesh comes from --configDir";
const NO_MCP = "there is no MCP client: the configuration comes from --configDir";

export const DISCOVERY_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  na("--appNamespace", "value", "", NO_ORCH),
  na("--clusterRegistriesNamespace", "value", "", NO_ORCH),
  na("--catalogserverURL", "value", "", "there is no catalog registry server"),
  na("--orchconfig", "value", "", NO_ORCH),
  na("--mcpInitialConnWindowSize", "value", "1048576", NO_MCP),
  na("--mcpInitialWindowSize", "value", "1048576", NO_MCP),
  na("--mcpMaxMsgSize", "value", "4194304", NO_MCP),
  na("--namespace", "value", "", NO_ORCH),
  na("--networksConfig", "value", "/etc/mesh/config/meshNetworks", "one network: every endpoint is reachable"),
  na("--plugins", "value", "authn,authz,health,hub", "the networking plugins are fixed: every proxy gets the mesh's documents and applies them itself"),
  na("--profile", "bool", "false", "not built yet for disco-discovery: upstream serves /debug/pprof/ on the --httpAddr debug port (host/telemetry/profiling.ts, which serves hubs --profile and mesh_ca --enable-profiling, is not wired to it); meanwhile profile it with node --cpu-prof or --heap-prof"),
  na("--resync", "value", "1m0s", "the folder is watched: there is no controller to resync"),
  na("--domain", "value", "cluster.local", "the mesh model's DNS suffix is fixed: service hosts are <name>.<namespace>.svc.cluster.local (host/mesh/hosts.ts)"),
];
