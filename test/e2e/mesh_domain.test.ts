import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { type Outcome, send } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// A mesh whose DNS domain is example.internal: every sidecar runs with
// upstream's proxy DNS domain `--domain <namespace>.svc.example.internal`.
// A sleep client in `foo` calls reviews (default, subsets v1/v2) by its short
// forms and its FQDN in that domain; the DestinationRule and VirtualService
// name it `reviews`, resolved in the domain. Real sidecars, real mutual TLS.

const DOMAIN = "example.internal";

const config = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {selector: {app: reviews}, ports: [{name: http, port: 9080, targetPort: 80}]}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: default}
spec:
  host: reviews
  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
  - match: [{headers: {end-user: {exact: jason}}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - route: [{destination: {host: reviews, subset: v1}}]
`;

describe(`sidecars of a mesh whose DNS domain is ${DOMAIN} (disco-agent --domain)`, { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-domain-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  const w: Record<string, SecureWorkload> = {};
  const seen = () => Object.fromEntries(Object.entries(w).map(([k, x]) => [k, x.app.seen.length]));
  /** Which workloads' apps answered a call of the sleep client. */
  const sleep = async (host: string, headers: Record<string, string> = {}): Promise<{ outcome: Outcome; by: string[] }> => {
    const before = seen();
    const outcome = await send(w.sleep.outbound, { host, path: "/", headers });
    const after = seen();
    return { outcome, by: Object.keys(after).filter((k) => after[k] > before[k]) };
  };
  const status = (o: Outcome) => (o.outcome === "http" ? o.status : o.error);

  before(async () => {
    writeFileSync(join(dir, "resources.yaml"), config);
    ca = await startMeshCa();
    const base = { configDir: dir, ca };
    const domain = (namespace: string) => ["--domain", `${namespace}.svc.${DOMAIN}`];
    [w.v1, w.v2] = await Promise.all([
      startSecureWorkload({
        ...base,
        name: "reviews-v1",
        namespace: "default",
        serviceAccount: "reviews",
        labels: { app: "reviews", version: "v1" },
        extraArgs: domain("default"),
      }),
      startSecureWorkload({
        ...base,
        name: "reviews-v2",
        namespace: "default",
        serviceAccount: "reviews",
        labels: { app: "reviews", version: "v2" },
        extraArgs: domain("default"),
      }),
    ]);
    const endpoints = [
      `reviews.default.svc.${DOMAIN}:9080=127.0.0.1:${w.v1.inbound},sidecar,sa=reviews,label=app=reviews,label=version=v1`,
      `reviews.default.svc.${DOMAIN}:9080=127.0.0.1:${w.v2.inbound},sidecar,sa=reviews,label=app=reviews,label=version=v2`,
    ];
    w.sleep = await startSecureWorkload({ ...base, name: "sleep", namespace: "foo", labels: { app: "sleep" }, endpoints, extraArgs: domain("foo") });
  });
  after(async () => {
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
  });

  it("reviews.default, reviews.default.svc and the FQDN in the domain reach reviews through the VirtualService of `reviews`", async () => {
    for (const host of ["reviews.default:9080", "reviews.default.svc:9080", `reviews.default.svc.${DOMAIN}:9080`]) {
      const plain = await sleep(host);
      assert.equal(status(plain.outcome), 200, host);
      assert.deepEqual(plain.by, ["v1"], `${host}: the default route (subset v1 of the DestinationRule of \`reviews\`)`);
      const jason = await sleep(host, { "end-user": "jason" });
      assert.equal(status(jason.outcome), 200, host);
      assert.deepEqual(jason.by, ["v2"], `${host}: the header route (subset v2)`);
    }
  });

  it("the cluster.local name is not the service in this mesh: nothing in the mesh answers it", async () => {
    const { by } = await sleep("reviews.default.svc.cluster.local:9080");
    assert.deepEqual(by, [], "no reviews workload reached");
  });
});
