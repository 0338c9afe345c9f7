// `meshctl orch-inject` produces pods that join the mesh (issue 24): the
// capture init container, the sidecar joined to disco-discovery, app probes
// pointed at the agent; upstream's samples inject cleanly and stay valid
// against the orchestrator's schema; annotations and revisions change what
// upstream's template would change.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { fixture, meshctl, tempFile } from "./cli_golden_support.ts";
import { orchSchemaErrors } from "../support/orch_schema.ts";

type Obj = Record<string, any>;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);
const pods = (text: string) => docs(text).filter((d) => d.kind === "Deployment" || d.kind === "Pod");
const podSpec = (d: Obj): Obj => (d.kind === "Pod" ? d.spec : d.spec.template.spec);
const podMeta = (d: Obj): Obj => (d.kind === "Pod" ? d.metadata : d.spec.template.metadata);
const sidecar = (d: Obj) => podSpec(d).containers.find((c: Obj) => c.name === "mesh-proxy");
const init = (d: Obj) => (podSpec(d).initContainers ?? []).find((c: Obj) => c.name === "mesh-init");
const env = (c: Obj) => Object.fromEntries(c.env.filter((e: Obj) => "value" in e).map((e: Obj) => [e.name, e.value]));
const flag = (args: string[], name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

const SAMPLES = ["upstream/samples/httpbin/httpbin.yaml", "upstream/samples/sleep/sleep.yaml", "upstream/samples/bookinfo/platform/kube/bookinfo.yaml"];

describe("orch-inject: upstream's samples", () => {
  for (const sample of SAMPLES) {
    test(`${sample}: every Deployment joins the mesh; the output validates against the orchestrator's schema`, async () => {
      const r = await meshctl(["orch-inject", "-f", sample]);
      assert.equal(r.status, 0, r.stderr);
      const input = docs(fixture(sample));
      const out = docs(r.stdout);
      const portless = out.filter((d) => d.kind === "Deployment" && !podSpec(d).containers.some((c: Obj) => c.name !== "mesh-proxy" && c.ports));
      assert.equal(
        r.stderr,
        portless
          .map(
            (d) =>
              `warning: ${sample}: Deployment ${d.metadata.name}: no container declares a port; the sidecar forwards inbound traffic to its default --appPort 8080\n`,
          )
          .join(""),
      );
      assert.equal(out.length, input.length);
      const deployments = out.filter((d) => d.kind === "Deployment");
      assert.ok(deployments.length >= 1);
      for (const d of deployments) {
        const serviceAccount = podSpec(d).serviceAccountName;
        assert.ok(init(d), `${d.metadata.name}: mesh-init`);
        assert.equal(sidecar(d).args[0], "proxy");
        assert.equal(flag(sidecar(d).args, "--discoveryAddress"), "disco-discovery.mesh-system.svc:15012");
        assert.equal(podMeta(d).labels["service.mesh.io/canonical-name"], podMeta(d).labels.app);
        assert.equal(podMeta(d).labels["service.mesh.io/canonical-revision"], podMeta(d).labels.version ?? "latest");
        assert.equal(podMeta(d).annotations["mesh.io/rev"], "default");
        assert.ok(serviceAccount, "the samples name their service account (the workload identity)");
      }
      for (const [i, d] of out.entries()) if (d.kind !== "Deployment") assert.deepEqual(d, input[i]);
      assert.deepEqual((await Promise.all(out.map(orchSchemaErrors))).flat(), []);
    });
  }
});

const POD = (annotations: Record<string, string>, containers = "  - name: app\n    image: app\n    ports:\n    - containerPort: 8080\n      name: http\n") =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n  annotations: ${JSON.stringify(annotations)}\nspec:\n  containers:\n${containers}`;

describe("orch-inject: capture annotations as upstream's template reads them", () => {
  test("traffic.sidecar.mesh.io/* and status.sidecar.mesh.io/port change the mesh-iptables arguments", async () => {
    const r = await meshctl(
      ["orch-inject", "-f", "-"],
      POD({
        "traffic.sidecar.mesh.io/includeInboundPorts": "8080,9090",
        "traffic.sidecar.mesh.io/excludeInboundPorts": "9999",
        "traffic.sidecar.mesh.io/includeOutboundIPRanges": "10.0.0.0/8,172.16.0.0/12",
        "traffic.sidecar.mesh.io/excludeOutboundIPRanges": "10.96.0.1/32",
        "traffic.sidecar.mesh.io/includeOutboundPorts": "443",
        "traffic.sidecar.mesh.io/excludeOutboundPorts": "3306,5432",
        "traffic.sidecar.mesh.io/excludeInterfaces": "eth1",
        "mesh.io/reroute-virtual-interfaces": "tap0",
        "status.sidecar.mesh.io/port": "15888",
      }),
    );
    assert.equal(r.status, 0, r.stderr);
    const [pod] = pods(r.stdout);
    assert.deepEqual(init(pod).args, [
      "mesh-iptables",
      "-p",
      "15001",
      "-z",
      "15006",
      "-u",
      "1337",
      "-m",
      "REDIRECT",
      "-i",
      "10.0.0.0/8,172.16.0.0/12",
      "-x",
      "10.96.0.1/32",
      "-b",
      "8080,9090",
      "-d",
      "15090,15021,9999,15888",
      "-q",
      "443",
      "-o",
      "3306,5432",
      "-k",
      "tap0",
      "-c",
      "eth1",
    ]);
    assert.equal(flag(sidecar(pod).args, "--statusPort"), "15888");
  });

  test("an excluded-ports list that already names the status port is kept as is", async () => {
    const r = await meshctl(["orch-inject", "-f", "-"], POD({ "traffic.sidecar.mesh.io/excludeInboundPorts": "15020,7000" }));
    assert.equal(flag(init(pods(r.stdout)[0]).args, "-d"), "15090,15021,15020,7000");
  });

  test("sidecar.mesh.io/interceptionMode: TPROXY is passed on and gives the proxy NET_ADMIN; NONE adds no init container", async () => {
    const tproxy = pods((await meshctl(["orch-inject", "-f", "-"], POD({ "sidecar.mesh.io/interceptionMode": "TPROXY" }))).stdout)[0];
    assert.equal(flag(init(tproxy).args, "-m"), "TPROXY");
    assert.deepEqual(sidecar(tproxy).securityContext.capabilities.add, ["NET_ADMIN"]);
    assert.equal(env(sidecar(tproxy)).MESH_META_INTERCEPTION_MODE, "TPROXY");
    const none = await meshctl(["orch-inject", "-f", "-"], POD({ "sidecar.mesh.io/interceptionMode": "NONE" }));
    assert.equal(none.status, 0, none.stderr);
    const pod = pods(none.stdout)[0];
    assert.equal(podSpec(pod).initContainers, undefined);
    assert.equal(JSON.parse(podMeta(pod).annotations["sidecar.mesh.io/status"]).initContainers, null);
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [
      { "traffic.sidecar.mesh.io/excludeInboundPorts": "80,http" },
      /Pod shop\/p: metadata\.annotations\[traffic\.sidecar\.mesh\.io\/excludeInboundPorts\]: expected a comma-separated list of ports \(1-65535\), got "80,http"/,
    ],
    [
      { "traffic.sidecar.mesh.io/includeOutboundIPRanges": "10.0.0.0/33" },
      /includeOutboundIPRanges\]: expected a comma-separated list of CIDRs such as 10\.0\.0\.0\/8, or "\*", got "10\.0\.0\.0\/33"/,
    ],
    [{ "sidecar.mesh.io/interceptionMode": "redirect" }, /interceptionMode\]: expected one of REDIRECT, TPROXY, NONE, got "redirect"/],
  ];
  for (const [annotations, error] of bad) {
    test(`a malformed annotation exits 2 naming it: ${JSON.stringify(annotations)}`, async () => {
      const r = await meshctl(["orch-inject", "-f", "-"], POD(annotations));
      assert.equal(r.status, 2);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, error);
    });
  }
});

describe("orch-inject: app probes go to the agent's status port", () => {
  const containers = [
    "  - name: web",
    "    image: web",
    "    ports:",
    "    - {name: http, containerPort: 8080}",
    "    readinessProbe:",
    "      httpGet: {path: /ready, port: http, httpHeaders: [{name: X-Probe, value: '1'}]}",
    "      periodSeconds: 3",
    "      timeoutSeconds: 2",
    "    livenessProbe:",
    "      tcpSocket: {port: 8080}",
    "    startupProbe:",
    "      exec: {command: [cat, /tmp/ready]}",
    "  - name: grpc",
    "    image: grpc",
    "    livenessProbe:",
    "      grpc: {port: 9000}",
    "",
  ].join("\n");

  test("httpGet (named port resolved), tcpSocket and grpc are rewritten; exec is left alone; the originals go to MESH_ORCH_APP_PROBERS", async () => {
    const r = await meshctl(["orch-inject", "-f", "-"], POD({}, containers));
    assert.equal(r.status, 0, r.stderr);
    const [pod] = pods(r.stdout);
    const [web, grpc] = podSpec(pod).containers;
    assert.deepEqual(web.readinessProbe, { httpGet: { path: "/app-health/web/readyz", port: 15020 }, periodSeconds: 3, timeoutSeconds: 2 });
    assert.deepEqual(web.livenessProbe, { httpGet: { path: "/app-health/web/livez", port: 15020 } });
    assert.deepEqual(web.startupProbe, { exec: { command: ["cat", "/tmp/ready"] } });
    assert.deepEqual(grpc.livenessProbe, { httpGet: { path: "/app-health/grpc/livez", port: 15020 } });
    assert.deepEqual(JSON.parse(env(sidecar(pod)).MESH_ORCH_APP_PROBERS), {
      "/app-health/web/readyz": { httpGet: { path: "/ready", port: 8080, httpHeaders: [{ name: "X-Probe", value: "1" }] }, timeoutSeconds: 2 },
      "/app-health/web/livez": { tcpSocket: { port: 8080 } },
      "/app-health/grpc/livez": { grpc: { port: 9000 } },
    });
    assert.deepEqual(await orchSchemaErrors(pod), []);
  });

  test('sidecar.mesh.io/rewriteAppHTTPProbers: "false" keeps the probes; values sidecarInjectorWebhook.rewriteAppHTTPProbe: false too', async () => {
    const off = pods((await meshctl(["orch-inject", "-f", "-"], POD({ "sidecar.mesh.io/rewriteAppHTTPProbers": "false" }, containers))).stdout)[0];
    assert.equal(podSpec(off).containers[0].livenessProbe.tcpSocket.port, 8080);
    assert.equal(env(sidecar(off)).MESH_ORCH_APP_PROBERS, undefined);
    const values = tempFile("sidecarInjectorWebhook:\n  rewriteAppHTTPProbe: false\n", "values.yaml");
    const viaValues = pods((await meshctl(["orch-inject", "-f", "-", "--valuesFile", values], POD({}, containers))).stdout)[0];
    assert.equal(podSpec(viaValues).containers[0].livenessProbe.tcpSocket.port, 8080);
  });
});

describe("orch-inject: control plane address and revision", () => {
  test("--revision names the revision's disco-discovery and marks the pod; the mesh config's discoveryAddress and values' caAddress win", async () => {
    const r = await meshctl(["orch-inject", "-f", "-", "--revision", "canary"], POD({}));
    assert.equal(r.status, 0, r.stderr);
    const [pod] = pods(r.stdout);
    assert.equal(flag(sidecar(pod).args, "--discoveryAddress"), "disco-discovery-canary.mesh-system.svc:15012");
    assert.equal(env(sidecar(pod)).CA_ADDR, "disco-discovery-canary.mesh-system.svc:15012");
    assert.equal(podMeta(pod).annotations["mesh.io/rev"], "canary");
    assert.equal(JSON.parse(podMeta(pod).annotations["sidecar.mesh.io/status"]).revision, "canary");
    const mesh = tempFile("defaultConfig:\n  discoveryAddress: cp.example.internal:15012\n", "mesh.yaml");
    const values = tempFile("global:\n  caAddress: ca.example.internal:15012\n", "values.yaml");
    const set = pods((await meshctl(["orch-inject", "-f", "-", "--meshConfigFile", mesh, "--valuesFile", values], POD({}))).stdout)[0];
    assert.equal(flag(sidecar(set).args, "--discoveryAddress"), "cp.example.internal:15012");
    assert.equal(env(sidecar(set)).CA_ADDR, "ca.example.internal:15012");
    const bad = await meshctl(["orch-inject", "-f", "-", "--revision", "Canary"], POD({}));
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--revision: expected a revision name/);
  });
});
