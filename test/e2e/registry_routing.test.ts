import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { closeServer, listen } from "../../host/telemetry/http_listen.ts";
import { tempDir } from "../support/processes.ts";
import { type Outcome, send } from "./security_support.ts";
import { freePort } from "./sidecar_support.ts";

// Issue 24 item 1, the data path: a sidecar routes outbound by the registry
// it is served (Services, Pods with their addresses and labels; no
// --endpoint). The pods' "IPs" are loopback addresses: reviews v1 and v2
// each run a real sidecar bound to its pod address on the Service's target
// port (injected: label security.mesh.io/tlsMode: mesh, so auto mutual TLS
// applies); ratings is a plain app on its pod address (no sidecar: plain text).

const REVIEWS_V1 = "127.24.0.11";
const REVIEWS_V2 = "127.24.0.12";
const RATINGS = "127.24.0.13";
const CLUSTER_IP = "10.96.24.9";

function pod(name: string, labels: Record<string, string>, ip: string, port: number, serviceAccount: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: default
  labels: ${JSON.stringify(labels)}
spec:
  serviceAccountName: ${serviceAccount}
  containers: [{name: app, image: example, ports: [{containerPort: ${port}}]}]
status:
  phase: Running
  podIP: ${ip}
  podIPs: [{ip: ${ip}}]
  conditions: [{type: Ready, status: "True"}]
---
`;
}

const body = (o: Outcome) => {
  if (o.outcome !== "http") throw new Error(`no HTTP answer: ${o.error}`);
  return o;
};

describe("outbound routing by the served registry (issue 24)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-registry-routing-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let ratings: Server;
  const ratingsSeen: Array<Record<string, string | string[] | undefined>> = [];
  const w: Record<string, SecureWorkload> = {};
  let reviewsPort = 0;
  let ratingsPort = 0;
  const seen = () => ({ v1: w.v1.app.seen.length, v2: w.v2.app.seen.length, ratings: ratingsSeen.length });
  const whoAnswered = async (host: string, path = "/"): Promise<{ outcome: Outcome; by: string[] }> => {
    const before = seen();
    const outcome = await send(w.sleep.outbound, { host, path });
    const now = seen();
    return { outcome, by: (Object.keys(now) as Array<keyof typeof now>).filter((k) => now[k] > before[k]) };
  };

  before(async () => {
    reviewsPort = await freePort();
    ratingsPort = await freePort();
    ratings = createServer((req, res) => {
      ratingsSeen.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ app: "ratings", headers: req.headers }));
    });
    await listen(ratings, ratingsPort, RATINGS);
    const injected = { "security.mesh.io/tlsMode": "mesh" };
    writeFileSync(
      join(dir, "resources.yaml"),
      `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {selector: {app: reviews}, clusterIP: ${CLUSTER_IP}, ports: [{name: http, port: 9080, targetPort: ${reviewsPort}}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: default}
spec: {selector: {app: ratings}, ports: [{name: http, port: 9080, targetPort: ${ratingsPort}}]}
---
${pod("reviews-v1", { app: "reviews", version: "v1", ...injected }, REVIEWS_V1, reviewsPort, "reviews")}${pod("reviews-v2", { app: "reviews", version: "v2", ...injected }, REVIEWS_V2, reviewsPort, "reviews")}${pod("ratings-v1", { app: "ratings" }, RATINGS, ratingsPort, "ratings")}${pod("sleep", { app: "sleep", ...injected }, "127.24.0.20", 80, "sleep")}`,
    );
    ca = await startMeshCa();
    const base = { configDir: dir, ca, namespace: "default", serviceAccount: "reviews", containerPort: reviewsPort };
    [w.v1, w.v2, w.sleep] = await Promise.all([
      startSecureWorkload({
        ...base,
        name: "reviews-v1",
        labels: { app: "reviews", version: "v1", ...injected },
        extraArgs: ["--bindAddress", REVIEWS_V1, "--inboundPort", String(reviewsPort)],
      }),
      startSecureWorkload({
        ...base,
        name: "reviews-v2",
        labels: { app: "reviews", version: "v2", ...injected },
        extraArgs: ["--bindAddress", REVIEWS_V2, "--inboundPort", String(reviewsPort)],
      }),
      startSecureWorkload({ configDir: dir, ca, name: "sleep", namespace: "default", labels: { app: "sleep", ...injected } }),
    ]);
  });
  after(async () => {
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
    if (ratings) {
      ratings.closeAllConnections();
      await closeServer(ratings);
    }
  });

  it("every host form of reviews, with and without the port, reaches its pods over mutual TLS, round robin", async () => {
    const forms = ["reviews", "reviews.default", "reviews.default.svc", "reviews.default.svc.cluster.local"];
    const by: string[] = [];
    for (const host of [...forms, ...forms.map((f) => `${f}:9080`)]) {
      const r = await whoAnswered(host, "/reviews/0");
      assert.equal(body(r.outcome).status, 200, host);
      assert.equal(r.by.length, 1, `${host}: one pod answered`);
      by.push(r.by[0]);
      const app = r.by[0] === "v1" ? w.v1 : w.v2;
      const headers = app.app.seen.at(-1)!.headers;
      assert.match(String(headers["x-forwarded-client-cert"]), /URI=spiffe:\/\/cluster\.local\/ns\/default\/sa\/sleep/, `${host}: mutual TLS from sleep`);
    }
    // Round robin over the two endpoints: each request goes to the other pod.
    for (let i = 1; i < by.length; i++) assert.notEqual(by[i], by[i - 1], `round robin: ${by.join(",")}`);
  });

  it("the Service's cluster IP and port, and a pod's own address, reach reviews", async () => {
    const viaClusterIp = await whoAnswered(`${CLUSTER_IP}:9080`);
    assert.equal(body(viaClusterIp.outcome).status, 200);
    assert.equal(viaClusterIp.by.length, 1);
    const direct = await whoAnswered(`${REVIEWS_V2}:${reviewsPort}`);
    assert.equal(body(direct.outcome).status, 200);
    assert.deepEqual(direct.by, ["v2"], "the pod called by its address");
    assert.match(String(w.v2.app.seen.at(-1)!.headers["x-forwarded-client-cert"]), /sa\/sleep/, "mutual TLS toward the pod's sidecar");
  });

  it("an endpoint without a sidecar (no tlsMode label) is called in plain text", async () => {
    const r = await whoAnswered("ratings:9080");
    assert.equal(body(r.outcome).status, 200);
    assert.deepEqual(r.by, ["ratings"]);
    assert.equal(ratingsSeen.at(-1)!["x-forwarded-client-cert"], undefined, "no sidecar: no mutual TLS, no XFCC");
  });

  it("/stats counts the mutual TLS and plain-text calls", async () => {
    const stats = await (await fetch(`${w.sleep.adminUrl}/stats?format=json`)).text();
    assert.match(stats, /outbound\.mtls/);
    assert.match(stats, /outbound\.plaintext/);
  });
});
