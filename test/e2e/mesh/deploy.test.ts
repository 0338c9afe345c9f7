// The e2e mesh's deployment path without sidecars: upstream's httpbin, sleep
// and bookinfo samples (renamed) deployed from their YAML as pods in network
// namespaces, each Service reached by its names through the kube-proxy
// stand-in. This is what the mesh suite (mesh.test.ts) then injects; here the
// app stand-ins show upstream's behaviour on their own: bookinfo's productpage
// reaches details and reviews, reviews v2/v3 reach ratings, by short names.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { curlInPod } from "../../support/netns_process.ts";
import { E2eMesh, SAMPLES } from "./mesh_support.ts";

describe("upstream's samples deployed from their YAML, without the mesh", () => {
  const mesh = new E2eMesh();
  before(async () => {
    await mesh.deploy(SAMPLES.httpbin, { namespace: "foo", inject: false });
    await mesh.deploy(SAMPLES.sleep, { namespace: "foo", inject: false });
    await mesh.deploy(SAMPLES.bookinfo, { namespace: "default", inject: false });
  });
  after(() => mesh.stop());

  it("a Deployment becomes its pods, each with its own address, and the registry documents are written", () => {
    const names = mesh.pods.map(
      (p) => `${p.doc.metadata.labels.app}${p.doc.metadata.labels.version ? `-${p.doc.metadata.labels.version}` : ""}.${p.doc.metadata.namespace}`,
    );
    assert.deepEqual(names.sort(), [
      "details-v1.default",
      "httpbin-v1.foo",
      "productpage-v1.default",
      "ratings-v1.default",
      "reviews-v1.default",
      "reviews-v2.default",
      "reviews-v3.default",
      "sleep.foo",
    ]);
    assert.equal(new Set(mesh.pods.map((p) => p.pod.ip)).size, mesh.pods.length);
    for (const p of mesh.pods) assert.equal(p.doc.status.podIP, p.pod.ip);
    assert.ok(mesh.services.every((s) => /^10\.255\./.test(s.spec.clusterIP)));
  });

  it("sleep reaches httpbin by every name of its Service, in plain text (no sidecar: no client certificate header)", async () => {
    const sleep = mesh.pod("sleep", "foo").pod;
    for (const host of ["httpbin", "httpbin.foo", "httpbin.foo.svc", "httpbin.foo.svc.cluster.local"]) {
      const r = await curlInPod(sleep, `http://${host}:8000/headers`);
      assert.equal(r.status, 200, `${host}: ${r.stderr}`);
      const headers = JSON.parse(r.body).headers;
      assert.deepEqual(headers.Host, [`${host}:8000`]);
      assert.equal(headers["X-Forwarded-Client-Cert"], undefined);
    }
    assert.equal((await curlInPod(sleep, "http://httpbin.foo:8000/status/418")).status, 418);
    assert.equal(JSON.parse((await curlInPod(sleep, "http://httpbin.foo:8000/ip")).body).origin, sleep.ip);
  });

  it("bookinfo's productpage shows details and reviews, with ratings from reviews v2 and v3", async () => {
    const sleep = mesh.pod("sleep", "foo").pod;
    const colors = new Set<string>();
    for (let i = 0; i < 12 && colors.size < 3; i++) {
      const r = await curlInPod(sleep, "http://productpage.default:9080/productpage");
      assert.equal(r.status, 200, r.stderr);
      assert.match(r.body, /Book Details/);
      assert.match(r.body, /Book Reviews/);
      assert.match(r.body, /An extremely entertaining play by Shakespeare/);
      colors.add(/<font color="(\w+)">/.exec(r.body)?.[1] ?? "none");
    }
    assert.deepEqual([...colors].sort(), ["black", "none", "red"], "reviews v1 (no stars), v2 (black) and v3 (red) all answered");
  });
});
