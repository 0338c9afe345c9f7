import assert from "node:assert/strict";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { runProcess } from "../support/processes.ts";
import { FIXTURES, MESHCTL } from "./cli_golden_support.ts";

// Issue 11, "Done when": upstream's security and traffic-management tasks,
// written as `meshctl x simulate` scenario files with upstream's own names
// (httpbin/sleep in foo, bar and legacy; bookinfo), host forms (`httpbin.foo:8000`,
// `reviews:9080`) and ports (the ingress gateway's Service port 80 on
// container port 8080), give upstream's documented results. Each fixture's
// header says which task it is and what upstream documents.

interface Line {
  id: string;
  outcome: "http" | "connection-failure";
  status: number | null;
  body: string | null;
  sent: { headers: Record<string, string | string[]> };
  upstream: null | { workload: string; headers: Record<string, string> };
  route?: { by: string; virtualService: string; routeIndex: number; destination: string };
  elapsedMs?: number;
}

function simulate(file: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return runProcess(process.execPath, [MESHCTL, "x", "simulate", "-f", join("simulate", "upstream", file)], { cwd: FIXTURES });
}

/** [status or "fails" (no HTTP answer: upstream's curl "000"), the workload that answered or null, body (when given)]. */
type Expect = [number | "fails", string | null, string?];

async function results(run: Promise<{ status: number | null; stdout: string; stderr: string }>): Promise<Map<string, Line>> {
  const r = await run;
  assert.equal(r.status, 0, r.stderr);
  return new Map(
    r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line)
      .map((l) => [l.id, l]),
  );
}

function check(lines: Map<string, Line>, table: Record<string, Expect>): void {
  for (const [id, [status, upstream, body]] of Object.entries(table)) {
    const r = lines.get(id);
    assert.ok(r, `no line for ${id}`);
    if (status === "fails") assert.equal(r.outcome, "connection-failure", id);
    else assert.equal(r.status, status, `${id}: ${r.body}`);
    assert.equal(r.upstream?.workload ?? null, upstream, id);
    if (body !== undefined) assert.equal(r.body, body, id);
  }
}

const DENIED = "RBAC: access denied";

describe("upstream's tasks as simulate scenarios", () => {
  const runs: Record<string, Promise<Map<string, Line>>> = {};
  before(() => {
    for (const f of ["mtls_migration.yaml", "authn_policy.yaml", "jwt_ingress.yaml", "authz_http.yaml", "bookinfo_traffic.yaml"]) {
      runs[f] = results(simulate(f));
      runs[f].catch(() => undefined);
    }
  });

  it("mutual TLS migration: STRICT in foo, then in the root namespace, shuts out the client without a sidecar only", async () => {
    const r = await runs["mtls_migration.yaml"];
    assert.equal(r.size, 12);
    check(r, {
      "before-sleep.foo-to-httpbin.foo": [200, "foo/httpbin"],
      "before-sleep.bar-to-httpbin.foo": [200, "foo/httpbin"],
      "before-sleep.legacy-to-httpbin.foo": [200, "foo/httpbin"],
      "before-sleep.legacy-to-httpbin.bar": [200, "bar/httpbin"],
      "foo-strict-sleep.foo-to-httpbin.foo": [200, "foo/httpbin"],
      "foo-strict-sleep.bar-to-httpbin.foo": [200, "foo/httpbin"],
      "foo-strict-sleep.legacy-to-httpbin.foo": ["fails", null],
      "foo-strict-sleep.legacy-to-httpbin.bar": [200, "bar/httpbin"],
      "mesh-strict-sleep.foo-to-httpbin.bar": [200, "bar/httpbin"],
      "mesh-strict-sleep.bar-to-httpbin.foo": [200, "foo/httpbin"],
      "mesh-strict-sleep.legacy-to-httpbin.foo": ["fails", null],
      "mesh-strict-sleep.legacy-to-httpbin.bar": ["fails", null],
    });
    // The task's curl names the service `httpbin.foo:8000`; that is the Host that was sent.
    assert.equal(r.get("before-sleep.bar-to-httpbin.foo")!.sent.headers.host, "httpbin.foo:8000");
  });

  it("authentication policy: auto mutual TLS, then mesh, namespace, workload and port-level policies and their precedence", async () => {
    const r = await runs["authn_policy.yaml"];
    check(r, {
      "auto-mtls-sleep.foo-to-httpbin.foo": [200, "foo/httpbin"],
      "auto-mtls-sleep.foo-to-httpbin.legacy": [200, "legacy/httpbin"],
      "global-strict-sleep.legacy-to-httpbin.foo": ["fails", null],
      "global-strict-sleep.legacy-to-httpbin.bar": ["fails", null],
      "global-strict-sleep.foo-to-httpbin.bar": [200, "bar/httpbin"],
      "global-strict-sleep.foo-to-httpbin.legacy": [200, "legacy/httpbin"],
      "global-strict-sleep.legacy-to-httpbin.legacy": [200, "legacy/httpbin"],
      "namespace-strict-sleep.legacy-to-httpbin.foo": ["fails", null],
      "namespace-strict-sleep.legacy-to-httpbin.bar": [200, "bar/httpbin"],
      "workload-strict-sleep.legacy-to-httpbin.bar": ["fails", null],
      "workload-strict-sleep.foo-to-httpbin.bar": [200, "bar/httpbin"],
      "workload-strict-sleep.legacy-to-httpbin.foo": [200, "foo/httpbin"],
      "port-level-disable-sleep.legacy-to-httpbin.bar": [200, "bar/httpbin"],
      "port-level-disable-sleep.foo-to-httpbin.bar": [200, "bar/httpbin"],
      "precedence-sleep.legacy-to-httpbin.foo": [200, "foo/httpbin"],
      "precedence-sleep.foo-to-httpbin.foo": [200, "foo/httpbin"],
    });
    // Upstream shows the client certificate in httpbin's /headers when mutual TLS is on, and none to legacy.
    assert.match(
      r.get("auto-mtls-sleep.foo-to-httpbin.foo")!.upstream!.headers["x-forwarded-client-cert"],
      /URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep$/,
    );
    assert.equal(r.get("auto-mtls-sleep.foo-to-httpbin.legacy")!.upstream!.headers["x-forwarded-client-cert"], undefined);
    // Port-level DISABLE: the DestinationRule's port setting sends plain text too.
    assert.equal(r.get("port-level-disable-sleep.foo-to-httpbin.bar")!.upstream!.headers["x-forwarded-client-cert"], undefined);
  });

  it("JWT at the ingress gateway: RequestAuthentication rejects bad tokens (401); frontend-ingress requires one (403), everywhere or per path", async () => {
    const r = await runs["jwt_ingress.yaml"];
    check(r, {
      "no-policy": [200, "foo/httpbin"],
      "request-authentication-no-token": [200, "foo/httpbin"],
      "request-authentication-invalid-token": [401, null, "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections"],
      "request-authentication-valid-token": [200, "foo/httpbin"],
      "request-authentication-expired-token": [401, null, "Jwt is expired"],
      "frontend-ingress-no-token": [403, null, DENIED],
      "frontend-ingress-valid-token": [200, "foo/httpbin"],
      "per-path-headers-no-token": [403, null, DENIED],
      "per-path-ip-no-token": [200, "foo/httpbin"],
    });
  });

  it("authorization for HTTP traffic: allow-nothing, then productpage-viewer, details-viewer, reviews-viewer and ratings-viewer", async () => {
    const r = await runs["authz_http.yaml"];
    check(r, {
      "allow-nothing-productpage": [403, null, DENIED],
      "allow-nothing-details": [403, null, DENIED],
      "productpage-viewer-get": [200, "default/productpage-v1"],
      "productpage-viewer-post": [403, null, DENIED],
      "productpage-viewer-details-still-denied": [403, null, DENIED],
      "productpage-viewer-reviews-still-denied": [403, null, DENIED],
      "details-viewer-from-productpage": [200, "default/details-v1"],
      "reviews-viewer-from-productpage": [200, "default/reviews-v2"],
      "ratings-viewer-from-reviews": [200, "default/ratings-v1"],
      "ratings-viewer-from-productpage": [403, null, DENIED],
      "details-viewer-post-from-productpage": [403, null, DENIED],
      "viewers-page-through-gateway": [200, "default/productpage-v1"],
    });
  });

  it("request routing: virtual-service-all-v1 sends everyone to reviews v1; reviews-test-v2 sends jason to v2", async () => {
    const r = await runs["bookinfo_traffic.yaml"];
    check(r, {
      "request-routing-all-v1": [200, "default/reviews-v1"],
      "request-routing-all-v1-jason": [200, "default/reviews-v1"],
      "request-routing-test-v2-jason": [200, "default/reviews-v2"],
      "request-routing-test-v2-other-user": [200, "default/reviews-v1"],
      "request-routing-test-v2-anonymous": [200, "default/reviews-v1"],
    });
    assert.deepEqual(r.get("request-routing-test-v2-jason")!.route, {
      by: "default/productpage-v1",
      virtualService: "default/reviews",
      routeIndex: 0,
      destination: "reviews.default.svc.cluster.local|v2",
    });
    assert.equal(r.get("request-routing-test-v2-other-user")!.route!.routeIndex, 1);
  });

  it("traffic shifting: reviews-50-v3 splits between v1 and v3 within statistical bounds; reviews-v3 sends all to v3", async () => {
    const r = await runs["bookinfo_traffic.yaml"];
    const split = [...r.values()].filter((l) => l.id.startsWith("traffic-shifting-50-v3-"));
    assert.equal(split.length, 40);
    for (const l of split) assert.equal(l.status, 200, l.id);
    const v3 = split.filter((l) => l.upstream?.workload === "default/reviews-v3").length;
    const v1 = split.filter((l) => l.upstream?.workload === "default/reviews-v1").length;
    assert.equal(v1 + v3, 40, "only v1 and v3 answer");
    // Binomial(40, 0.5): mean 20, standard deviation 3.2; [6, 34] is beyond 4.4 deviations.
    assert.ok(v3 >= 6 && v3 <= 34, `v3 got ${v3} of 40`);
    check(r, {
      "traffic-shifting-v3-01": [200, "default/reviews-v3"],
      "traffic-shifting-v3-02": [200, "default/reviews-v3"],
      "traffic-shifting-v3-03": [200, "default/reviews-v3"],
    });
  });

  it("fault injection: jason's calls to ratings are delayed 7 s or aborted with 500; other users are not affected", async () => {
    const r = await runs["bookinfo_traffic.yaml"];
    check(r, {
      "fault-injection-delay-jason": [200, "default/ratings-v1"],
      "fault-injection-delay-other-user": [200, "default/ratings-v1"],
      "fault-injection-abort-jason": [500, null, "fault filter abort"],
      "fault-injection-abort-other-user": [200, "default/ratings-v1"],
    });
    // A lower bound only: the injected delay is the deadline under test.
    assert.ok(r.get("fault-injection-delay-jason")!.elapsedMs! >= 7000, `answered after ${r.get("fault-injection-delay-jason")!.elapsedMs} ms`);
    assert.equal(r.get("fault-injection-delay-jason")!.route!.routeIndex, 0);
    assert.equal(r.get("fault-injection-delay-other-user")!.route!.routeIndex, 1);
  });

  it("request timeouts: a 0.5 s route timeout answers 504 when reviews takes 2 s; without it the slow answer arrives", async () => {
    const r = await runs["bookinfo_traffic.yaml"];
    check(r, {
      "request-timeouts-reviews-without-timeout": [200, "default/reviews-v2"],
      "request-timeouts-ratings-delay-2s": [200, "default/ratings-v1"],
      "request-timeouts-reviews-timeout-0.5s": [504, "default/reviews-v2", "upstream request timeout"],
    });
    assert.ok(r.get("request-timeouts-reviews-without-timeout")!.elapsedMs! >= 2000);
    assert.ok(r.get("request-timeouts-ratings-delay-2s")!.elapsedMs! >= 2000);
  });
});
