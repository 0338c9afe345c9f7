// `meshctl orch-inject`: golden tests of its command line, run in-process (test/cli/in_process.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import pkg from "../../package.json" with { type: "json" };
import { assertGolden, fixture, meshctl, tempFile } from "./cli_golden_support.ts";
import { orchSchemaErrors } from "../support/orch_schema.ts";

const VALUES = ["--valuesFile", "inject_values.yaml"];
const STATUS = "sidecar.mesh.io/status";

type Obj = Record<string, any>;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);

/** The pod template (metadata, spec) of a workload document. */
function template(doc: Obj): { metadata: Obj; spec: Obj } {
  if (doc.kind === "Pod") return doc as { metadata: Obj; spec: Obj };
  if (doc.kind === "CronJob") return doc.spec.jobTemplate.spec.template;
  return doc.spec.template;
}

describe("orch-inject: workloads", async () => {
  const run = await meshctl(["orch-inject", "-f", "inject_workloads.in.yaml", ...VALUES]);

  test("every pod-template kind is injected; output matches the golden file", async () => {
    assert.equal(run.status, 0, run.stderr);
    assertGolden(run.stdout, "inject_workloads.out.yaml");
    assert.equal(
      run.stderr,
      "warning: inject_workloads.in.yaml: Job shop/migrate: no container declares a port; the sidecar forwards inbound traffic to its default --appPort 8080\n",
    );
  });

  const expectedAppPort: Record<string, string | undefined> = {
    Deployment: "8080",
    Pod: "9000",
    StatefulSet: "5432",
    DaemonSet: "2020",
    ReplicaSet: "6379",
    Job: undefined,
    CronJob: "8081",
    ReplicationController: "3000",
  };
  for (const [kind, appPort] of Object.entries(expectedAppPort)) {
    test(`${kind}: sidecar container, volume and status annotation`, async () => {
      const doc = docs(run.stdout).find((d) => d.kind === kind && d.apiVersion !== "example.com/v1")!;
      const { metadata, spec } = template(doc);
      const sidecar = spec.containers.at(-1);
      assert.equal(spec.containers.length, 2);
      assert.equal(sidecar.name, "mesh-proxy");
      assert.equal(sidecar.image, "registry.example.com/mesh/disco-agent:1.4.2");
      const flag = (name: string) => (sidecar.args.includes(name) ? sidecar.args[sidecar.args.indexOf(name) + 1] : undefined);
      assert.deepEqual(sidecar.args.slice(0, 2), ["proxy", "sidecar"]);
      assert.equal(flag("--discoveryAddress"), "disco-discovery.mesh-system.svc:15012");
      assert.equal(flag("--domain"), "$(POD_NAMESPACE).svc.cluster.local");
      assert.equal(flag("--tokenPath"), "/var/run/secrets/tokens/mesh-token");
      assert.equal(flag("--caRootCert"), "/var/run/secrets/mesh/root-cert.pem");
      assert.deepEqual(["--inboundPort", "--outboundPort", "--proxyAdminPort", "--statusPort"].map(flag), ["15006", "15001", "15000", "15020"]);
      assert.equal(flag("--appPort"), appPort);
      assert.equal(flag("--configDir"), undefined, "configuration comes from the control plane");
      const env = Object.fromEntries(sidecar.env.map((e: Obj) => [e.name, e.value ?? `fieldRef:${e.valueFrom.fieldRef.fieldPath}`]));
      assert.equal(env.CA_ADDR, "disco-discovery.mesh-system.svc:15012");
      assert.equal(env.POD_NAME, "fieldRef:metadata.name");
      assert.equal(env.POD_NAMESPACE, "fieldRef:metadata.namespace");
      assert.equal(env.INSTANCE_IP, "fieldRef:status.podIP");
      assert.equal(env.SERVICE_ACCOUNT, "fieldRef:spec.serviceAccountName");
      assert.equal(env.MESH_META_CLUSTER_ID, "Kubernetes");
      assert.equal(env.MESH_META_INTERCEPTION_MODE, "REDIRECT");
      assert.deepEqual(sidecar.readinessProbe.httpGet, { path: "/healthz/ready", port: 15021 });
      assert.deepEqual(
        sidecar.ports.map((p: Obj) => p.containerPort),
        [15090],
      );
      assert.deepEqual([sidecar.securityContext.runAsUser, sidecar.securityContext.runAsGroup, sidecar.securityContext.runAsNonRoot], [1337, 1337, true]);
      assert.deepEqual(sidecar.resources, { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "1", memory: "256Mi" } });
      assert.deepEqual(
        sidecar.volumeMounts.map((m: Obj) => [m.name, m.mountPath]),
        [
          ["disco-ca-cert", "/var/run/secrets/mesh"],
          ["mesh-token", "/var/run/secrets/tokens"],
        ],
      );
      assert.deepEqual(spec.volumes.slice(-2), [
        { name: "disco-ca-cert", configMap: { name: "mesh-ca-root-cert" } },
        { name: "mesh-token", projected: { sources: [{ serviceAccountToken: { audience: "mesh-ca", expirationSeconds: 43200, path: "mesh-token" } }] } },
      ]);
      const init = spec.initContainers.at(-1);
      assert.equal(init.name, "mesh-init");
      assert.deepEqual(init.args, [
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
        "*",
        "-x",
        "",
        "-b",
        "*",
        "-d",
        "15090,15021,15020",
      ]);
      assert.deepEqual(init.securityContext.capabilities, { add: ["NET_ADMIN", "NET_RAW"], drop: ["ALL"] });
      assert.equal(init.securityContext.runAsUser, 0);
      assert.equal(metadata.labels["security.mesh.io/tlsMode"], "mesh");
      const status = JSON.parse(metadata.annotations[STATUS]);
      assert.deepEqual(status.initContainers, ["mesh-init"]);
      assert.deepEqual(status.containers, ["mesh-proxy"]);
      assert.deepEqual(status.volumes, ["disco-ca-cert", "mesh-token"]);
      assert.match(status.version, /^[0-9a-f]{64}$/);
    });
  }

  test("other kinds pass through byte for byte and in order", async () => {
    const kinds = docs(run.stdout).map((d) => `${d.apiVersion}/${d.kind}`);
    assert.deepEqual(
      kinds,
      docs(fixture("inject_workloads.in.yaml")).map((d) => `${d.apiVersion}/${d.kind}`),
    );
    const input = fixture("inject_workloads.in.yaml");
    for (const name of ["kind: Namespace", "kind: Service", "kind: ConfigMap", "apiVersion: example.com/v1"]) {
      const start = input.lastIndexOf("---", input.indexOf(name));
      const end = input.indexOf("---", input.indexOf(name));
      const chunk = input.slice(start, end < 0 ? undefined : end);
      assert.ok(run.stdout.includes(chunk), `${name} document changed`);
    }
    assert.ok(run.stdout.startsWith("# Every pod-template kind"), "leading comment kept");
    assert.ok(run.stdout.includes("app: web # routed by the Service below"), "comment in an injected document kept");
  });

  test("idempotent: injecting the output again changes nothing", async () => {
    const again = await meshctl(["orch-inject", "-f", "inject_workloads.out.yaml", ...VALUES]);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.stdout, fixture("inject_workloads.out.yaml"));
    const skipped = again.stderr.split("\n").filter((l) => l.includes(`skipping injection: already injected (annotation ${STATUS})`));
    assert.equal(skipped.length, 8);
  });

  test("a template that already has the sidecar container (no annotation) is left alone", async () => {
    const doc = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: hand-made\nspec:\n  containers:\n  - name: app\n  - name: mesh-proxy\n    image: mine\n`;
    const r = await meshctl(["orch-inject", "-f", "-"], doc);
    assert.equal(r.status, 0);
    assert.equal(r.stdout, doc);
    assert.equal(r.stderr, "skipped: <stdin>: Pod hand-made: skipping injection: already has a container named mesh-proxy\n");
  });
});

describe("orch-inject: skipped templates", async () => {
  test('opt-out annotation, hostNetwork, kube-system and unrecognized annotation values are skipped; inject: "true" is injected', async () => {
    const r = await meshctl(["orch-inject", "-f", "inject_skips.in.yaml", ...VALUES]);
    assert.equal(r.status, 0, r.stderr);
    assertGolden(r.stdout, "inject_skips.out.yaml");
    assert.deepEqual(r.stderr.trimEnd().split("\n"), [
      'skipped: inject_skips.in.yaml: Deployment shop/opted-out: skipping injection: sidecar injection disabled by annotation sidecar.mesh.io/inject: "false"',
      "skipped: inject_skips.in.yaml: DaemonSet shop/node-agent: skipping injection: the pod uses hostNetwork",
      "skipped: inject_skips.in.yaml: Pod kube-system/dns-probe: skipping injection: namespace kube-system is never injected",
      'warning: inject_skips.in.yaml: Pod shop/maybe: annotation sidecar.mesh.io/inject: "sometimes" is not true or false; treated as false',
    ]);
    const out = docs(r.stdout);
    const input = docs(fixture("inject_skips.in.yaml"));
    for (let i = 0; i < 4; i++) assert.deepEqual(out[i], input[i], `${input[i].metadata.name} unchanged`);
    assert.equal(out[4].spec.containers.at(-1).name, "mesh-proxy");
  });
});

describe("orch-inject: settings files", async () => {
  test("--injectConfigFile, --meshConfigFile and --valuesFile shape the sidecar", async () => {
    const r = await meshctl([
      "orch-inject",
      "-f",
      "inject_settings.in.yaml",
      ...VALUES,
      "--meshConfigFile",
      "inject_mesh_config.yaml",
      "--injectConfigFile",
      "inject_config.yaml",
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, "");
    assertGolden(r.stdout, "inject_settings.out.yaml");
  });

  test("without settings files the built-in defaults apply", async () => {
    const r = await meshctl(["orch-inject", "-f", "inject_settings.in.yaml"]);
    assert.equal(r.status, 0, r.stderr);
    const sidecar = template(docs(r.stdout)[0]).spec.containers.at(-1);
    assert.equal(sidecar.image, `docker.io/mesh/disco-agent:${pkg.version}`);
    assert.equal(sidecar.imagePullPolicy, "IfNotPresent");
    assert.ok(sidecar.args.includes("hub_server=mesh-hub.mesh-system.svc.cluster.local:9091"));
    assert.deepEqual(sidecar.resources, { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "2000m", memory: "1024Mi" } });
    assert.deepEqual(sidecar.readinessProbe, {
      httpGet: { path: "/healthz/ready", port: 15021 },
      initialDelaySeconds: 1,
      periodSeconds: 2,
      failureThreshold: 30,
    });
  });

  test("a values image with a registry path is used as is; unknown settings fields are warned about", async () => {
    const values = tempFile("global:\n  tag: 9.9\n  proxy:\n    image: other.example.com/team/agent\n    imagge: typo\n", "values.yaml");
    const inject = tempFile("containerName: side\nextraArg: [--x]\n", "inject.yaml");
    const r = await meshctl(["orch-inject", "-f", "inject_settings.in.yaml", "--valuesFile", values, "--injectConfigFile", inject]);
    assert.equal(r.status, 0, r.stderr);
    const sidecar = template(docs(r.stdout)[0]).spec.containers.at(-1);
    assert.equal(sidecar.name, "side");
    assert.equal(sidecar.image, "other.example.com/team/agent:9.9");
    assert.match(r.stderr, /^warning: .*inject\.yaml: extraArg: unknown field \(known: containerName, .*\)$/m);
  });
});

test("orch-inject: values' global.proxy.clusterDomain (upstream's) gives the agent --domain <namespace>.svc.<domain> and the hub's address in it", async () => {
  const values = tempFile("global:\n  proxy:\n    clusterDomain: example.internal\n", "values.yaml");
  const r = await meshctl(["orch-inject", "-f", "inject_settings.in.yaml", "--valuesFile", values]);
  assert.equal(r.status, 0, r.stderr);
  const args: string[] = template(docs(r.stdout)[0]).spec.containers.at(-1).args;
  assert.equal(args[args.indexOf("--domain") + 1], "$(POD_NAMESPACE).svc.example.internal");
  assert.ok(args.includes("hub_server=mesh-hub.mesh-system.svc.example.internal:9091"), args.join(" "));
  const plain = await meshctl(["orch-inject", "-f", "inject_settings.in.yaml"]);
  const plainArgs: string[] = template(docs(plain.stdout)[0]).spec.containers.at(-1).args;
  assert.equal(plainArgs[plainArgs.indexOf("--domain") + 1], "$(POD_NAMESPACE).svc.cluster.local", "as upstream's template: always given");
});

test("orch-inject: the mesh config's defaultConfig.image names the repository; one with a tag is used as is", async () => {
  for (const [image, expected] of [
    ["mirror.example.com/agent", "mirror.example.com/agent:1.4.2"],
    ["mirror.example.com:5000/agent:pinned", "mirror.example.com:5000/agent:pinned"],
  ]) {
    const mesh = tempFile(`defaultConfig:\n  image: ${image}\n`, "mesh.yaml");
    const r = await meshctl(["orch-inject", "-f", "inject_settings.in.yaml", ...VALUES, "--meshConfigFile", mesh]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(template(docs(r.stdout)[0]).spec.containers.at(-1).image, expected);
  }
});

describe("orch-inject: input and output", async () => {
  test("-f - reads stdin; -o writes a file", async () => {
    const out = join(tempFile(""), "..", "out.yaml");
    const r = await meshctl(["orch-inject", "-f", "-", "-o", out, ...VALUES], fixture("inject_workloads.in.yaml"));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "");
    assert.equal(readFileSync(out, "utf8"), fixture("inject_workloads.out.yaml"));
    assert.match(r.stderr, /^warning: <stdin>: Job shop\/migrate: /);
  });

  test("JSON input and kind: List items are injected; the result is YAML", async () => {
    const list = JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: { containers: [{ name: "app", ports: [{ containerPort: 7000 }] }] } },
        { apiVersion: "v1", kind: "Service", metadata: { name: "a" }, spec: { ports: [{ port: 80 }] } },
      ],
    });
    const r = await meshctl(["orch-inject", "-f", "-", ...VALUES], list);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!r.stdout.trimStart().startsWith("{"), "printed as block YAML");
    const out = parse(r.stdout);
    assert.deepEqual(
      out.items[0].spec.containers.map((c: Obj) => c.name),
      ["app", "mesh-proxy"],
    );
    assert.ok(out.items[0].spec.containers[1].args.includes("7000"));
    assert.deepEqual(out.items[1], JSON.parse(list).items[1]);
  });
});

test("orch-inject: a ConfigMap name without its file needs an orchestrator API: exit 69", async () => {
  const r = await meshctl(["orch-inject", "-f", "inject_settings.in.yaml", "--meshConfigMapName", "mesh"]);
  assert.equal(r.status, 69);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    /meshctl orch-inject --meshConfigMapName: this command needs an orchestrator API, which is not available here; use --meshConfigFile offline instead/,
  );
});

describe("orch-inject: bad input exits 2, names file and field, writes nothing", async () => {
  const deployment = (podSpec: string, annotations = "") =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    metadata:\n${annotations || "      labels: {app: web}\n"}    spec:\n${podSpec}`;
  const rows: Array<{ name: string; args: () => string[]; error: RegExp }> = [
    { name: "YAML syntax error", args: () => ["-f", tempFile("a: [1,\n", "bad.yaml")], error: /bad\.yaml: document 1: expected valid YAML or JSON/ },
    {
      name: "document without kind",
      args: () => [
        "-f",
        tempFile("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: a}]}\n---\napiVersion: v1\nmetadata: {name: b}\n", "nokind.yaml"),
      ],
      error: /nokind\.yaml: document 2: kind: expected a string, got nothing/,
    },
    {
      name: "Deployment without containers",
      args: () => ["-f", tempFile(deployment("      restartPolicy: Always\n"), "d.yaml")],
      error: /d\.yaml: Deployment shop\/web: spec\.template\.spec\.containers: expected a non-empty list, got nothing/,
    },
    {
      name: "containerPort not a number",
      args: () => ["-f", tempFile(deployment("      containers:\n      - name: web\n        ports:\n        - containerPort: http\n"), "d.yaml")],
      error: /Deployment shop\/web: spec\.template\.spec\.containers\[0\]\.ports\[0\]\.containerPort: expected an integer from 1 to 65535, got "http"/,
    },
    {
      name: "annotation value not a string",
      args: () => [
        "-f",
        tempFile(deployment("      containers:\n      - name: web\n", "      annotations:\n        sidecar.mesh.io/inject: false\n"), "d.yaml"),
      ],
      error: /spec\.template\.metadata\.annotations\[sidecar\.mesh\.io\/inject\]: expected a string, got false/,
    },
    {
      name: "bad values field",
      args: () => ["-f", "inject_settings.in.yaml", "--valuesFile", tempFile("global:\n  proxy:\n    statusPort: status\n", "values.yaml")],
      error: /values\.yaml: global\.proxy\.statusPort: expected an integer from 1 to 65535, got "status"/,
    },
    {
      name: "bad values clusterDomain",
      args: () => ["-f", "inject_settings.in.yaml", "--valuesFile", tempFile("global:\n  proxy:\n    clusterDomain: .local\n", "values.yaml")],
      error: /values\.yaml: global\.proxy\.clusterDomain: expected a DNS domain such as cluster\.local, got "\.local"/,
    },
    {
      name: "bad mesh config duration",
      args: () => ["-f", "inject_settings.in.yaml", "--meshConfigFile", tempFile("defaultConfig:\n  drainDuration: soon\n", "mesh.yaml")],
      error: /mesh\.yaml: defaultConfig\.drainDuration: expected a duration such as "45s" or "1m0s", got "soon"/,
    },
    {
      name: "settings file that is a list",
      args: () => ["-f", "inject_settings.in.yaml", "--injectConfigFile", tempFile("- a\n", "inject.yaml")],
      error: /inject\.yaml: \(document\): expected an object, got a list/,
    },
    { name: "missing input file", args: () => ["-f", "no-such-file.yaml"], error: /no-such-file\.yaml: \(file\): expected a readable file, got ENOENT/ },
    {
      name: "--injectConfigFile with --injectConfigMapName",
      args: () => ["-f", "inject_settings.in.yaml", "--injectConfigFile", "inject_config.yaml", "--injectConfigMapName", "x"],
      error: /--injectConfigFile cannot be used with --injectConfigMapName/,
    },
    { name: "no -f", args: () => [], error: /required option '-f, --filename <file>' not specified/ },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const r = await meshctl(["orch-inject", ...row.args()]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, row.error);
    });
  }
});

test("orch-inject: the injected workloads still validate against the orchestrator's OpenAPI schema", async () => {
  const r = await meshctl(["orch-inject", "-f", "inject_workloads.in.yaml", ...VALUES]);
  assert.equal(r.status, 0, r.stderr);
  const builtIn = docs(r.stdout).filter((d) => !/example\.com|openshift/.test(String(d.apiVersion)));
  assert.ok(builtIn.length >= 8);
  assert.deepEqual((await Promise.all(builtIn.map(orchSchemaErrors))).flat(), []);
});

test("kube-inject (upstream's name) is orch-inject", async () => {
  const upstream = await meshctl(["kube-inject", "-f", "inject_workloads.in.yaml", ...VALUES]);
  assert.equal(upstream.status, 0, upstream.stderr);
  assert.equal(upstream.stdout, (await meshctl(["orch-inject", "-f", "inject_workloads.in.yaml", ...VALUES])).stdout);
});
