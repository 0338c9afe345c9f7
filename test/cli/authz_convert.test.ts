// `meshctl x authz convert -f`: upstream's converter samples (renamed, see
// fixtures/authz_convert/README.md) give upstream's policies; upstream's
// bookinfo RBAC task, converted, grants through real sidecars (`x simulate`)
// exactly the access its v1alpha1 policies granted.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { runProcess, tempDir } from "../support/processes.ts";
import { FIXTURES, MESHCTL } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";

const DIR = join(FIXTURES, "authz_convert");
type Obj = Record<string, any>;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);

function convert(args: string[]) {
  return meshctlInProcess(["x", "authz", "convert", ...args], { cwd: DIR });
}

/** The documents of a file as a set (order of keys and documents ignored). */
function canonical(list: Obj[]): string[] {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return list.map((d) => JSON.stringify(sort(d))).sort();
}

describe("x authz convert: upstream's converter samples", () => {
  const SAME_AS_UPSTREAM: Array<[string, string, string[]?]> = [
    ["policy-clusterRbacConfig-off", "service-bookinfo.yaml"],
    ["policy-clusterRbacConfig-inclusion-namespace", "service-bookinfo.yaml"],
    ["policy-clusterRbacConfig-inclusion-service", "service-bookinfo.yaml"],
    ["policy-clusterRbacConfig-exclusion-namespace", "service-bookinfo.yaml"],
    ["policy-clusterRbacConfig-exclusion-service", "service-bookinfo.yaml"],
    ["policy-destination-labels", "service-bookinfo.yaml"],
    ["policy-multiple-roles", "service-bookinfo.yaml"],
    ["policy-multiple-rules", "service-bookinfo.yaml"],
    ["policy-multiple-services", "service-httpbin.yaml"],
    ["policy-ignore-no-clusterRbacConfig", "service-bookinfo.yaml", ["--allowNoClusterRbacConfig"]],
  ];
  for (const [name, services, extra] of SAME_AS_UPSTREAM) {
    it(`${name}: upstream's policies`, async () => {
      const r = await convert(["-f", `${name}.yaml`, "-s", services, "-r", "my-root-namespace", ...(extra ?? [])]);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(canonical(docs(r.stdout)), canonical(docs(readFileSync(join(DIR, `${name}-want.yaml`), "utf8"))));
      assert.match(r.stdout, /^# Generated /, "each policy under upstream's comment");
      assert.match(r.stderr, /PLEASE ALWAYS REVIEW THE CONVERTED POLICIES BEFORE APPLYING\.\n$/);
    });
  }

  it("policy-multiple-bindings: a subject's user and properties[source.principal] must both hold (v1alpha1 ANDs a subject's fields), so the second is a condition, not a second principal", async () => {
    const r = await convert(["-f", "policy-multiple-bindings.yaml", "-s", "service-bookinfo.yaml"]);
    assert.equal(r.status, 0, r.stderr);
    const policy = docs(r.stdout).find((d) => d.metadata.name === "generated-role-rule0-svc0-target0")!;
    const first = policy.spec.rules[0];
    assert.deepEqual(first.from[0].source.principals, ["user-1"]);
    assert.deepEqual(
      first.when.find((w: Obj) => w.key === "source.principal"),
      { key: "source.principal", values: ["source.principal-1"] },
    );
    assert.equal(policy.spec.rules.length, 3, "one rule per subject of every binding");
  });

  const ERRORS: Array<[string, string[], number, RegExp]> = [
    [
      "no ClusterRbacConfig",
      ["-f", "error-no-clusterRbacConfig.yaml", "-s", "service-bookinfo.yaml"],
      1,
      /no ClusterRbacConfig in the given files: .*pass --allowNoClusterRbacConfig/,
    ],
    [
      "destination.ip",
      ["-f", "error-unsupported-destination-ip.yaml", "-s", "service-bookinfo.yaml"],
      1,
      /error-unsupported-destination-ip\.yaml: ServiceRole default\/role: spec\.rules\[0\]\.constraints\[0\]\.key: destination\.ip is no longer supported in v1beta1 authorization policy/,
    ],
    [
      "destination.user",
      ["-f", "error-unsupported-destination-user.yaml", "-s", "service-bookinfo.yaml"],
      1,
      /destination\.user is no longer supported in v1beta1 authorization policy/,
    ],
    [
      "conflicting labels",
      ["-f", "error-duplicate-workload-label.yaml", "-s", "service-bookinfo.yaml"],
      1,
      /spec\.rules\[0\]\.services\[0\]: duplicate workload label "app" with conflicting values: "productpage", "reviews"/,
    ],
    ["no -s", ["-f", "policy-multiple-roles.yaml"], 2, /-s\/--service: required with -f/],
    [
      "no -f: the cluster's policies need an orchestrator API",
      [],
      69,
      /meshctl experimental authz convert: this command needs an orchestrator API, which is not available here; use `-f rbac\.yaml -s services\.yaml`/,
    ],
    ["missing file", ["-f", "nope.yaml", "-s", "service-bookinfo.yaml"], 2, /nope\.yaml: no such file or directory/],
  ];
  for (const [name, args, status, message] of ERRORS) {
    it(`refused: ${name} (exit ${status}, nothing printed)`, async () => {
      const r = await convert(args);
      assert.equal(r.status, status, r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, message);
    });
  }

  it("a condition key v1beta1 does not evaluate is refused by name rather than dropped; bad values name their field", async () => {
    const tmp = tempDir("mesh-convert-");
    const role = (constraint: string) =>
      `apiVersion: rbac.mesh.io/v1alpha1\nkind: ClusterRbacConfig\nmetadata: {name: default}\nspec: {mode: "ON"}\n---\napiVersion: rbac.mesh.io/v1alpha1\nkind: ServiceRole\nmetadata: {name: db, namespace: default}\nspec:\n  rules:\n  - services: ["*"]\n    constraints: [${constraint}]\n---\napiVersion: rbac.mesh.io/v1alpha1\nkind: ServiceRoleBinding\nmetadata: {name: db, namespace: default}\nspec: {subjects: [{user: "*"}], roleRef: {kind: ServiceRole, name: db}}\n`;
    writeFileSync(join(tmp, "mysql.yaml"), role(`{key: "experimental.envoy.filters.network.mysql_proxy[db.table]", values: [add]}`));
    writeFileSync(join(tmp, "port.yaml"), role(`{key: destination.port, values: ["http"]}`));
    writeFileSync(join(tmp, "istio.yaml"), "apiVersion: rbac.istio.io/v1alpha1\nkind: ServiceRole\nmetadata: {name: a, namespace: default}\nspec: {}\n");
    const mysql = await convert(["-f", join(tmp, "mysql.yaml"), "-s", "service-bookinfo.yaml"]);
    assert.equal(mysql.status, 1);
    assert.match(
      mysql.stderr,
      /ServiceRole default\/db: spec\.rules\[0\]\.constraints\[0\]\.key: "experimental\.envoy\.filters\.network\.mysql_proxy\[db\.table\]" cannot be converted/,
    );
    const port = await convert(["-f", join(tmp, "port.yaml"), "-s", "service-bookinfo.yaml"]);
    assert.equal(port.status, 1);
    assert.match(port.stderr, /spec\.rules\[0\]\.constraints\[0\]\.values: expected ports 1-65535, got "http"/);
    const istio = await convert(["-f", join(tmp, "istio.yaml"), "-s", "service-bookinfo.yaml"]);
    assert.equal(istio.status, 2);
    assert.match(istio.stderr, /apiVersion: expected rbac\.mesh\.io\/v1alpha1 \(this mesh's group for upstream's rbac\.istio\.io\)/);
  });

  it("converted policies pass the catalog (meshctl validate)", async () => {
    const r = await convert(["-f", "policy-multiple-services.yaml", "-s", "service-httpbin.yaml"]);
    const tmp = tempDir("mesh-convert-");
    writeFileSync(join(tmp, "out.yaml"), r.stdout);
    const v = await meshctlInProcess(["validate", "-f", join(tmp, "out.yaml")]);
    assert.equal(v.status, 0, v.stderr + v.stdout);
  });
});

// Upstream's bookinfo RBAC task (1.3/1.4 docs, "Authorization for HTTP traffic",
// v1alpha1): with ClusterRbacConfig ON_WITH_INCLUSION on `default`,
// productpage-policy lets anyone GET productpage, details-reviews-policy lets
// productpage's identity GET details and reviews, ratings-policy lets reviews'
// identity GET ratings; namespace-policy instead lets workloads of `default`
// and `mesh-system` GET every bookinfo service. Everything else is denied.
// The statuses below are those v1alpha1 semantics; the sidecars enforce the
// converted v1beta1 policies.
const WORKLOADS = [
  { name: "sleep", namespace: "other" },
  { name: "prober", namespace: "mesh-system" },
  {
    name: "productpage-v1",
    namespace: "default",
    service: "productpage",
    serviceAccount: "bookinfo-productpage",
    labels: { app: "productpage", version: "v1" },
    ports: [{ name: "http", servicePort: 9080, containerPort: 9080 }],
  },
  {
    name: "details-v1",
    namespace: "default",
    service: "details",
    serviceAccount: "bookinfo-details",
    labels: { app: "details", version: "v1" },
    ports: [{ name: "http", servicePort: 9080, containerPort: 9080 }],
  },
  {
    name: "reviews-v2",
    namespace: "default",
    service: "reviews",
    serviceAccount: "bookinfo-reviews",
    labels: { app: "reviews", version: "v2" },
    ports: [{ name: "http", servicePort: 9080, containerPort: 9080 }],
  },
  {
    name: "ratings-v1",
    namespace: "default",
    service: "ratings",
    serviceAccount: "bookinfo-ratings",
    labels: { app: "ratings", version: "v1" },
    ports: [{ name: "http", servicePort: 9080, containerPort: 9080 }],
  },
  {
    name: "ratings-v2",
    namespace: "default",
    service: "ratings-v2",
    serviceAccount: "bookinfo-ratings-v2",
    labels: { app: "ratings", version: "v2" },
    ports: [{ name: "http", servicePort: 9080, containerPort: 9080 }],
  },
  // Spoken to over HTTP here: v1alpha1 decided on identity and port alike for TCP.
  {
    name: "mongodb-v1",
    namespace: "default",
    service: "mongodb",
    serviceAccount: "bookinfo-mongodb",
    labels: { app: "mongodb", version: "v1" },
    ports: [{ name: "http", servicePort: 27017, containerPort: 27017 }],
  },
];

/** [from, to host, method, the v1alpha1 status]. */
type Access = [string, string, string, 200 | 403];
const BY_SERVICE: Access[] = [
  ["other/sleep", "productpage", "GET", 200],
  ["other/sleep", "productpage", "POST", 403],
  ["other/sleep", "details", "GET", 403],
  ["default/productpage-v1", "details", "GET", 200],
  ["default/productpage-v1", "details", "POST", 403],
  ["default/productpage-v1", "reviews", "GET", 200],
  ["default/productpage-v1", "ratings", "GET", 403],
  ["default/reviews-v2", "ratings", "GET", 200],
  ["default/reviews-v2", "details", "GET", 403],
];
const BY_NAMESPACE: Access[] = [
  ["default/productpage-v1", "details", "GET", 200],
  ["default/reviews-v2", "ratings", "GET", 200],
  ["mesh-system/prober", "reviews", "GET", 200],
  ["default/productpage-v1", "details", "POST", 403],
  ["other/sleep", "productpage", "GET", 403],
];

// The mongodb task: RBAC on the mongodb service only, port 27017 for ratings-v2's identity.
const MONGODB: Access[] = [
  ["default/ratings-v2", "mongodb:27017", "GET", 200],
  ["default/ratings-v1", "mongodb:27017", "GET", 403],
  ["other/sleep", "mongodb:27017", "GET", 403],
  ["other/sleep", "details", "GET", 200],
];

async function simulateAccess(policies: string, table: Access[]): Promise<Map<string, number | null>> {
  const resources = docs(policies);
  const target = (to: string) => (to.includes(":") ? to.replace(":", ".default:") : `${to}.default:9080`);
  const scenarios = table.map(([from, to, method], i) => ({
    id: i,
    workloads: WORKLOADS,
    resources,
    request: { from, to: target(to), method, path: `/${to.split(":")[0]}` },
  }));
  const tmp = tempDir("mesh-convert-sim-");
  writeFileSync(join(tmp, "scenarios.json"), JSON.stringify({ scenarios }));
  const r = await runProcess(process.execPath, [MESHCTL, "x", "simulate", "-f", join(tmp, "scenarios.json")]);
  assert.equal(r.status, 0, r.stderr);
  return new Map(
    r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .map((l) => [String(l.id), l.status]),
  );
}

describe("x authz convert: the converted bookinfo policies grant what the v1alpha1 ones did (x simulate)", () => {
  for (const [name, files, table] of [
    ["per-service roles", ["rbac-config-ON.yaml", "productpage-policy.yaml", "details-reviews-policy.yaml", "ratings-policy.yaml"], BY_SERVICE],
    ["namespace role", ["rbac-config-ON.yaml", "namespace-policy.yaml"], BY_NAMESPACE],
    ["mongodb: one included service, a port constraint", ["rbac-config-on-mongodb.yaml", "mongodb-policy.yaml"], MONGODB],
  ] as const) {
    it(name, async () => {
      const services = [join(FIXTURES, "upstream", "bookinfo.yaml"), join(DIR, "bookinfo", "bookinfo-db-service.yaml")].join(",");
      const r = await convert(["-f", files.map((f) => join("bookinfo", f)).join(","), "-s", services]);
      assert.equal(r.status, 0, r.stderr);
      const got = await simulateAccess(r.stdout, [...table]);
      table.forEach(([from, to, method, status], i) => assert.equal(got.get(String(i)), status, `${method} ${from} -> ${to}`));
    });
  }
});
