import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { closeServer } from "../../host/telemetry/http_listen.ts";
import { type Outcome, send } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Issue 11: the sidecar routes as upstream. A sleep client in `foo` calls
// httpbin (foo) and reviews (default, subsets v1/v2) through its outbound
// listener; an ingress gateway whose Service maps port 80 to container port
// 8080 serves a Gateway on port 80. Real sidecars, real mutual TLS.

const config = `apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: foo}
spec: {selector: {app: httpbin}, ports: [{name: http, port: 8000, targetPort: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {selector: {app: reviews}, ports: [{name: http, port: 9080, targetPort: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: mesh-ingressgateway, namespace: mesh-system}
spec: {selector: {mesh: ingressgateway}, ports: [{name: http2, port: 80, targetPort: 8080}]}
---
apiVersion: networking.mesh.io/v1beta1
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
  - match: [{uri: {prefix: /split}}]
    route: [{destination: {host: reviews, subset: v1}, weight: 75}, {destination: {host: reviews, subset: v2}, weight: 25}]
  - match: [{uri: {regex: "/re/[0-9]+"}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - match: [{method: {exact: POST}, uri: {exact: /method}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - match: [{queryParams: {mode: {exact: fast}}, uri: {exact: /query}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - match: [{uri: {exact: /without}, withoutHeaders: {x-keep: {exact: "yes"}}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - match: [{uri: {exact: /src}, sourceLabels: {app: sleep}, sourceNamespace: foo}]
    route: [{destination: {host: reviews, subset: v2}}]
  - match: [{uri: {exact: /port}, port: 9080, authority: {prefix: reviews}}]
    route: [{destination: {host: reviews, subset: v2}}]
  - match: [{uri: {prefix: /old}}]
    rewrite: {uri: /new, authority: reviews.rewritten}
    headers: {request: {set: {x-routed: "yes"}, remove: [x-drop]}, response: {add: {x-served-by: reviews}}}
    route: [{destination: {host: reviews, subset: v1}}]
  - match: [{uri: {exact: /abort}}]
    fault: {abort: {httpStatus: 418, percentage: {value: 100}}}
    route: [{destination: {host: reviews, subset: v1}}]
  - match: [{uri: {exact: /delay}}]
    fault: {delay: {fixedDelay: 1s, percentage: {value: 100}}}
    route: [{destination: {host: reviews, subset: v1}}]
  - route: [{destination: {host: reviews, subset: v1}}]
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: {name: slow, namespace: foo}
spec:
  hosts: [slow.foo.svc.cluster.local]
  http: [{timeout: 1s, route: [{destination: {host: slow, port: {number: 80}}}]}]
---
apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: {name: httpbin-gateway, namespace: foo}
spec:
  selector: {mesh: ingressgateway}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["httpbin.example.com"]}]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: httpbin, namespace: foo}
spec:
  hosts: [httpbin.example.com]
  gateways: [httpbin-gateway]
  http: [{match: [{uri: {prefix: /status}}, {uri: {prefix: /headers}}], route: [{destination: {host: httpbin, port: {number: 8000}}}]}]
`;

const body = (o: Outcome) => {
  if (o.outcome !== "http") throw new Error(`no HTTP answer: ${o.error}`);
  return o;
};

describe("mesh routing as upstream (issue 11)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-routing-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let slow: Server;
  const w: Record<string, SecureWorkload> = {};
  // Which app answered: each echo app records what it saw.
  const seen = () => Object.fromEntries(Object.entries(w).map(([k, x]) => [k, x.app.seen.length]));
  const whoAnswered = async (call: () => Promise<Outcome>): Promise<{ outcome: Outcome; by: string[] }> => {
    const before = seen();
    const outcome = await call();
    const after = seen();
    return { outcome, by: Object.keys(after).filter((k) => after[k] > before[k]) };
  };
  const sleep = (host: string, path = "/", o: { method?: string; headers?: Record<string, string> } = {}) => send(w.sleep.outbound, { host, path, ...o });

  before(async () => {
    writeFileSync(join(dir, "resources.yaml"), config);
    slow = createServer((_req, res) => {
      const t = setTimeout(() => res.end("late"), 8_000);
      res.on("close", () => clearTimeout(t));
    });
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", () => r()));
    ca = await startMeshCa();
    const base = { configDir: dir, ca };
    [w.httpbin, w.v1, w.v2] = await Promise.all([
      startSecureWorkload({ ...base, name: "httpbin", namespace: "foo", labels: { app: "httpbin" } }),
      startSecureWorkload({ ...base, name: "reviews-v1", namespace: "default", serviceAccount: "reviews", labels: { app: "reviews", version: "v1" } }),
      startSecureWorkload({ ...base, name: "reviews-v2", namespace: "default", serviceAccount: "reviews", labels: { app: "reviews", version: "v2" } }),
    ]);
    const endpoints = [
      `httpbin.foo.svc.cluster.local:8000=127.0.0.1:${w.httpbin.inbound},sidecar,sa=httpbin`,
      `reviews.default.svc.cluster.local:9080=127.0.0.1:${w.v1.inbound},sidecar,sa=reviews,label=app=reviews,label=version=v1`,
      `reviews.default.svc.cluster.local:9080=127.0.0.1:${w.v2.inbound},sidecar,sa=reviews,label=app=reviews,label=version=v2`,
      `slow.foo.svc.cluster.local:80=127.0.0.1:${(slow.address() as { port: number }).port}`,
    ];
    [w.sleep, w.gateway] = await Promise.all([
      startSecureWorkload({ ...base, name: "sleep", namespace: "foo", labels: { app: "sleep" }, endpoints }),
      startSecureWorkload({
        ...base,
        name: "mesh-ingressgateway",
        namespace: "mesh-system",
        serviceAccount: "mesh-ingressgateway-service-account",
        labels: { mesh: "ingressgateway" },
        containerPort: 8080,
        gateway: true,
        endpoints,
      }),
    ]);
  });
  after(async () => {
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
    if (slow) {
      slow.closeAllConnections();
      await closeServer(slow);
    }
  });

  it("every upstream host form reaches httpbin: short name, name.ns, name.ns.svc, FQDN, each with the service port", async () => {
    for (const host of ["httpbin:8000", "httpbin.foo:8000", "httpbin.foo.svc:8000", "httpbin.foo.svc.cluster.local:8000"]) {
      const { outcome, by } = await whoAnswered(() => sleep(host, "/headers"));
      assert.equal(body(outcome).status, 200, host);
      assert.deepEqual(by, ["httpbin"], host);
    }
    const { outcome, by } = await whoAnswered(() => sleep("reviews.default:9080", "/"));
    assert.equal(body(outcome).status, 200);
    assert.deepEqual(by, ["v1"], "the default route of the reviews VirtualService (subset v1)");
  });

  it("the gateway serves a Gateway on Service port 80 from container port 8080; other hosts and paths get 404", async () => {
    const { outcome, by } = await whoAnswered(() => send(w.gateway.inbound, { host: "httpbin.example.com", path: "/headers" }));
    assert.equal(body(outcome).status, 200);
    assert.deepEqual(by, ["httpbin"]);
    assert.equal(body(await send(w.gateway.inbound, { host: "other.example.com", path: "/headers" })).status, 404);
    assert.equal(body(await send(w.gateway.inbound, { host: "httpbin.example.com", path: "/ip" })).status, 404);
  });

  it("each match kind picks its route (headers, uri regex, method, queryParams, withoutHeaders, sourceLabels/sourceNamespace, port/authority)", async () => {
    const cases: Array<[string, string, { method?: string; headers?: Record<string, string> }, string]> = [
      ["headers end-user: jason", "/", { headers: { "end-user": "jason" } }, "v2"],
      ["headers end-user: other", "/", { headers: { "end-user": "other" } }, "v1"],
      ["uri regex", "/re/42", {}, "v2"],
      ["uri regex is a full match", "/re/42x", {}, "v1"],
      ["method POST", "/method", { method: "POST" }, "v2"],
      ["method GET", "/method", {}, "v1"],
      ["queryParams", "/query?mode=fast", {}, "v2"],
      ["queryParams mismatch", "/query?mode=slow", {}, "v1"],
      ["withoutHeaders, header absent", "/without", {}, "v2"],
      ["withoutHeaders, header present", "/without", { headers: { "x-keep": "yes" } }, "v1"],
      ["sourceLabels and sourceNamespace", "/src", {}, "v2"],
      ["port and authority", "/port", {}, "v2"],
    ];
    for (const [name, path, o, expected] of cases) {
      const { outcome, by } = await whoAnswered(() => sleep("reviews.default.svc.cluster.local:9080", path, o));
      assert.equal(body(outcome).status, 200, name);
      assert.deepEqual(by, [expected], name);
    }
  });

  it("weighted split 75/25 between subsets, within statistical bounds", async () => {
    const n = 120;
    let v2 = 0;
    for (let i = 0; i < n; i++) {
      const { outcome, by } = await whoAnswered(() => sleep("reviews.default:9080", `/split/${i}`));
      assert.equal(body(outcome).status, 200);
      if (by[0] === "v2") v2++;
    }
    // Binomial(120, 0.25): mean 30, standard deviation 4.7; [12, 48] is beyond 3.8 deviations.
    assert.ok(v2 >= 12 && v2 <= 48, `v2 got ${v2} of ${n}`);
  });

  it("rewrite (uri prefix and authority) and header operations reach the backend; response headers are added", async () => {
    const { outcome, by } = await whoAnswered(() => sleep("reviews.default:9080", "/old/page?x=1", { headers: { "x-drop": "1" } }));
    const o = body(outcome);
    assert.equal(o.status, 200);
    assert.deepEqual(by, ["v1"]);
    const echoed = JSON.parse(o.body);
    assert.equal(echoed.path, "/new/page?x=1");
    assert.equal(echoed.headers.host, "reviews.rewritten");
    assert.equal(echoed.headers["x-routed"], "yes");
    assert.equal(echoed.headers["x-drop"], undefined);
    assert.equal(o.headers["x-served-by"], "reviews");
  });

  it("fault abort answers the configured status without reaching the backend; fault delay still reaches it", async () => {
    const aborted = await whoAnswered(() => sleep("reviews.default:9080", "/abort"));
    assert.equal(body(aborted.outcome).status, 418);
    assert.deepEqual(aborted.by, []);
    const started = Date.now();
    const delayed = await whoAnswered(() => sleep("reviews.default:9080", "/delay"));
    assert.equal(body(delayed.outcome).status, 200);
    assert.deepEqual(delayed.by, ["v1"]);
    // A lower bound only: the injected delay is the deadline under test.
    assert.ok(Date.now() - started >= 1000, "the answer came after the 1s injected delay");
  });

  it("a route timeout answers 504 when the upstream is slower (1s timeout, 8s upstream)", async () => {
    const o = body(await sleep("slow.foo.svc.cluster.local:80", "/"));
    assert.equal(o.status, 504);
    assert.equal(o.body, "upstream request timeout");
  });

  it("/config_dump names the VirtualService, route index and destination that served requests", async () => {
    const dump = (await (await fetch(`${w.sleep.adminUrl}/config_dump`)).json()) as {
      servedRoutes: Array<{ virtualService: string; routeIndex: number; destination: string }>;
    };
    assert.ok(
      dump.servedRoutes.some((r) => r.virtualService === "default/reviews" && r.routeIndex === 0 && r.destination === "reviews.default.svc.cluster.local|v2"),
      JSON.stringify(dump.servedRoutes),
    );
  });
});
