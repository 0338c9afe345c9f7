// `meshctl manifest generate | diff | migrate`, run in-process: the rendered
// install is what the orchestrator's schemas accept, the CRDs are structural
// and serve what the catalog serves, profiles and overrides take effect.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Ajv } from "ajv";
import { parseAllDocuments } from "yaml";
import { KIND_API_VERSIONS } from "../../host/config/catalog.ts";
import { orchSchemaErrors } from "../support/orch_schema.ts";
import { tempDir } from "../support/processes.ts";
import { structuralSchemaErrors } from "../support/structural_schema.ts";
import { FIXTURES } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";

// The renderings below are those of a clean environment: NAMESPACE and JWT_POLICY (spec 2 column CT) would change them (test/cli/ct_variables.test.ts).
delete process.env.NAMESPACE;
delete process.env.JWT_POLICY;

type Obj = Record<string, any>;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);
const generate = async (...args: string[]) => {
  const r = await meshctlInProcess(["manifest", "generate", ...args]);
  assert.equal(r.status, 0, r.stderr);
  return docs(r.stdout);
};
const names = (objects: Obj[]) => objects.map((o) => `${o.kind}:${o.metadata.namespace ?? ""}:${o.metadata.name}`);
const deployment = (objects: Obj[], name: string) => objects.find((o) => o.kind === "Deployment" && o.metadata.name === name);

describe("manifest generate", async () => {
  const all = await generate();

  it("every built-in object validates against the orchestrator's OpenAPI schema", async () => {
    const errors = (await Promise.all(all.map(orchSchemaErrors))).flat();
    assert.deepEqual(errors, []);
    assert.deepEqual([...new Set(all.map((o) => o.kind))].sort(), [
      "ClusterRole",
      "ClusterRoleBinding",
      "ConfigMap",
      "CustomResourceDefinition",
      "Deployment",
      "MutatingWebhookConfiguration",
      "Service",
      "ServiceAccount",
      "ValidatingWebhookConfiguration",
    ]);
  });

  it("the schema check catches what the API server would refuse", async () => {
    const bad = structuredClone(deployment(all, "mesh-disco")!);
    bad.spec.template.spec.containers[0].ports[0].containerPort = "http";
    assert.match((await orchSchemaErrors(bad)).join("\n"), /containerPort must be integer/);
  });

  it("a CRD for every mesh kind the catalog decodes, serving the catalog's versions, one stored", () => {
    const crds = all.filter((o) => o.kind === "CustomResourceDefinition");
    const meshKinds = Object.entries(KIND_API_VERSIONS).filter(([, v]) => v.includes(".mesh.io/"));
    assert.deepEqual(crds.map((c) => c.spec.names.kind).sort(), meshKinds.map(([k]) => k).sort());
    for (const crd of crds) {
      const stored = crd.spec.versions.filter((v: Obj) => v.storage);
      assert.equal(stored.length, 1, crd.metadata.name);
      assert.equal(`${crd.spec.group}/${stored[0].name}`, KIND_API_VERSIONS[crd.spec.names.kind as keyof typeof KIND_API_VERSIONS]);
      assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
    }
    const versions = (kind: string) => crds.find((c) => c.spec.names.kind === kind)!.spec.versions.map((v: Obj) => v.name);
    assert.deepEqual(versions("VirtualService"), ["v1alpha3", "v1beta1", "v1"]);
    assert.deepEqual(versions("AuthorizationPolicy"), ["v1beta1", "v1"]);
    assert.deepEqual(versions("QuotaSpec"), ["v1alpha2"]);
  });

  it("every CRD schema is structural", () => {
    for (const crd of all.filter((o) => o.kind === "CustomResourceDefinition")) {
      for (const v of crd.spec.versions) assert.deepEqual(structuralSchemaErrors(v.schema.openAPIV3Schema), [], `${crd.metadata.name} ${v.name}`);
    }
  });

  it("the structural check finds the usual mistakes", () => {
    const errors = structuralSchemaErrors({
      type: "object",
      properties: {
        spec: {
          properties: {
            a: { type: "array" },
            b: { type: "string", "x-kubernetes-preserve-unknown-fields": true },
            c: { type: "object", additionalProperties: false },
          },
          "x-istio-thing": true,
        },
        status: { type: "object", anyOf: [{ type: "object", properties: { d: { type: "string" } } }] },
        metadata: { type: "object", properties: { labels: { type: "object" } } },
      },
    });
    for (const expected of [
      "openAPIV3Schema.properties.spec: no type",
      "openAPIV3Schema.properties.spec.properties.a: an array without items",
      "openAPIV3Schema.properties.spec.properties.b: x-kubernetes-preserve-unknown-fields on a string",
      "openAPIV3Schema.properties.spec.properties.c.additionalProperties: false is not allowed",
      "openAPIV3Schema.properties.spec.x-istio-thing: not an extension the orchestrator knows",
      "openAPIV3Schema.properties.status.anyOf[0].type: not allowed inside allOf, anyOf, oneOf or not",
      "openAPIV3Schema.properties.status.anyOf[0].properties.d: not specified outside the junctor",
      "openAPIV3Schema.properties.metadata.properties.labels: only name and generateName may be restricted",
    ])
      assert.ok(errors.includes(expected), `${expected}\n in ${errors.join("\n")}`);
  });

  it("upstream's samples (renamed) are accepted by the CRD schemas of their kinds", () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const crds = new Map(all.filter((o) => o.kind === "CustomResourceDefinition").map((c) => [c.spec.names.kind, c]));
    let checked = 0;
    const files = readdirSync(join(FIXTURES, "upstream"), { recursive: true, encoding: "utf8" }).filter((f) => /\.ya?ml$/.test(f));
    for (const file of files) {
      for (const d of docs(readFileSync(join(FIXTURES, "upstream", file), "utf8"))) {
        const crd = crds.get(d.kind);
        if (!crd || !String(d.apiVersion).startsWith(`${crd.spec.group}/`)) continue;
        const version = crd.spec.versions.find((v: Obj) => `${crd.spec.group}/${v.name}` === d.apiVersion);
        assert.ok(version, `${file}: ${d.apiVersion} ${d.kind} not served`);
        const validate = ajv.compile(version.schema.openAPIV3Schema);
        assert.ok(validate(d), `${file}: ${d.kind} ${d.metadata.name}: ${ajv.errorsText(validate.errors)}`);
        checked++;
      }
    }
    assert.ok(checked >= 20, `only ${checked} samples checked`);
  });

  it("disco-discovery, hubs and mesh_ca: Deployment, Service, ServiceAccount, cluster RBAC; the webhooks call disco-discovery's /inject and /validate", () => {
    for (const [app, sa] of [
      ["mesh-disco", "mesh-disco-service-account"],
      ["mesh-hub", "mesh-hub-service-account"],
      ["mesh-ca", "mesh-ca-service-account"],
    ]) {
      for (const id of [
        `Deployment:mesh-system:${app}`,
        `Service:mesh-system:${app}`,
        `ServiceAccount:mesh-system:${sa}`,
        `ClusterRole::${app}-mesh-system`,
        `ClusterRoleBinding::${app}-mesh-system`,
      ]) {
        assert.ok(names(all).includes(id), id);
      }
    }
    const disco = deployment(all, "mesh-disco")!.spec.template.spec.containers[0];
    assert.equal(disco.image, "docker.io/mesh/disco-discovery:0.1.0");
    assert.deepEqual(disco.args.slice(0, 5), ["discovery", "--configDir", "/etc/mesh/resources", "--registries", "Mock"]);
    assert.equal(deployment(all, "mesh-hub")!.spec.template.spec.containers[0].args[0], "server");
    const inject = all.find((o) => o.kind === "MutatingWebhookConfiguration")!;
    assert.equal(inject.metadata.name, "mesh-sidecar-injector");
    assert.deepEqual(inject.webhooks[0].clientConfig.service, { name: "mesh-disco", namespace: "mesh-system", path: "/inject", port: 443 });
    assert.deepEqual(inject.webhooks[0].namespaceSelector, { matchLabels: { "mesh-injection": "enabled" } });
    const validation = all.find((o) => o.kind === "ValidatingWebhookConfiguration")!;
    assert.equal(validation.metadata.name, "meshd-mesh-system");
    assert.equal(validation.webhooks[0].clientConfig.service.path, "/validate");
    const discoPorts = all.find((o) => o.kind === "Service" && o.metadata.name === "mesh-disco")!.spec.ports;
    assert.deepEqual(
      discoPorts.find((p: Obj) => p.port === 443),
      { name: "https-webhook", port: 443, targetPort: 15017, protocol: "TCP" },
    );
  });

  it("profiles: minimal is disco-discovery and validation; demo keeps every component with small requests and access logs", async () => {
    const minimal = await generate("--set", "profile=minimal");
    assert.equal(deployment(minimal, "mesh-hub"), undefined);
    assert.equal(deployment(minimal, "mesh-ca"), undefined);
    assert.equal(
      minimal.some((o) => o.kind === "MutatingWebhookConfiguration"),
      false,
    );
    assert.ok(minimal.some((o) => o.kind === "ValidatingWebhookConfiguration"));
    const demo = await generate("-s", "profile=demo");
    assert.deepEqual(deployment(demo, "mesh-hub")!.spec.template.spec.containers[0].resources, { requests: { cpu: "10m", memory: "40Mi" } });
    const mesh = demo.find((o) => o.kind === "ConfigMap" && o.metadata.name === "mesh")!;
    assert.match(mesh.data.mesh, /accessLogFile: \/dev\/stdout/);
    for (const objects of [minimal, demo]) assert.deepEqual((await Promise.all(objects.map(orchSchemaErrors))).flat(), []);
  });

  it("--set by dotted path, -f MeshOperator files left to right, -i", async () => {
    const tmp = tempDir("mesh-manifest-");
    const file = join(tmp, "op.yaml");
    writeFileSync(
      file,
      "apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nmetadata: {name: mine}\nspec:\n  hub: registry.example.com/mesh\n  components:\n    disco:\n      k8s: {replicaCount: 3}\n    hub:\n      k8s: {resources: {requests: {cpu: 100m}, limits: {memory: 512Mi}}}\n",
    );
    const ca = deployment(
      await generate("--set", "values.anchor.tokenJwks=https://issuer.example.com/jwks.json", "--set", "values.anchor.tokenIssuer=https://issuer.example.com"),
      "mesh-ca",
    )!;
    assert.deepEqual(
      ca.spec.template.spec.containers[0].env.filter((e: Obj) => e.name.startsWith("TOKEN_")),
      [
        { name: "TOKEN_JWKS", value: "https://issuer.example.com/jwks.json" },
        { name: "TOKEN_ISSUER", value: "https://issuer.example.com" },
      ],
    );
    const limited = deployment(
      await generate("--set", "components.disco.k8s.resources.limits.cpu=2", "--set", "components.disco.k8s.resources.requests.memory=1Gi"),
      "mesh-disco",
    )!;
    assert.deepEqual(limited.spec.template.spec.containers[0].resources, { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "2" } });
    const badQuantity = await meshctlInProcess(["manifest", "generate", "--set", "components.hub.k8s.resources.limits.cpu=lots"]);
    assert.equal(badQuantity.status, 2);
    assert.match(badQuantity.stderr, /components\.hub\.k8s\.resources\.limits\.cpu: expected a quantity such as 500m or 128Mi, got "lots"/);
    const out = await generate(
      "-f",
      file,
      "--set",
      "components.disco.k8s.replicaCount=2",
      "--set",
      "components.anchor.enabled=false",
      "--set",
      "values.global.logLevel=default:debug",
    );
    const disco = deployment(out, "mesh-disco")!;
    assert.equal(disco.spec.replicas, 2, "--set wins over -f");
    assert.deepEqual(deployment(out, "mesh-hub")!.spec.template.spec.containers[0].resources, { requests: { cpu: "100m" }, limits: { memory: "512Mi" } });
    assert.equal(disco.spec.template.spec.containers[0].image, "registry.example.com/mesh/disco-discovery:0.1.0");
    assert.ok(disco.spec.template.spec.containers[0].args.join(" ").includes("--log_output_level default:debug"));
    assert.equal(deployment(out, "mesh-ca"), undefined);
    const elsewhere = await generate("-i", "mesh-east");
    assert.ok(names(elsewhere).includes("Deployment:mesh-east:mesh-disco"));
    assert.equal(elsewhere.find((o) => o.kind === "MutatingWebhookConfiguration")!.webhooks[0].clientConfig.service.namespace, "mesh-east");
  });

  const BAD: Array<[string[], RegExp]> = [
    [["--set", "components.disco.replicas=2"], /--set components\.disco\.replicas=2: expected a path of the MeshOperator spec \(known here: enabled, k8s\)/],
    [["--set", "profile=huge"], /--set profile=huge: expected a profile: one of default, demo, minimal, got "huge"/],
    [["--set", "components.hub.enabled=maybe"], /expected true or false, got "maybe"/],
    [["--set", "noequals"], /--set: expected <path>=<value>/],
  ];
  for (const [args, message] of BAD) {
    it(`refuses ${args.join(" ")} (exit 2, nothing printed)`, async () => {
      const r = await meshctlInProcess(["manifest", "generate", ...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, message);
    });
  }

  it("--force skips a bad override with a warning", async () => {
    const r = await meshctlInProcess(["manifest", "generate", "--force", "--set", "components.hub.enabled=maybe"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^\S+\twarn\tinstaller\t.*expected true or false.*\(skipped: --force\)$/m);
  });

  it("-o DIR writes one file per component; diff of the folder against stdout's rendering is identical", async () => {
    const dir = tempDir("mesh-manifest-out-");
    const r = await meshctlInProcess(["manifest", "generate", "-o", dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "");
    assert.deepEqual(readdirSync(dir).sort(), ["Anchor", "Base", "Disco", "Hub"]);
    assert.equal(docs(readFileSync(join(dir, "Base", "Base.yaml"), "utf8")).length, 17);
    const single = join(tempDir("mesh-manifest-"), "all.yaml");
    writeFileSync(single, (await meshctlInProcess(["manifest", "generate"])).stdout);
    const d = await meshctlInProcess(["manifest", "diff", dir, single]);
    assert.equal(d.status, 0, d.stdout + d.stderr);
    assert.equal(d.stdout, "Manifests are identical\n");
  });
});

describe("manifest diff", async () => {
  const tmp = tempDir("mesh-manifest-diff-");
  const write = async (name: string, ...args: string[]) => {
    const path = join(tmp, name);
    writeFileSync(path, (await meshctlInProcess(["manifest", "generate", ...args])).stdout);
    return path;
  };
  const base = await write("default.yaml");
  const demo = await write("demo.yaml", "--set", "profile=demo");
  const minimal = await write("minimal.yaml", "--set", "profile=minimal");

  it("names each differing object and field (old -> new), and the objects only on one side; exit 1", async () => {
    const r = await meshctlInProcess(["manifest", "diff", base, demo]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /^Differences in manifests are:\n/);
    assert.match(
      r.stdout,
      /Object Deployment:mesh-system:mesh-hub has diffs:\n\nspec:\n  template:\n    spec:\n      containers:\n        "\[0\]":\n          args:\n/,
    );
    assert.match(r.stdout, /cpu: 1000m -> 10m/);
    const gone = await meshctlInProcess(["manifest", "diff", base, minimal]);
    assert.match(gone.stdout, /Object Deployment:mesh-system:mesh-ca is missing in B:/);
    const back = await meshctlInProcess(["manifest", "diff", minimal, base]);
    assert.match(back.stdout, /Object Deployment:mesh-system:mesh-ca is missing in A:/);
  });

  it("--select, --ignore (whole objects or a field path) and --rename narrow the comparison", async () => {
    const selected = await meshctlInProcess(["manifest", "diff", base, demo, "--select", "CustomResourceDefinition::*"]);
    assert.equal(selected.status, 0, selected.stdout);
    const ignored = await meshctlInProcess(["manifest", "diff", base, demo, "--ignore", "Deployment::,ConfigMap::mesh"]);
    assert.equal(ignored.status, 0, ignored.stdout);
    const field = await meshctlInProcess([
      "manifest",
      "diff",
      base,
      demo,
      "--select",
      "Deployment::mesh-hub",
      "--ignore",
      "Deployment::mesh-hub:spec.template.spec.containers.*",
    ]);
    assert.equal(field.status, 0, field.stdout);
    const renamed = await meshctlInProcess(["manifest", "diff", base, base, "--rename", "Service::mesh-hub->Service::mesh-hub2"]);
    assert.equal(renamed.status, 1);
    assert.match(renamed.stdout, /Object Service:mesh-system:mesh-hub is missing in A:[\s\S]*Object Service:mesh-system:mesh-hub2 is missing in B:/);
  });

  it("a missing argument or a bad pattern is exit 2", async () => {
    assert.equal((await meshctlInProcess(["manifest", "diff", base, join(tmp, "nope.yaml")])).status, 2);
    const r = await meshctlInProcess(["manifest", "diff", base, demo, "--rename", "a->b"]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--rename: expected pairs Kind:namespace:name->Kind:namespace:name/);
  });
});

describe("manifest migrate", () => {
  const tmp = tempDir("mesh-manifest-migrate-");
  it("upstream-style Helm values become a MeshOperator that generate -f renders as asked", async () => {
    const values = join(tmp, "values.yaml");
    writeFileSync(
      values,
      'global:\n  hub: registry.example.com/mesh\n  tag: 1.4.2\n  imagePullPolicy: Always\n  logging: {level: "default:debug"}\npilot:\n  replicaCount: 2\nmixer:\n  policy: {enabled: false}\n  telemetry: {enabled: false}\nsecurity:\n  selfSigned: false\nsidecarInjectorWebhook: {enabled: false}\n',
    );
    const r = await meshctlInProcess(["manifest", "migrate", values]);
    assert.equal(r.status, 0, r.stderr);
    const op = docs(r.stdout)[0];
    assert.equal(op.apiVersion, "install.mesh.io/v1alpha1");
    assert.equal(op.kind, "MeshOperator");
    const file = join(tmp, "op.yaml");
    writeFileSync(file, r.stdout);
    const out = await generate("-f", file);
    const disco = deployment(out, "mesh-disco")!;
    assert.equal(disco.spec.replicas, 2);
    assert.equal(disco.spec.template.spec.containers[0].image, "registry.example.com/mesh/disco-discovery:1.4.2");
    assert.equal(disco.spec.template.spec.containers[0].imagePullPolicy, "Always");
    assert.equal(deployment(out, "mesh-hub"), undefined);
    assert.ok(deployment(out, "mesh-ca")!.spec.template.spec.containers[0].args.includes("--signing-cert"));
    assert.equal(
      out.some((o) => o.kind === "MutatingWebhookConfiguration"),
      false,
    );
  });

  it("the older MeshControlPlane resource, from stdin", async () => {
    const cp =
      "apiVersion: install.mesh.io/v1alpha2\nkind: MeshControlPlane\nspec:\n  profile: demo\n  policy: {enabled: false}\n  trafficManagement:\n    components:\n      pilot: {k8s: {replicaCount: 3}}\n";
    const r = await meshctlInProcess(["manifest", "migrate"], { input: cp });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(docs(r.stdout)[0].spec, { profile: "demo", components: { hub: { enabled: false }, disco: { k8s: { replicaCount: 3 } } } });
  });

  it("a setting with no equivalent is named; exit 1 unless --force", async () => {
    const values = join(tmp, "odd.yaml");
    writeFileSync(values, "global: {hub: h.example.com/m}\nkiali: {enabled: true}\n");
    const r = await meshctlInProcess(["manifest", "migrate", values]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /warning: .*odd\.yaml: kiali: no equivalent in the MeshOperator format; not carried over/);
    const forced = await meshctlInProcess(["manifest", "migrate", "--force", values]);
    assert.equal(forced.status, 0);
    assert.equal(docs(forced.stdout)[0].spec.hub, "h.example.com/m");
  });
});

describe("what still needs a cluster", () => {
  for (const [args, what] of [
    [["manifest", "apply", "-f", "x.yaml"], /^meshctl manifest apply: needs an orchestrator API to read and write the control plane's Deployments/],
    [
      ["install", "--set", "profile=demo"],
      /^meshctl install: needs an orchestrator API to apply the install manifests to a cluster; offline, `meshctl manifest generate -o DIR` \(or `\| kubectl apply -f -`\) renders them/,
    ],
  ] as const) {
    it(`${args.join(" ")}: exit 69, says what to use instead`, async () => {
      const r = await meshctlInProcess([...args]);
      assert.equal(r.status, 69);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, what);
    });
  }
});
