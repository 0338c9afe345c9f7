// The standard request metrics a hub makes from reports: upstream's names,
// labels and defaults, HubMetrics overrides, the bound on label sets, and a
// clean promtool lint; then the same through a real `hubs server`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { ConfigError } from "../../host/config/errors.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { decodeHubDocument, type HubMetrics } from "../../host/config/resources/hub_rules.ts";
import { compileRegex } from "../../host/regex/engine.ts";
import { RequestMetrics } from "../../host/hubs/request_metrics.ts";
import { needPromtool, promtoolCheck } from "../telemetry/promtool.ts";
import { attrs, metricsText, metricValue, reportRequest, startHub, tempDir, waitFor, writeConfig, type HubProcess } from "./support/hub_process.ts";

const HTTP = {
  "context.protocol": "http",
  "context.reporter.kind": "inbound",
  "source.workload.name": "productpage-v1",
  "source.workload.namespace": "bookinfo",
  "source.principal": "spiffe://cluster.local/ns/bookinfo/sa/productpage",
  "source.labels": { app: "productpage", version: "v1" },
  "destination.workload.name": "reviews-v2",
  "destination.workload.namespace": "bookinfo",
  "destination.labels": { app: "reviews", version: "v2" },
  "destination.service.host": "reviews.bookinfo.svc.cluster.local",
  "destination.service.name": "reviews",
  "destination.service.namespace": "bookinfo",
  "connection.mtls": true,
  "response.code": 200n,
  "request.size": 120n,
  "response.size": 4000n,
};

function metricsDoc(yaml: string): HubMetrics {
  const [doc] = parseDocuments(`apiVersion: config.mesh.io/v1alpha2\nkind: HubMetrics\nmetadata: {name: m}\nspec:\n${yaml}`, "/cfg/metrics.yaml");
  return decodeHubDocument(doc, { defaultNamespace: "mesh-system", compileRegex }, []) as HubMetrics;
}

async function exposition(registry: Registry): Promise<string> {
  return registry.metrics();
}

describe("standard request metrics from reports", () => {
  it("upstream's labels, with unknown (or upstream's own default) for what was not reported", async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, 100);
    m.record([
      attrs(HTTP),
      attrs(HTTP),
      attrs({ "context.protocol": "grpc", "context.reporter.kind": "outbound", "destination.service.name": "ratings", "request.host": "ratings:9080" }),
    ]);
    const text = await exposition(registry);
    assert.equal(
      metricValue(
        text,
        'mesh_requests_total{reporter="destination",source_workload="productpage-v1",source_workload_namespace="bookinfo",source_principal="spiffe://cluster.local/ns/bookinfo/sa/productpage",source_app="productpage",source_version="v1",destination_workload="reviews-v2",destination_workload_namespace="bookinfo",destination_principal="unknown",destination_app="reviews",destination_version="v2",destination_service="reviews.bookinfo.svc.cluster.local",destination_service_name="reviews",destination_service_namespace="bookinfo",request_protocol="http",response_code="200",response_flags="-",permissive_response_code="none",permissive_response_policyid="none",connection_security_policy="mutual_tls"}',
      ),
      2,
    );
    assert.equal(
      metricValue(
        text,
        'mesh_requests_total{reporter="source",source_workload="unknown",source_workload_namespace="unknown",source_principal="unknown",source_app="unknown",source_version="unknown",destination_workload="unknown",destination_workload_namespace="unknown",destination_principal="unknown",destination_app="unknown",destination_version="unknown",destination_service="ratings:9080",destination_service_name="ratings",destination_service_namespace="unknown",request_protocol="grpc",response_code="200",response_flags="-",permissive_response_code="none",permissive_response_policyid="none",connection_security_policy="unknown"}',
      ),
      1,
      "response_code defaults to 200, destination_service falls back to request.host, an outbound reporter's security policy is unknown",
    );
    assert.match(text, /mesh_request_bytes_bucket\{le="1000",reporter="destination",.*\} 2/);
    assert.match(text, /mesh_response_bytes_bucket\{le="1000",reporter="destination",.*\} 0/);
    assert.match(text, /mesh_request_duration_seconds_count\{reporter="destination",.*\} 2/);
    needPromtool();
    assert.deepEqual(promtoolCheck(text), { status: 0, problems: "" });
  });

  it("TCP reports feed the TCP metrics, by connection.event; probes and scrapers are not counted", async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, 100);
    const tcp = { "context.protocol": "tcp", "destination.workload.name": "db" };
    m.record([
      attrs({ ...tcp, "connection.event": "open", "connection.sent.bytes": 10n, "connection.received.bytes": 5n }),
      attrs({ ...tcp, "connection.event": "continue", "connection.sent.bytes": 100n }),
      attrs({ ...tcp, "connection.event": "close", "connection.received.bytes": 7n }),
      attrs({ ...HTTP, "request.useragent": "kube-probe/1.29" }),
      attrs({ ...HTTP, "request.useragent": "Prometheus/2.45" }),
    ]);
    const text = await exposition(registry);
    const sum = (name: string) =>
      text
        .split("\n")
        .filter((l) => l.startsWith(`${name}{`))
        .reduce((n, l) => n + Number(l.split(" ").pop()), 0);
    assert.deepEqual(
      [
        sum("mesh_tcp_sent_bytes_total"),
        sum("mesh_tcp_received_bytes_total"),
        sum("mesh_tcp_connections_opened_total"),
        sum("mesh_tcp_connections_closed_total"),
        sum("mesh_requests_total"),
      ],
      [110, 12, 1, 1, 0],
    );
    assert.match(
      text,
      /mesh_tcp_sent_bytes_total\{reporter="destination",[^}]*destination_workload="db",[^}]*response_flags="-",connection_security_policy="none"\} 110/,
    );
    assert.doesNotMatch(text, /mesh_tcp_sent_bytes_total\{[^}]*response_code/, "TCP metrics have no HTTP labels");
  });

  it("consecutive reports of a batch that differ in one attribute a label reads are counted under their own labels", async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, 100);
    const series = (labels: Record<string, string>) =>
      metricValue(
        text,
        `mesh_requests_total{${Object.entries({
          reporter: "destination",
          source_workload: "productpage-v1",
          source_workload_namespace: "bookinfo",
          source_principal: "spiffe://cluster.local/ns/bookinfo/sa/productpage",
          source_app: "productpage",
          source_version: "v1",
          destination_workload: "reviews-v2",
          destination_workload_namespace: "bookinfo",
          destination_principal: "unknown",
          destination_app: "reviews",
          destination_version: "v2",
          destination_service: "reviews.bookinfo.svc.cluster.local",
          destination_service_name: "reviews",
          destination_service_namespace: "bookinfo",
          request_protocol: "http",
          response_code: "200",
          response_flags: "-",
          permissive_response_code: "none",
          permissive_response_policyid: "none",
          connection_security_policy: "mutual_tls",
          ...labels,
        })
          .map(([k, v]) => `${k}="${v}"`)
          .join(",")}}`,
      );
    // Each changed report follows one with upstream's labels.
    m.record([
      attrs(HTTP),
      attrs({ ...HTTP, "source.labels": { app: "productpage", version: "v2" } }),
      attrs({ ...HTTP, "source.labels": { app: "productpage", version: "v2", extra: "x" } }),
      attrs(HTTP),
      attrs({ ...HTTP, "response.code": 503n }),
      attrs(HTTP),
      attrs({ ...HTTP, "connection.mtls": false }),
      attrs({ ...HTTP, "request.size": 7n }),
      attrs({ ...HTTP, "destination.service.host": "reviews.other.svc.cluster.local" }),
    ]);
    const text = await exposition(registry);
    assert.equal(series({}), 4, "request.size is no label");
    assert.equal(series({ response_code: "503" }), 1);
    assert.equal(series({ source_version: "v2" }), 2);
    assert.equal(series({ connection_security_policy: "none" }), 1);
    assert.equal(series({ destination_service: "reviews.other.svc.cluster.local" }), 1);
  });

  it("label sets are bounded: beyond the limit a report is counted as overflow, not as a new series", async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, 3);
    for (let i = 0; i < 5; i++) m.record([attrs({ ...HTTP, "response.code": BigInt(200 + i) })]);
    m.record([attrs({ ...HTTP, "response.code": 201n })]);
    const text = await exposition(registry);
    assert.equal(text.split("\n").filter((l) => l.startsWith("mesh_requests_total{")).length, 3);
    assert.equal(
      metricValue(
        text,
        'mesh_requests_total{reporter="destination",source_workload="productpage-v1",source_workload_namespace="bookinfo",source_principal="spiffe://cluster.local/ns/bookinfo/sa/productpage",source_app="productpage",source_version="v1",destination_workload="reviews-v2",destination_workload_namespace="bookinfo",destination_principal="unknown",destination_app="reviews",destination_version="v2",destination_service="reviews.bookinfo.svc.cluster.local",destination_service_name="reviews",destination_service_namespace="bookinfo",request_protocol="http",response_code="201",response_flags="-",permissive_response_code="none",permissive_response_policyid="none",connection_security_policy="mutual_tls"}',
      ),
      2,
      "an existing label set still counts",
    );
    assert.equal(metricValue(text, 'hub_request_metrics_overflow_total{metric="mesh_requests_total"}'), 2);
  });

  it("HubMetrics: labels added, replaced and removed, metrics switched off", async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, 100);
    m.configure([
      metricsDoc(`  overrides:
  - tagOverrides:
      request_host: {value: 'request.host | "unknown"'}
      source_principal: {operation: REMOVE}
  - match: {metric: REQUEST_COUNT}
    tagOverrides:
      destination_app: {value: 'destination.labels["team"] | destination.labels["app"] | "none"'}
  - match: {metric: REQUEST_DURATION}
    disabled: true`),
    ]);
    m.record([attrs({ ...HTTP, "request.host": "reviews:9080" })]);
    const text = await exposition(registry);
    const line = text.split("\n").find((l) => l.startsWith("mesh_requests_total{"))!;
    assert.match(line, /destination_app="reviews",.*request_host="reviews:9080"\} 1$/);
    assert.doesNotMatch(line, /source_principal/);
    assert.match(text, /mesh_request_bytes_count\{[^}]*destination_app="reviews"[^}]*request_host="reviews:9080"\} 1/);
    assert.doesNotMatch(text, /^mesh_request_duration_seconds/m);
    needPromtool();
    assert.deepEqual(promtoolCheck(text), { status: 0, problems: "" });
  });

  it("HubMetrics requestDurationUnit: MILLISECONDS: telemetry v2's mesh_request_duration_milliseconds and buckets", async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, 100);
    const took30ms = attrs(HTTP);
    took30ms.set("response.duration", { durationValue: { seconds: 0n, nanos: 30_000_000 } });
    m.record([took30ms]);
    assert.match(await exposition(registry), /mesh_request_duration_seconds_bucket\{le="0.05",[^}]*\} 1/);
    m.configure([metricsDoc("  requestDurationUnit: MILLISECONDS")]);
    m.record([took30ms]);
    const text = await exposition(registry);
    assert.match(text, /mesh_request_duration_milliseconds_bucket\{le="50",[^}]*\} 1/);
    assert.match(text, /mesh_request_duration_milliseconds_sum\{[^}]*\} 30/);
    assert.doesNotMatch(text, /^mesh_request_duration_seconds/m);
  });

  it("what the metrics read (attributesRead) is all they need: reports cut down to it count exactly as whole ones", async () => {
    const reports = [
      attrs({ ...HTTP, "request.host": "reviews:9080", "request.headers": { "x-team": "blue" } }).set("response.duration", {
        durationValue: { seconds: 0n, nanos: 3_000_000 },
      }),
      attrs({ ...HTTP, "context.reporter.kind": "outbound", "destination.service.host": "", "connection.mtls": false, "response.code": 503n }),
      attrs({
        "context.protocol": "grpc",
        "destination.service.name": "ratings",
        "request.host": "ratings:9080",
        "api.protocol": "grpc",
        "context.proxy_error_code": "UF",
      }),
      attrs({ ...HTTP, "request.useragent": "kube-probe/1.29" }),
      attrs({
        "context.protocol": "tcp",
        "destination.workload.name": "db",
        "connection.event": "open",
        "connection.sent.bytes": 10n,
        "connection.received.bytes": 5n,
      }),
      attrs({ "context.protocol": "tcp", "connection.event": "close", "connection.mtls": true, "rbac.permissive.response_code": "403" }),
    ];
    for (const documents of [
      [],
      [
        metricsDoc(`  requestDurationUnit: MILLISECONDS
  overrides:
  - tagOverrides:
      team: {value: 'request.headers["x-team"] | "none"'}
      request_host: {value: 'request.host | "unknown"'}
      source_principal: {operation: REMOVE}
  - match: {metric: REQUEST_SIZE}
    disabled: true`),
      ],
    ]) {
      const [wholeRegistry, cutRegistry] = [new Registry(), new Registry()];
      const whole = new RequestMetrics(wholeRegistry, 100);
      const cut = new RequestMetrics(cutRegistry, 100);
      whole.configure(documents);
      cut.configure(documents);
      const read = cut.attributesRead();
      assert.ok(!read.has("source.uid") && read.has("response.code") && read.has("request.useragent"));
      whole.record(reports);
      cut.record(reports.map((a) => new Map([...a].filter(([name]) => read.has(name)))));
      const wholeText = await exposition(wholeRegistry);
      assert.equal(await exposition(cutRegistry), wholeText);
      assert.match(wholeText, /^mesh_request_duration_\w+_sum\{[^}]*\} (0\.003|3)$/m);
    }
  });

  it("HubMetrics errors name the file, the resource and the field path", () => {
    const rows: Array<[string, RegExp]> = [
      [
        "  overrides:\n  - match: {metric: REQUESTS}",
        /^\/cfg\/metrics\.yaml: HubMetrics mesh-system\/m: spec\.overrides\[0\]\.match\.metric: expected one of ALL_METRICS, REQUEST_COUNT, .*, got "REQUESTS"$/,
      ],
      ["  overrides:\n  - tagOverrides: {bad-name: {value: a}}", /spec\.overrides\[0\]\.tagOverrides\[bad-name\]: label name "bad-name": expected/],
      ["  overrides:\n  - tagOverrides: {x: {value: 'a == b'}}", /spec\.overrides\[0\]\.tagOverrides\[x\]\.value: "a == b": expected an attribute/],
      ["  overrides:\n  - tagOverrides: {x: {value: '\"a\" | b'}}", /tagOverrides\[x\]\.value: term 1 \("a"\): a literal always applies/],
      ["  overrides:\n  - tagOverrides: {x: {operation: DELETE}}", /tagOverrides\[x\]\.operation: expected one of UPSERT, REMOVE, got "DELETE"/],
    ];
    for (const [yaml, error] of rows)
      assert.throws(
        () => metricsDoc(yaml),
        (e: unknown) => e instanceof ConfigError && error.test(e.message),
        yaml,
      );
  });
});

describe("hubs server: /metrics carries the standard metrics of what was reported", () => {
  let hub: HubProcess;
  let dir: string;
  before(async () => {
    dir = tempDir();
    writeConfig(
      dir,
      "metrics.yaml",
      "apiVersion: config.mesh.io/v1alpha2\nkind: HubMetrics\nmetadata: {name: m}\nspec: {overrides: [{tagOverrides: {request_host: {value: 'request.host | \"unknown\"'}}}]}\n",
    );
    hub = await startHub(["--configStoreURL", `fs://${dir}`, "--requestMetricsMaxSeries", "2"]);
  });
  after(async () => {
    await hub?.stop();
  });

  it("counts each reported request under its labels, bounded by --requestMetricsMaxSeries; promtool finds nothing in them", async () => {
    const entries = [0, 1, 2].flatMap((i) => Array.from({ length: 3 }, () => ({ ...HTTP, "request.host": `h${i}` })));
    const r = await hub.client.report(reportRequest(entries));
    assert.equal(r.code, 0, r.details);
    const text = await metricsText(hub);
    const series = text.split("\n").filter((l) => l.startsWith("mesh_requests_total{"));
    assert.deepEqual(
      series.map((l) => [/request_host="([^"]*)"/.exec(l)![1], Number(l.split(" ").pop())]),
      [
        ["h0", 3],
        ["h1", 3],
      ],
    );
    assert.equal(metricValue(text, 'hub_request_metrics_overflow_total{metric="mesh_requests_total"}'), 3);
    needPromtool();
    // The hub's whole page is linted in test/telemetry/spec_metric_names.test.ts (spec 2's gauges named _total are flagged there by design).
    const ours = promtoolCheck(text)
      .problems.split("\n")
      .filter((l) => /^(mesh_|hub_request_metrics_)/.test(l));
    assert.deepEqual(ours, []);
  });

  it("a changed HubMetrics document applies without a restart", async () => {
    writeConfig(
      dir,
      "metrics.yaml",
      "apiVersion: config.mesh.io/v1alpha2\nkind: HubMetrics\nmetadata: {name: m}\nspec: {overrides: [{tagOverrides: {source_app: {operation: REMOVE}}}]}\n",
    );
    await waitFor("the new labels", async () => {
      await hub.client.report(reportRequest([HTTP]));
      const line = (await metricsText(hub)).split("\n").find((l) => l.startsWith("mesh_requests_total{"));
      return line !== undefined && !line.includes("request_host") && !line.includes("source_app") ? line : undefined;
    });
  });
});
