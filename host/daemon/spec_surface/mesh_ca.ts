import { type NotApplicable, na } from "./not_applicable.ts";

/**
 * mesh_ca flags of spec 2 this build does not apply, with the reason
 * (docs/daemon-reference.md). This CA signs CSRs over gRPC; it writes no
 * orchestrator secrets and watches no namespaces.
 */
const NO_ORCH = "needs an orchestrator API (secrets, service accounts, namespaces)";

export const ANCHOR_NOT_APPLICABLE_FLAGS: readonly NotApplicable[] = [
  na("--append-dns-names", "bool", "false", `webhook service names come from the orchestrator: ${NO_ORCH}`),
  na("--anchor-storage-namespace", "value", "mesh-system", `the CA is kept in --self-signed-ca-cert-dir, not a secret: ${NO_ORCH}`),
  na("--custom-dns-names", "value", "", `DNS names per service account: ${NO_ORCH}`),
  na("--orch-config", "value", "", NO_ORCH),
  na("--listened-namespaces", "value", "", `${NO_ORCH}; --allowed-namespaces limits the identities issued`),
  na("--sds-enabled", "bool", "false", "workload certificates are requested over gRPC, not SDS"),
  // Upstream's default (false) also writes workload certificates into orchestrator secrets; this CA never does.
  {
    ...na("--server-only", "bool", "false", `no orchestrator secrets are ever written (${NO_ORCH}): only --server-only=true describes this CA`),
    only: ["true"],
  },
];

/** Spec 2 variables of mesh_ca (CA) this build does not apply. */
export const ANCHOR_NOT_APPLICABLE_ENV: readonly NotApplicable[] = [
  na("ANCHOR_ENABLE_NAMESPACES_BY_DEFAULT", "bool", "true", NO_ORCH),
  na("NAMESPACE", "value", "mesh-system", `${NO_ORCH}; --allowed-namespaces limits the identities issued`),
];

/** Flags of `probe` and `version` that start nothing there (they exist for compatibility with the spec). */
export const ANCHOR_CTRLZ_ONLY_FLAGS = (command: string): readonly NotApplicable[] => [
  na("--ctrlz_port", "value", "9876", `\`mesh_ca ${command}\` starts no introspection listener`),
  na("--ctrlz_address", "value", "localhost", `\`mesh_ca ${command}\` starts no introspection listener`),
];
