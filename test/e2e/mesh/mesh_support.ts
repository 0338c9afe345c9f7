// The e2e mesh: a control plane on the host side and pods as network
// namespaces, deployed from upstream's sample YAML the way a user does.
//
//   host side   mesh_ca (127.0.0.1), disco-discovery: xDS and certificates on
//               <bridge address>:15012 (`disco-discovery.mesh-system.svc`
//               in every pod's /etc/hosts), its debug server on 127.0.0.1
//   pods        one network namespace each, started by the kubelet stand-in
//               (test/support/netns_kubelet.ts) from the Pod that
//               `meshctl orch-inject` made of the sample's Deployment
//
// The Pod and Service documents (with the addresses assigned here) are
// written to disco-discovery's --configDir: they stand in for the
// orchestrator API server. So are the mesh's policies a test applies.
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { DISCOVERY_BIN } from "../../../host/demo/binaries.ts";
import { type MeshCa, startMeshCa, writeWorkloadCertFiles } from "../../../host/demo/secure_mesh.ts";
import { loadOrCreateIssuerKey, mintServiceAccountToken } from "../../../host/anchor/token_issuer.ts";
import { type HostEntry, type Pod, PodNetwork, installServiceRoutes, type ServiceRoute } from "../../support/netns.ts";
import { type KubeletContext, type RunningPod, startPod } from "../../support/netns_kubelet.ts";
import {
  type Doc,
  inNamespace,
  orchInject,
  podsOf,
  readManifest,
  selects,
  serviceNames,
  targetPort,
  withClusterIp,
  withLabels,
  withStatus,
} from "../../support/netns_manifests.ts";
import { type Daemon, startDaemon, tempDir } from "../../support/processes.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "cli", "fixtures", "upstream", "samples");
/** Upstream's samples, renamed (test/cli/fixtures/upstream/samples). */
export const SAMPLES = {
  httpbin: join(FIXTURES, "httpbin", "httpbin.yaml"),
  sleep: join(FIXTURES, "sleep", "sleep.yaml"),
  bookinfo: join(FIXTURES, "bookinfo", "platform", "kube", "bookinfo.yaml"),
  tcpEcho: join(FIXTURES, "tcp-echo", "tcp-echo.yaml"),
};
const APPS = join(import.meta.dirname, "apps");
/** The control plane's name in the pods' DNS, as the injected sidecar is told. */
export const DISCO_HOST = "disco-discovery.mesh-system.svc";
export const DISCO_PORT = 15012;

/** The stand-in program an app image runs. */
export function appCommand(container: Doc): string[] | undefined {
  const image = String(container.image ?? "");
  const bookinfo = /examples-bookinfo-(productpage|details|ratings|reviews)-(v\d)/.exec(image);
  if (bookinfo) return [process.execPath, join(APPS, "bookinfo.mjs"), bookinfo[1], bookinfo[2], String(container.ports?.[0]?.containerPort ?? 9080)];
  if (/tcp-echo-server/.test(image)) return [process.execPath, join(APPS, "tcp_echo.mjs"), ...(container.args ?? ["9000", "hello"]).map(String)];
  if (/httpbin/.test(image)) return [process.execPath, join(APPS, "httpbin.mjs"), String(container.ports?.[0]?.containerPort ?? 8080)];
  return undefined;
}

interface DiscoListening {
  grpc?: string;
  secureGrpc?: string;
  http?: string;
  monitoring?: string;
}

export interface DeployOptions {
  namespace: string;
  /** `kubectl apply -l`: only the documents with these labels. */
  labels?: Record<string, string>;
  /** Through `meshctl orch-inject` first (default true); false deploys the workload without a sidecar. */
  inject?: boolean;
}

/** A pod of a deployed sample: its document (with status), its network namespace, its processes once started. */
export interface DeployedPod {
  doc: Doc;
  pod: Pod;
  running?: RunningPod;
}

export class E2eMesh {
  readonly net = new PodNetwork();
  readonly configDir = tempDir("e2m-disco-config-");
  readonly services: Doc[] = [];
  readonly pods: DeployedPod[] = [];
  ca?: MeshCa;
  disco?: Daemon<DiscoListening>;
  private routed = new Set<string>();

  /**
   * mesh_ca, then disco-discovery with its mesh_ca certificate on the
   * bridge's address, relaying the sidecars' certificate requests to mesh_ca
   * (disco-discovery as a registration authority: mesh_ca trusts it to ask
   * for another workload's certificate at renewal).
   */
  async start(): Promise<void> {
    const ca = await startMeshCa(["--trusted-node-accounts", "mesh-system/disco-discovery"]);
    this.ca = ca;
    const certDir = tempDir("e2m-disco-certs-");
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    this.disco = await startDaemon<DiscoListening>(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        this.configDir,
        "--grpcAddr",
        "",
        "--secureGrpcAddr",
        `${this.net.gateway}:${DISCO_PORT}`,
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "127.0.0.1:0",
        "--caAddress",
        ca.address,
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_CERT_DIR: certDir },
    );
  }

  /** disco-discovery's debug address (`meshctl … --debugAddress`). */
  get debugAddress(): string {
    if (!this.disco?.listening.http) throw new Error("disco-discovery is not running");
    return this.disco.listening.http;
  }

  /** What the kubelet stand-in gets from the cluster: the mesh root ConfigMap, tokens minted by the CA's issuer, the app stand-ins. */
  private kubelet(): KubeletContext {
    return {
      configMaps: this.ca ? { "mesh-ca-root-cert": { "root-cert.pem": readText(this.ca.rootCertFile) } } : {},
      serviceAccountToken: async (namespace, serviceAccount, audience, expirationSeconds) => {
        if (!this.ca) throw new Error("no CA: E2eMesh.start() was not called");
        return mintServiceAccountToken(await loadOrCreateIssuerKey(this.ca.issuerDir), {
          namespace,
          serviceAccount,
          audiences: audience ? [audience] : undefined,
          ttlMs: expirationSeconds * 1000,
        });
      },
      appCommand,
    };
  }

  /**
   * `kubectl apply -n <ns> -f <(meshctl orch-inject -f sample.yaml)`: the
   * Services get cluster addresses, the Deployments' Pods get pods, the
   * registry documents go to disco-discovery, and every pod is started.
   */
  async deploy(file: string, options: DeployOptions): Promise<RunningPod[]> {
    let docs = inNamespace(readManifest(file), options.namespace);
    if (options.labels) docs = withLabels(docs, options.labels);
    if (options.inject !== false) docs = await orchInject(docs);
    for (const s of docs.filter((d) => d.kind === "Service")) this.services.push(withClusterIp(s, this.net.allocateServiceIp()));
    const added = podsOf(docs).map((doc) => {
      const pod = this.net.addPod(doc.metadata.name, doc.metadata.namespace);
      const entry: DeployedPod = { doc: withStatus(doc, pod.ip, this.net.gateway), pod };
      this.pods.push(entry);
      return entry;
    });
    this.writeDocuments(`orch-${options.namespace}-${basenameOf(file)}${options.labels ? `-${Object.values(options.labels).join("-")}` : ""}`, [
      // ServiceAccounts stay out: Pods name theirs, and no part of the mesh reads them.
      ...docs.filter((d) => d.kind === "Namespace"),
      ...this.services.filter((s) => s.metadata.namespace === options.namespace),
      ...added.map((p) => p.doc),
    ]);
    this.net.setHosts((pod) => this.hostsOf(pod));
    const ctx = this.kubelet();
    return Promise.all(
      added.map(async (entry) => {
        entry.running = await startPod(entry.doc, entry.pod, ctx, () => this.routeServices(entry.pod));
        return entry.running;
      }),
    ).finally(() => this.refreshRoutes());
  }

  /** Writes documents to disco-discovery's folder as one file (replaced whole; written beside it and renamed). */
  writeDocuments(name: string, docs: Doc[]): void {
    const file = join(this.configDir, `${name}.yaml`);
    writeFileSync(`${file}.tmp`, docs.map((d) => stringify(d)).join("---\n"));
    renameSync(`${file}.tmp`, file);
  }

  removeDocuments(name: string): void {
    rmSync(join(this.configDir, `${name}.yaml`), { force: true });
  }

  /** The names a pod resolves: every Service (short names in its own namespace) and the control plane. */
  private hostsOf(pod: Pod): HostEntry[] {
    return [
      { ip: this.net.gateway, names: [DISCO_HOST, `${DISCO_HOST}.cluster.local`, "disco-discovery.mesh-system"] },
      ...this.services.filter((s) => s.spec.clusterIP).map((s) => ({ ip: s.spec.clusterIP as string, names: serviceNames(s, pod.namespace) })),
    ];
  }

  /** Every Service port and the pods it selects, for the kube-proxy stand-in. */
  private serviceRoutes(): ServiceRoute[] {
    return this.services.flatMap((s) =>
      (s.spec.ports ?? []).map((p: Doc) => ({
        clusterIp: s.spec.clusterIP,
        port: p.port,
        endpoints: this.pods
          .filter((x) => selects(s, x.doc))
          .map((x) => ({ ip: x.pod.ip, port: targetPort(p, x.doc) }))
          .filter((e): e is { ip: string; port: number } => e.port !== undefined),
      })),
    );
  }

  /** Installs the kube-proxy stand-in in a pod (after its init containers: the capture rules come first). */
  private routeServices(pod: Pod): void {
    installServiceRoutes(pod, this.serviceRoutes());
    this.routed.add(pod.netns);
  }

  /** New Services and endpoints reach the pods started before them. */
  private refreshRoutes(): void {
    const routes = this.serviceRoutes();
    for (const p of this.pods) if (this.routed.has(p.pod.netns)) installServiceRoutes(p.pod, routes);
  }

  /** A deployed pod by its app label (and version), e.g. `pod("sleep", "foo")`. */
  pod(app: string, namespace: string, version?: string): DeployedPod {
    const found = this.pods.find(
      (p) => p.doc.metadata.namespace === namespace && p.doc.metadata.labels?.app === app && (!version || p.doc.metadata.labels?.version === version),
    );
    if (!found) throw new Error(`no pod of app ${app}${version ? ` ${version}` : ""} in ${namespace}`);
    return found;
  }

  async stop(): Promise<void> {
    await Promise.all(this.pods.map((p) => Promise.all([...(p.running?.containers.values() ?? [])].map((c) => c.stop()))));
    this.net.remove();
    await this.disco?.stop();
    await this.ca?.stop();
  }
}

function basenameOf(file: string): string {
  return file.replace(/^.*\//, "").replace(/\.ya?ml$/, "");
}

function readText(file: string): string {
  return readFileSync(file, "utf8");
}
