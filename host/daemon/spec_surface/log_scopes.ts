import type { SpecDaemon } from "./metrics.ts";

/**
 * What each log scope of spec 2 carries in each daemon (docs/daemon-reference.md
 * "Log scopes" shows the same table): the lines of its concern, or, for a
 * concern this build does not have, why it stays silent. `all` is not a
 * scope of its own (it sets every scope). A test runs each daemon with every
 * scope at debug, drives the actions below and finds a line of each scope
 * that has one (test/daemon/log_scopes.test.ts).
 */
export type ScopeUse = { readonly logs: string } | { readonly silent: string };

const NO_ORCH = "needs an orchestrator API (config maps, secrets): nothing of that concern runs here";
const NO_MCP = "there is no MCP: the configuration comes from files";
const NO_ADAPTERS = "there are no out-of-process (gRPC) adapters: rules are evaluated in-process";
const NO_CA = "disco-discovery signs nothing: it relays CreateCertificate to mesh_ca, which issues, rotates and serves certificates";

export const LOG_SCOPE_USE: Readonly<Record<SpecDaemon, Readonly<Record<string, ScopeUse>>>> = {
  "disco-agent": {
    anchorclient: { logs: "each CSR sent to mesh_ca (identity, authentication, outcome, latency); renewal failures and retries; INITIAL_BACKOFF_MSEC waits" },
    authn: {
      logs: "each inbound request's peer authentication (mutual TLS or plain text, the PeerAuthentication mode) and request authentication outcome; JWT denials",
    },
    cache: { logs: "the workload certificate kept in memory: serial, expiry and renewal time of each one cached" },
    cloudca: { silent: "no cloud CA: the only certificate provider is mesh_ca" },
    configmapcontroller: { silent: NO_ORCH },
    default: { logs: "start, listeners, the workload certificate obtained, shutdown and drain, SIGHUP, admin actions" },
    model: { logs: "each configuration applied: files, documents and mesh resources by kind" },
    rbac: { logs: "each authorization decision: allowed (debug) or denied (info) with the policy, rule and action; audited requests" },
    sds: { logs: "the workload certificate handed to the listeners, at start and at each rotation" },
    secretfetcher: { silent: "gateway credentials are Secret documents of the configuration (scope model); nothing is fetched" },
    stsclient: { silent: "the agent calls no token exchange service: its service-account token goes to mesh_ca as it is" },
    stsserver: { logs: "requests to the token exchange service (--stsPort) it refuses, with the reason" },
    token: { logs: "the service-account token (--tokenPath) presented to mesh_ca with a CSR" },
    validation: {
      logs: "configuration refused (a file that does not decode, a configuration the filter or the security path refuses): the last good one stays",
    },
    vault: { silent: "no Vault CA: the only certificate provider is mesh_ca" },
  },
  mesh_ca: {
    configmapcontroller: { silent: NO_ORCH },
    default: { logs: "start, listeners, the token keys in use, shutdown" },
    monitor: { logs: "the self-monitoring listener (--monitoring-port) and what it serves" },
    pkica: { logs: "the signing CA: the self-signed root generated or loaded, the plugged or upstream certificate, the self-check and its failures" },
    rootcertrotator: { logs: "the self-signed root's checks (schedule, each check, rotations)" },
    secretcontroller: { silent: NO_ORCH },
    serverca: { logs: "each CSR served: issued (identity, serial, expiry, authentication) or refused with the reason" },
  },
  hubs: {
    adapters: { logs: "each dispatch to a handler (deny, allowList, quota, access log) and access-log files that cannot be written" },
    api: { logs: "each Check and Report call; calls refused (their caller, a bad message)" },
    attributes: { logs: "the attributes each Check and Report carries (decoded fields, the global word count)" },
    default: { logs: "start, listeners, TLS, shutdown" },
    grpcAdapter: { silent: NO_ADAPTERS },
    loadshedding: { logs: "the load shedding mode and thresholds at start; calls throttled (enforce) or that would be (logonly); inert thresholds" },
    mcp: { silent: NO_MCP },
    validation: { logs: "each configuration applied (rules, quotas, access logs, errors) and the files and documents refused" },
  },
  "disco-discovery": {
    ads: { logs: "xDS listeners, configuration versions, streams, pushes, ACKs and NACKs" },
    attributes: { silent: "disco-discovery handles no hub attributes: the hub (hubs) does" },
    authn: {
      logs: "each configuration version's PeerAuthentications and RequestAuthentications (served to Envoy as TLS and JWT settings); callers of --secureGrpcAddr refused for their certificate",
    },
    configmapcontroller: { silent: NO_ORCH },
    default: { logs: "start, the mesh config, listeners, shutdown" },
    grpcAdapter: { silent: NO_ADAPTERS },
    mcp: { silent: NO_MCP },
    model: { logs: "each configuration version: resources by kind, services" },
    pkica: { silent: NO_CA },
    rbac: { logs: "each configuration version's AuthorizationPolicies (served as RBAC filters of the workloads they select)" },
    rootcertrotator: { silent: NO_CA },
    secretcontroller: { silent: NO_CA },
    serverca: {
      logs: "CreateCertificate on --secureGrpcAddr: whether it is relayed to mesh_ca (--caAddress), each request relayed (how the caller authenticated) or refused with the reason",
    },
    validation: { logs: "configuration refused (a file or document that does not decode, an unknown extension provider): the last good version stays" },
    validationController: {
      silent:
        "the validating webhook configuration is patched through an orchestrator API, which this build does not reach (the webhook itself is served: scope validationServer)",
    },
    validationServer: { logs: "the admission webhooks (--httpsAddr): reviews refused, bad requests, certificate reloads" },
  },
};
