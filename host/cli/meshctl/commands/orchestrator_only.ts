import type { Command } from "commander";
import type { MeshctlIo } from "../io.ts";
import { unavailableCommand } from "../needs_orchestrator.ts";

/**
 * The spec 3 commands that cannot work without an orchestrator API (they
 * install, upgrade, register or watch things in a cluster). They exist so
 * that a pasted command gets a plain answer: what it would need, exit 69
 * (EXIT_UNAVAILABLE), nothing done. docs/meshctl.md lists them.
 */
interface Unavailable {
  /** Command words under its parent, e.g. ["manifest", "apply"]. */
  readonly path: readonly string[];
  readonly experimental?: boolean;
  readonly aliases?: readonly string[];
  readonly summary: string;
  /** What it would need, completing "needs an orchestrator API …". */
  readonly would: string;
}

const INSTALL = "to read and write the control plane's Deployments, Services and webhook configurations in a cluster";

export const UNAVAILABLE_COMMANDS: readonly Unavailable[] = [
  {
    path: ["dashboard", "controlz"],
    aliases: ["dash", "d"],
    summary: "Open the ControlZ web UI of a control-plane pod",
    would: "to find the pod and port-forward to its ControlZ port (run the daemon with --ctrlz_port and open it directly)",
  },
  {
    path: ["dashboard", "proxy"],
    summary: "Open the admin dashboard of a pod's sidecar",
    would: "to find the pod and port-forward to its admin port (open the sidecar's --proxyAdminPort directly)",
  },
  { path: ["dashboard", "charts"], summary: "Open the charts dashboard", would: "to find the dashboard's pod and port-forward to it" },
  { path: ["dashboard", "tracerD"], summary: "Open the tracer D dashboard", would: "to find the dashboard's pod and port-forward to it" },
  { path: ["dashboard", "meshviz"], summary: "Open the mesh visualisation dashboard", would: "to find the dashboard's pod and port-forward to it" },
  { path: ["dashboard", "metricsdb"], summary: "Open the metrics database dashboard", would: "to find the dashboard's pod and port-forward to it" },
  { path: ["dashboard", "tracerC"], summary: "Open the tracer C dashboard", would: "to find the dashboard's pod and port-forward to it" },
  {
    path: ["register"],
    summary: "Register a service instance (e.g. a VM) joining the mesh",
    would: "to create the Service and Endpoints of the instance (here: name the instance with `disco-agent proxy --endpoint`)",
  },
  { path: ["deregister"], summary: "Remove a service instance registered with `register`", would: "to delete the instance's Endpoints" },
  { path: ["manifest", "apply"], summary: "Apply install manifests to a cluster", would: INSTALL },
  {
    path: ["manifest", "versions"],
    summary: "List recommended and upgrade-supported versions",
    would: "and the install's published versions list (--versionsURI), which this build does not ship",
  },
  {
    path: ["install"],
    summary: "Install the control plane (upstream's `istioctl install`)",
    would: "to apply the install manifests to a cluster; offline, `meshctl manifest generate -o DIR` (or `| kubectl apply -f -`) renders them",
  },
  { path: ["operator", "init"], summary: "Install the operator controller", would: INSTALL },
  { path: ["operator", "remove"], summary: "Remove the operator controller", would: INSTALL },
  {
    path: ["operator", "dump"],
    summary: "Show the operator controller's manifests",
    would: "and the install charts and profiles, which this build does not ship",
  },
  { path: ["upgrade"], summary: "Upgrade the control plane in place", would: INSTALL },
  {
    path: ["verify-install"],
    summary: "Check that every resource of an install is ready",
    would: "to read the readiness of the install's resources in a cluster",
  },
  { path: ["upgrade"], experimental: true, summary: "Upgrade the control plane in place (as `meshctl upgrade`)", would: INSTALL },
  {
    path: ["add-to-mesh", "deployment"],
    experimental: true,
    aliases: ["add"],
    summary: "Restart a deployment's pods with the sidecar",
    would: "to patch and restart the deployment (offline: `meshctl orch-inject -f`)",
  },
  {
    path: ["add-to-mesh", "service"],
    experimental: true,
    summary: "Restart a service's pods with the sidecar",
    would: "to patch and restart the service's deployments (offline: `meshctl orch-inject -f`)",
  },
  {
    path: ["add-to-mesh", "external-service"],
    experimental: true,
    summary: "Create a service entry and a selector-less service for an external service",
    would: "to create the ServiceEntry and the Service",
  },
  {
    path: ["remove-from-mesh", "deployment"],
    experimental: true,
    aliases: ["rm"],
    summary: "Restart a deployment's pods without the sidecar",
    would: "to patch and restart the deployment",
  },
  {
    path: ["remove-from-mesh", "service"],
    experimental: true,
    summary: "Restart a service's pods without the sidecar",
    would: "to patch and restart the service's deployments",
  },
  {
    path: ["remove-from-mesh", "external-service"],
    experimental: true,
    summary: "Remove an external service's service entry and service",
    would: "to delete the ServiceEntry and the Service",
  },
  {
    path: ["multicluster", "apply"],
    experimental: true,
    summary: "Update clusters from a mesh topology",
    would: "of every cluster named in the mesh topology",
  },
  {
    path: ["multicluster", "describe"],
    experimental: true,
    summary: "Describe the clusters of a mesh topology",
    would: "of every cluster named in the mesh topology",
  },
  {
    path: ["multicluster", "generate"],
    experimental: true,
    summary: "Generate per-cluster configuration from a mesh topology",
    would: "of every cluster named in the mesh topology",
  },
  {
    path: ["post-install", "webhook", "enable"],
    experimental: true,
    summary: "Enable the injection and validation webhooks",
    would: "to patch the webhook configurations",
  },
  {
    path: ["post-install", "webhook", "disable"],
    experimental: true,
    summary: "Disable the injection and validation webhooks",
    would: "to patch the webhook configurations",
  },
  { path: ["post-install", "webhook", "status"], experimental: true, summary: "Show the webhooks' status", would: "to read the webhook configurations" },
  {
    path: ["metrics"],
    experimental: true,
    summary: "Show a workload's request metrics",
    would: "and a metrics database to query (here: read a sidecar's `/stats/prometheus`)",
  },
];

const GROUPS: Readonly<Record<string, string>> = {
  dashboard: "Open web UIs of the mesh's components",
  manifest: "Generate, apply, diff or migrate install manifests",
  operator: "Install, remove and show the operator controller",
  "add-to-mesh": "Add workloads to the mesh",
  "remove-from-mesh": "Remove workloads from the mesh",
  multicluster: "Manage a multi-cluster mesh topology",
  "post-install": "Steps after an install",
  webhook: "The injection and validation webhooks",
};

/**
 * Registers every unavailable command under the program or `experimental`,
 * reusing a group command (`authz`, `dashboard` …) when one already exists.
 * Any arguments and flags are taken, so the answer is always the plain one.
 */
export function registerUnavailableCommands(program: Command, experimental: Command, io: MeshctlIo): void {
  for (const u of UNAVAILABLE_COMMANDS) {
    let parent = u.experimental ? experimental : program;
    u.path.forEach((word, i) => {
      const last = i === u.path.length - 1;
      const existing = parent.commands.find((c) => c.name() === word);
      if (existing && !last) {
        parent = existing;
        return;
      }
      const cmd = parent.command(word).description(`${last ? u.summary : (GROUPS[word] ?? word)} (needs an orchestrator API: not available here)`);
      if (i === 0) for (const a of u.aliases ?? []) cmd.alias(a);
      if (last) {
        const full = [...(u.experimental ? ["experimental"] : []), ...u.path].join(" ");
        cmd
          .argument("[args...]")
          .allowUnknownOption()
          .allowExcessArguments()
          .action(() => {
            io.exitCode = unavailableCommand(full, u.would, io.stderr);
          });
      }
      parent = cmd;
    });
  }
}
