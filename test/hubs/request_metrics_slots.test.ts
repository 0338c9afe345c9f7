// The standard request metrics counted from a Report read into slots (a hub
// without an access log: RequestMetrics.recordSlots over
// decodeReportSlots) are exactly those counted from the general path's
// attribute maps (RequestMetrics.record over decodeReportGeneral): the same
// /metrics text, series, values, buckets and overflow counts, over generated
// batches whose entries share some attributes a label reads and differ in
// others, under the default labels and under HubMetrics overrides.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Registry } from "prom-client";
import { parseDocuments } from "../../host/config/documents.ts";
import { decodeHubDocument, type HubMetrics } from "../../host/config/resources/hub_rules.ts";
import { decodeReportGeneral, decodeReportSlots } from "../../host/hubs/hub_messages.ts";
import { RequestMetrics } from "../../host/hubs/request_metrics.ts";
import { compileRegex } from "../../host/regex/engine.ts";
import { type AttributeMap, type AttributeValue, encodeAttributes, GlobalDictionary, MessageWords } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { messageType } from "../../host/wire/protos.ts";

const RUNS = Number(process.env.METRICS_RUNS ?? 60);
const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);

function metricsDoc(yaml: string): HubMetrics {
  const [doc] = parseDocuments(`apiVersion: config.mesh.io/v1alpha2\nkind: HubMetrics\nmetadata: {name: m}\nspec:\n${yaml}`, "/cfg/metrics.yaml");
  return decodeHubDocument(doc, { defaultNamespace: "mesh-system", compileRegex }, []) as HubMetrics;
}

const CONFIGURATIONS: Array<{ name: string; documents: HubMetrics[] }> = [
  { name: "upstream's labels", documents: [] },
  {
    name: "labels added, replaced and removed, a metric off, durations in ms",
    documents: [
      metricsDoc(`  requestDurationUnit: MILLISECONDS
  overrides:
  - tagOverrides:
      team: {value: 'request.headers["x-team"] | "none"'}
      request_host: {value: 'request.host | "unknown"'}
      user: {value: 'request.auth.principal | source.principal | "anonymous"'}
      source_principal: {operation: REMOVE}
  - match: {metric: REQUEST_SIZE}
    disabled: true`),
    ],
  },
];

const s = (v: string): AttributeValue => ({ stringValue: v });
const option = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 3 });

/** One reported request: each attribute a label or a value reads drawn from a few values (or missing), so that neighbours often share them. */
const ATTRIBUTES = {
  "context.protocol": option(fc.constantFrom("http", "grpc", "tcp", "udp").map(s)),
  "context.reporter.kind": option(fc.constantFrom("inbound", "outbound").map(s)),
  "request.useragent": option(fc.constantFrom("curl/8", "kube-probe/1.29", "Prometheus/2.5").map(s)),
  "source.workload.name": option(fc.constantFrom("web", "api").map(s)),
  "source.principal": option(fc.constantFrom("spiffe://cluster.local/ns/a/sa/web").map(s)),
  "source.labels": option(
    fc.constantFrom({ app: "web", version: "v1" }, { app: "web" }, { version: "v2", app: "web" }).map((entries) => ({ stringMapValue: { entries } })),
  ),
  "destination.service.host": option(fc.constantFrom("items.shop.svc.cluster.local", "").map(s)),
  "destination.service.name": option(fc.constantFrom("items", "unknown").map(s)),
  "request.host": option(fc.constantFrom("items:8080", "other").map(s)),
  "request.headers": option(fc.constantFrom({ "x-team": "blue" }, { "x-team": "red", accept: "*/*" }).map((entries) => ({ stringMapValue: { entries } }))),
  "request.auth.principal": option(fc.constantFrom("alice", "bob").map(s)),
  "response.code": option(fc.constantFrom(200n, 503n, 404n).map((v) => ({ int64Value: v }))),
  "connection.mtls": option(fc.boolean().map((v) => ({ boolValue: v }))),
  "api.protocol": option(fc.constantFrom("grpc").map(s)),
  "context.proxy_error_code": option(fc.constantFrom("UF", "-").map(s)),
  "response.duration": option(
    fc.record({ seconds: fc.bigInt({ min: 0n, max: 3n }), nanos: fc.integer({ min: 0, max: 999_999_999 }) }).map((d) => ({ durationValue: d })),
  ),
  "request.size": option(fc.bigInt({ min: 0n, max: 20_000n }).map((v) => ({ int64Value: v }))),
  "response.size": option(
    fc.oneof(
      fc.bigInt({ min: 0n, max: 2_000_000n }).map((v) => ({ int64Value: v })),
      fc.double({ min: 0, max: 1e6, noNaN: true }).map((v) => ({ doubleValue: v })),
    ),
  ),
  "connection.event": option(fc.constantFrom("open", "close", "continue").map(s)),
  "connection.sent.bytes": option(fc.bigInt({ min: 0n, max: 1_000_000n }).map((v) => ({ int64Value: v }))),
  "connection.received.bytes": option(fc.bigInt({ min: 0n, max: 1_000_000n }).map((v) => ({ int64Value: v }))),
  "request.id": option(fc.uuid().map(s)),
};
const reported: fc.Arbitrary<AttributeMap> = fc
  .record(ATTRIBUTES)
  .map((values) => new Map(Object.entries(values).filter((e): e is [string, AttributeValue] => e[1] !== undefined)));

/** A batch: runs of one request repeated with some attributes changed, as a proxy's reports come. */
const batch: fc.Arbitrary<AttributeMap[]> = fc
  .array(fc.tuple(reported, fc.integer({ min: 1, max: 4 }), reported, fc.subarray(Object.keys(ATTRIBUTES), { maxLength: 2 })), {
    minLength: 1,
    maxLength: 6,
  })
  .map((runs) =>
    runs.flatMap(([first, n, other, changed]) =>
      Array.from({ length: n }, (_, i) => {
        const m = new Map(first);
        if (i % 2 === 1) for (const name of changed) other.has(name) ? m.set(name, other.get(name)!) : m.delete(name);
        return m;
      }),
    ),
  );

const Report = messageType("mesh.hub.v1.ReportRequest");
/** A ReportRequest as the filter sends one: INDEPENDENT_ENCODING, shared default_words. */
function reportBytes(entries: AttributeMap[]): Buffer {
  const words = new MessageWords(DICTIONARY);
  const attributes = entries.map((e) => encodeAttributes(e, DICTIONARY, words));
  const message = Report.fromObject({ attributes, defaultWords: words.words, globalWordCount: DICTIONARY.size, repeatedAttributesSemantics: 1 });
  return Buffer.from(Report.encode(message).finish());
}

describe("standard request metrics from a Report read into slots", () => {
  for (const { name, documents } of CONFIGURATIONS) {
    it(`count exactly what the general path's maps count (${name})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 3 }), fc.constantFrom(3, 1000), async (batches, maxSeries) => {
          const [generalRegistry, slotsRegistry] = [new Registry(), new Registry()];
          const general = new RequestMetrics(generalRegistry, maxSeries);
          const slots = new RequestMetrics(slotsRegistry, maxSeries);
          general.configure(documents);
          slots.configure(documents);
          for (const entries of batches) {
            const bytes = reportBytes(entries);
            general.record(decodeReportGeneral(bytes, DICTIONARY).entries);
            const read = decodeReportSlots(bytes, DICTIONARY, slots.attributeSlots());
            assert.ok(read !== undefined, "the filter's kind of Report is read into slots");
            slots.recordSlots(read);
          }
          assert.equal(await slotsRegistry.metrics(), await generalRegistry.metrics());
        }),
        { numRuns: RUNS },
      );
    });
  }
});
