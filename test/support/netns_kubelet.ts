// Test support: a kubelet for pods that are network namespaces.
//
// Given a Pod document (as `meshctl orch-inject` left it) and its network
// namespace, it does what the node agent would: runs the init containers to
// their end in order (the capture init container's args become `ip netns exec
// <pod> disco-agent mesh-iptables …` as root), then starts every container as
// its securityContext's user (the proxy as uid/gid 1337), with its env
// resolved (values, the downward API's fieldRefs, `$(VAR)` expansion in args as
// the kubelet does), its volumes mounted (projected service-account tokens,
// ConfigMaps the suite provides, emptyDirs) in the process's private mount
// namespace, and waits for each container's readiness probe (or, for an app
// stand-in without one, its "listening" line).
//
// An image is a program here: the disco-agent image runs build/out/disco-agent.mjs,
// an app image runs what the suite's image table says (small Node stand-ins).
import { mkdirSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { basename, join } from "node:path";
import { AGENT_BIN } from "../../host/demo/binaries.ts";
import type { Pod } from "./netns.ts";
import { type PodProcess, startInPod, waitForPodProcess } from "./netns_process.ts";
import type { Doc } from "./netns_manifests.ts";
import { runProcess, tail, tempDir } from "./processes.ts";

/** What the node gets from the rest of the cluster. */
export interface KubeletContext {
  /** ConfigMaps a pod may mount, by name: file name → content. */
  configMaps: Record<string, Record<string, string>>;
  /** A projected service-account token (`serviceAccountToken` volume source). */
  serviceAccountToken(namespace: string, serviceAccount: string, audience: string, expirationSeconds: number): Promise<string>;
  /** The argv an app image runs (the image's entrypoint and the container's args), or undefined for an image the suite has no stand-in for. */
  appCommand(container: Doc, pod: Doc): string[] | undefined;
}

export interface RunningPod {
  doc: Doc;
  pod: Pod;
  /** Each container's process, by container name. */
  containers: Map<string, PodProcess>;
  /** Output of the init containers, by name. */
  initOutput: Map<string, string>;
}

const AGENT_IMAGE = /(^|\/)(disco-agent|proxyv2)(:|@|$)/;

/** The argv a container runs on this node. */
export function containerCommand(container: Doc, pod: Doc, ctx: KubeletContext): string[] {
  const isAgent = AGENT_IMAGE.test(String(container.image ?? "")) || basename(String(container.command?.[0] ?? "")) === "disco-agent";
  if (isAgent) return [process.execPath, AGENT_BIN, ...(container.command ? container.command.slice(1) : []), ...(container.args ?? [])];
  const app = ctx.appCommand(container, pod);
  if (app) return app;
  if (container.command?.length) return [...container.command, ...(container.args ?? [])];
  throw new Error(`pod ${pod.metadata.name}: no stand-in for container ${container.name}'s image ${container.image}`);
}

/** A downward-API field of the pod. */
function fieldOf(pod: Doc, path: string): string | undefined {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return pod.metadata?.[m[1]]?.[m[2]];
  const fields: Record<string, unknown> = {
    "metadata.name": pod.metadata.name,
    "metadata.namespace": pod.metadata.namespace,
    "metadata.uid": pod.metadata.uid ?? `uid-${pod.metadata.name}`,
    "spec.serviceAccountName": pod.spec.serviceAccountName ?? "default",
    "spec.nodeName": pod.spec.nodeName,
    "status.podIP": pod.status?.podIP,
    "status.hostIP": pod.status?.hostIP,
  };
  const v = fields[path];
  return v === undefined ? undefined : String(v);
}

/** `$(VAR)` references expanded from `vars` as the kubelet does (`$$` escapes; unknown references stay). */
export function expand(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (all, name: string | undefined) => (name === undefined ? "$" : (vars[name] ?? all)));
}

/** The container's environment, resolved in order (later entries may refer to earlier ones). */
export function containerEnv(container: Doc, pod: Doc): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = expand(String(e.value), env);
    else if (e.valueFrom?.fieldRef) {
      const v = fieldOf(pod, e.valueFrom.fieldRef.fieldPath);
      if (v !== undefined) env[e.name] = v;
    } else if (e.valueFrom?.resourceFieldRef) {
      // limits.cpu / limits.memory with the default divisor: whole cores, bytes.
      const limit = String(container.resources?.limits?.[e.valueFrom.resourceFieldRef.resource.replace(/^limits\./, "")] ?? "");
      env[e.name] = limit.endsWith("m") ? String(Math.ceil(Number(limit.slice(0, -1)) / 1000)) : limit || "0";
    }
  }
  return env;
}

/** Fills a volume's folder; returns false for an optional source that is absent (not mounted). */
async function fillVolume(volume: Doc, dir: string, pod: Doc, ctx: KubeletContext): Promise<boolean> {
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {};
  const add = (source: Doc | undefined) => {
    if (!source) return true;
    const data = ctx.configMaps[source.name];
    if (!data) return source.optional === true ? false : undefined;
    for (const [k, v] of Object.entries(data)) files[k] = v;
    return true;
  };
  if (volume.configMap && add(volume.configMap) !== true) {
    if (volume.configMap.optional) return false;
    throw new Error(`pod ${pod.metadata.name}: volume ${volume.name}: no ConfigMap ${volume.configMap.name}`);
  }
  if (volume.secret && !volume.secret.optional) throw new Error(`pod ${pod.metadata.name}: volume ${volume.name}: Secrets are not provided by this node`);
  for (const source of volume.projected?.sources ?? []) {
    if (source.serviceAccountToken) {
      const t = source.serviceAccountToken;
      files[t.path] = await ctx.serviceAccountToken(
        pod.metadata.namespace,
        pod.spec.serviceAccountName ?? "default",
        t.audience ?? "",
        t.expirationSeconds ?? 3600,
      );
    } else if (source.configMap && add(source.configMap) !== true && !source.configMap.optional)
      throw new Error(`pod ${pod.metadata.name}: volume ${volume.name}: no ConfigMap ${source.configMap.name}`);
  }
  for (const [k, v] of Object.entries(files)) writeFileSync(join(dir, k), v, { mode: 0o644 });
  return true;
}

/**
 * The shell lines that mount the container's volumes in its private mount
 * namespace (`ip netns exec` gives it one). Paths under /var/run (tokens, the
 * mesh root) go on a tmpfs over /run, as a container's own filesystem would
 * hold them; elsewhere a path is mounted only where it exists on the host.
 */
function mountScript(container: Doc, volumeDirs: Map<string, string>): string[] {
  const lines: string[] = [];
  const mounts = (container.volumeMounts ?? []).filter((m: Doc) => volumeDirs.has(m.name));
  const target = (p: string) => p.replace(/^\/var\/run(\/|$)/, "/run$1");
  if (mounts.some((m: Doc) => target(m.mountPath).startsWith("/run/"))) lines.push("mount -t tmpfs -o mode=755 tmpfs /run");
  for (const m of mounts) {
    const to = target(m.mountPath);
    const from = m.subPath ? join(volumeDirs.get(m.name)!, m.subPath) : volumeDirs.get(m.name)!;
    if (to.startsWith("/run/")) lines.push(`mkdir -p '${to}'`, `mount --bind '${from}' '${to}'`);
    else
      lines.push(
        `if [ -d '${to}' ]; then mount --bind '${from}' '${to}'; else echo 'kubelet: ${m.mountPath} not mounted (no such folder on this node)' >&2; fi`,
      );
  }
  return lines;
}

function userOf(container: Doc, pod: Doc): { uid: number; gid: number } | undefined {
  const uid = container.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser;
  if (uid === undefined || uid === 0) return undefined;
  return { uid, gid: container.securityContext?.runAsGroup ?? pod.spec.securityContext?.runAsGroup ?? uid };
}

/** The argv (for `ip netns exec <pod>`) that mounts the volumes, drops to the user and runs the command. */
function wrapped(container: Doc, pod: Doc, command: string[], volumeDirs: Map<string, string>): string[] {
  const user = userOf(container, pod);
  const script = [
    "set -e",
    ...mountScript(container, volumeDirs),
    user ? `exec setpriv --reuid=${user.uid} --regid=${user.gid} --clear-groups -- "$@"` : 'exec "$@"',
  ].join("\n");
  return ["sh", "-c", script, "sh", ...command];
}

function processEnv(container: Doc, pod: Doc): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: "/",
    HOSTNAME: pod.metadata.name,
    ...(process.env.MESH_TEST_RUN ? { MESH_TEST_RUN: process.env.MESH_TEST_RUN } : {}),
    ...containerEnv(container, pod),
  };
}

/** GET http://<pod ip>:<port><path> from the node; resolves with the status (0 when nothing answers). */
function probe(ip: string, port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get({ host: ip, port, path, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

function portNumber(port: unknown, container: Doc): number {
  if (typeof port === "number") return port;
  const named = (container.ports ?? []).find((p: Doc) => p.name === port);
  if (!named) throw new Error(`container ${container.name}: no port named ${String(port)}`);
  return named.containerPort;
}

/** Fills each volume of the pod in a folder of its own; returns the folders of the volumes to mount, by name. */
async function mountVolumes(doc: Doc, ctx: KubeletContext): Promise<Map<string, string>> {
  const root = tempDir(`e2m-pod-${doc.metadata.name}-`);
  const volumeDirs = new Map<string, string>();
  for (const v of doc.spec.volumes ?? []) {
    const dir = join(root, "volumes", v.name);
    if (await fillVolume(v, dir, doc, ctx)) volumeDirs.set(v.name, dir);
  }
  return volumeDirs;
}

/** Runs the init containers in order, each to its end; throws at the first that fails. Returns their output by name. */
export async function runInitContainers(doc: Doc, pod: Pod, ctx: KubeletContext, volumes?: Map<string, string>): Promise<Map<string, string>> {
  const volumeDirs = volumes ?? (await mountVolumes(doc, ctx));
  const output = new Map<string, string>();
  for (const c of doc.spec.initContainers ?? []) {
    const command = containerCommand(c, doc, ctx).map((a) => expand(a, containerEnv(c, doc)));
    const r = await runProcess("ip", ["netns", "exec", pod.netns, ...wrapped(c, doc, command, volumeDirs)], { env: processEnv(c, doc), cwd: "/" });
    output.set(c.name, r.stdout + r.stderr);
    if (r.status !== 0)
      throw new Error(`pod ${doc.metadata.name}: init container ${c.name} (${command.join(" ")}) exited ${r.status}:\n${tail(r.stdout + r.stderr)}`);
  }
  return output;
}

/**
 * Runs the pod: init containers in order to their end, `afterInit` (the
 * node's own rules for the pod), then every container; waits until each is ready.
 */
export async function startPod(doc: Doc, pod: Pod, ctx: KubeletContext, afterInit?: () => void): Promise<RunningPod> {
  const volumeDirs = await mountVolumes(doc, ctx);
  const running: RunningPod = { doc, pod, containers: new Map(), initOutput: await runInitContainers(doc, pod, ctx, volumeDirs) };
  afterInit?.();
  for (const c of doc.spec.containers ?? []) {
    const env = processEnv(c, doc);
    const argv = wrapped(
      c,
      doc,
      containerCommand(c, doc, ctx).map((a) => expand(a, env as Record<string, string>)),
      volumeDirs,
    );
    running.containers.set(c.name, startInPod(pod, c.name, argv, { env, cwd: "/" }));
  }
  for (const c of doc.spec.containers ?? []) {
    const p = running.containers.get(c.name)!;
    const ready = c.readinessProbe?.httpGet;
    if (ready) {
      const port = portNumber(ready.port, c);
      await waitForPodProcess(p, `readiness GET :${port}${ready.path}`, async () => (await probe(pod.ip, port, ready.path ?? "/")) === 200);
    } else if (ctx.appCommand(c, doc)) await waitForPodProcess(p, "its listening line", async () => p.output().includes("listening"));
  }
  return running;
}

/** Stops the pod's containers (SIGTERM, then SIGKILL after the grace period). */
export async function stopPod(p: RunningPod): Promise<void> {
  await Promise.all([...p.containers.values()].map((c) => c.stop()));
}
