// The kubelet stand-in (test/support/netns_kubelet.ts) on a Pod shaped as
// the injector's: its capture init container runs `disco-agent mesh-iptables`
// in the pod's network namespace as root before any container starts; a
// container runs as its securityContext's user, with its env (downward-API
// fields, `$(VAR)` expansion) and its volumes (a projected service-account
// token, a ConfigMap) at their paths; the capture sends the app's outbound
// connections to the proxy's port and leaves uid 1337's alone.
// On the Pod `meshctl orch-inject` makes of upstream's httpbin, the rules its
// mesh-init container leaves in the pod are exactly those its args describe
// (`disco-agent mesh-iptables … --dry-run`).
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { after, describe, it } from "node:test";
import { PodNetwork } from "../../support/netns.ts";
import { runInitContainers, startPod } from "../../support/netns_kubelet.ts";
import { runInPod, startInPod, waitForPodProcess } from "../../support/netns_process.ts";
import { waitFor } from "../../support/processes.ts";
import { inNamespace, orchInject, podsOf, readManifest, withStatus } from "../../support/netns_manifests.ts";
import { AGENT_BIN } from "../../../host/demo/binaries.ts";
import { SAMPLES } from "./mesh_support.ts";

/** nat rules by chain, in order, each as a sorted bag of its words (`-m tcp` dropped): the dry run's and iptables-save's spellings compare equal. */
function rulesByChain(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of text.split("\n").filter((l) => l.startsWith("-A "))) {
    const [, chain, ...rest] = line
      .replace(/ -m tcp(?= )/g, "")
      .trim()
      .split(/\s+/);
    (out[chain] ??= []).push(rest.sort().join(" "));
  }
  return out;
}

const CAPTURE_ARGS = ["mesh-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"];
const field = (fieldPath: string) => ({ valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } });

describe("the kubelet stand-in runs an injected Pod in its network namespace", () => {
  const net = new PodNetwork();
  after(() => net.remove());

  it("init container first (capture rules), then the container as uid 1337 with its env and volumes", async () => {
    const pod = net.addPod("web-0", "shop");
    const doc = withStatus(
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web-0", namespace: "shop", labels: { app: "web" } },
        spec: {
          serviceAccountName: "web",
          initContainers: [{ name: "mesh-init", image: "docker.io/mesh/disco-agent:0.1.0", args: CAPTURE_ARGS, securityContext: { runAsUser: 0 } }],
          containers: [
            {
              name: "probe",
              image: "busybox",
              command: [
                "sh",
                "-c",
                'echo "uid=$(id -u) gid=$(id -g) pod=$(POD_NAME).$POD_NAMESPACE ip=$INSTANCE_IP sa=$SERVICE_ACCOUNT"; cat /var/run/secrets/mesh/root-cert.pem; echo; cat /var/run/secrets/tokens/mesh-token; echo; echo listening; exec sleep 3600',
              ],
              env: [
                { name: "POD_NAME", ...field("metadata.name") },
                { name: "POD_NAMESPACE", ...field("metadata.namespace") },
                { name: "INSTANCE_IP", ...field("status.podIP") },
                { name: "SERVICE_ACCOUNT", ...field("spec.serviceAccountName") },
              ],
              securityContext: { runAsUser: 1337, runAsGroup: 1337 },
              volumeMounts: [
                { name: "mesh-token", mountPath: "/var/run/secrets/tokens" },
                { name: "disco-ca-cert", mountPath: "/var/run/secrets/mesh" },
              ],
            },
          ],
          volumes: [
            { name: "disco-ca-cert", configMap: { name: "mesh-ca-root-cert" } },
            { name: "mesh-token", projected: { sources: [{ serviceAccountToken: { audience: "mesh-ca", expirationSeconds: 43200, path: "mesh-token" } }] } },
          ],
        },
      },
      pod.ip,
      net.gateway,
    );
    const tokens: string[] = [];
    const running = await startPod(doc, pod, {
      configMaps: { "mesh-ca-root-cert": { "root-cert.pem": "ROOT-PEM" } },
      serviceAccountToken: async (ns, sa, aud, exp) => {
        tokens.push(`${ns}/${sa}/${aud}/${exp}`);
        return "TOKEN";
      },
      appCommand: () => undefined,
    });
    const probe = running.containers.get("probe")!;
    await waitFor("the probe container's output", () => probe.output().includes("TOKEN"));
    assert.match(probe.output(), new RegExp(`uid=1337 gid=1337 pod=web-0.shop ip=${pod.ip.replaceAll(".", "\\.")} sa=web`));
    assert.match(probe.output(), /ROOT-PEM/);
    assert.deepEqual(tokens, ["shop/web/mesh-ca/43200"]);

    const nat = (await runInPod(pod, ["iptables-save", "-t", "nat"])).stdout;
    for (const chain of ["MESH_INBOUND", "MESH_REDIRECT", "MESH_IN_REDIRECT", "MESH_OUTPUT"]) assert.match(nat, new RegExp(`^:${chain} `, "m"), nat);
    assert.match(nat, /-A MESH_OUTPUT -m owner --uid-owner 1337 -j RETURN/);
    assert.match(nat, /-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001/);
  });

  it("the capture sends the app's outbound connection to the proxy's port, not uid 1337's", async () => {
    const pod = net.pod("web-0", "shop");
    // A listener on 15001 inside the pod stands for the proxy's outbound port; the destination (host side) answers for itself.
    const destination: Server = createServer((s) => s.end("destination"));
    await new Promise<void>((r) => destination.listen(18080, net.gateway, r));
    const proxy = startInPod(pod, "proxy", [
      process.execPath,
      "-e",
      'require("net").createServer((s)=>s.end("proxy")).listen(15001,"127.0.0.1",()=>console.log("listening"))',
    ]);
    try {
      await waitForPodProcess(proxy, "the outbound port", async () => proxy.output().includes("listening"));
      const connect = `require("net").connect(18080,"${net.gateway}").on("data",(d)=>{process.stdout.write(d);process.exit(0)}).on("error",(e)=>{console.error(e.message);process.exit(1)})`;
      const app = await runInPod(pod, [process.execPath, "-e", connect]);
      assert.equal(app.stdout, "proxy", app.stderr);
      const own = await runInPod(pod, [process.execPath, "-e", connect], { user: { uid: 1337, gid: 1337 } });
      assert.equal(own.stdout, "destination", own.stderr);
    } finally {
      await proxy.stop();
      destination.close();
    }
  });

  it("orch-inject's httpbin Pod: its mesh-init container leaves in the pod exactly the rules its args describe", async () => {
    const [doc] = podsOf(await orchInject(inNamespace(readManifest(SAMPLES.httpbin), "foo")));
    const init = doc.spec.initContainers?.find((c: { name: string }) => c.name === "mesh-init");
    assert.ok(init, "orch-inject adds the mesh-init container");
    assert.deepEqual(init.securityContext.capabilities.add, ["NET_ADMIN", "NET_RAW"]);
    const pod = net.addPod(doc.metadata.name, "foo");
    await runInitContainers(withStatus(doc, pod.ip, net.gateway), pod, {
      configMaps: { "mesh-ca-root-cert": { "root-cert.pem": "ROOT-PEM" } },
      serviceAccountToken: async () => "TOKEN",
      appCommand: () => undefined,
    });
    const described = await runInPod(pod, [process.execPath, AGENT_BIN, ...init.args, "--dry-run"]);
    assert.equal(described.status, 0, described.stderr);
    const applied = (await runInPod(pod, ["iptables-save", "-t", "nat"])).stdout;
    assert.deepEqual(rulesByChain(applied), rulesByChain(described.stdout));
    assert.ok((rulesByChain(applied).MESH_OUTPUT ?? []).length > 0, applied);
  });
});
