// The hub's Report decoding in this process, on a batch like the sidecar's:
// 100 entries of ~40 attributes (two header maps, times, durations, int64s,
// addresses as bytes), encoded by the filter module itself (its
// ReportRequestEncoder: bag order, shared default_words, INDEPENDENT_ENCODING).
// Prints µs per reported request for the hub's decoding as server.ts runs it,
// beside the general path alone.
// Alone: node --import tsx test/bench/report_decode.ts (build the module first).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Registry } from "prom-client";
import { RequestMetrics } from "../../host/hubs/request_metrics.ts";
import { decodeReportBytes, decodeReportGeneral } from "../../host/hubs/server.ts";
import { GlobalDictionary } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { messageType } from "../../host/wire/protos.ts";
import { encodeReport, loadWireCodec, type WireCodec } from "../support/wire_codec.ts";
import { median } from "./stats.ts";

const ENTRIES = 100;
const ROUNDS = 5;
const BATCHES_PER_ROUND = 200;

const WASM = join(import.meta.dirname ?? ".", "..", "..", "build", "filter.wasm");

/** One reported request's attributes, as mesh.hub.v1.Attributes values. */
function reported(i: number): Record<string, object> {
  const s = (v: string) => ({ stringValue: v });
  const n = (v: number) => ({ int64Value: String(v) });
  const at = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 + i });
  const t = 1_767_225_600_000 + i * 7;
  return {
    "source.uid": s(`kubernetes://web-7d9f8-${i % 4}.shop`),
    "source.namespace": s("shop"),
    "source.principal": s("spiffe://cluster.local/ns/shop/sa/web"),
    "source.workload.name": s("web"),
    "source.workload.namespace": s("shop"),
    "source.ip": { bytesValue: Uint8Array.of(10, 0, 1, i % 250) },
    "destination.uid": s("kubernetes://items-5c6b-0.shop"),
    "destination.namespace": s("shop"),
    "destination.service.host": s("items.shop.svc.cluster.local"),
    "destination.service.name": s("items"),
    "destination.workload.name": s("items"),
    "destination.principal": s("spiffe://cluster.local/ns/shop/sa/items"),
    "destination.ip": { bytesValue: Uint8Array.of(10, 0, 2, 7) },
    "destination.port": n(8080),
    "request.id": s(`0b5f${i.toString(16).padStart(4, "0")}-9c1e-4a7b-8f00-${(i * 7919).toString(16).padStart(12, "0")}`),
    "request.path": s(`/api/items/${i % 50}?page=${i % 3}`),
    "request.host": s("items.shop"),
    "request.method": s(i % 5 ? "GET" : "POST"),
    "request.scheme": s("http"),
    "request.useragent": s("Mozilla/5.0 (X11; Linux x86_64) bench/1.0"),
    "request.size": n(i % 5 ? 0 : 512),
    "request.total_size": n(830 + (i % 5 ? 0 : 512)),
    "request.time": { timestampValue: at(t) },
    "request.headers": {
      stringMapValue: {
        entries: {
          ":authority": "items.shop",
          ":path": `/api/items/${i % 50}?page=${i % 3}`,
          ":method": i % 5 ? "GET" : "POST",
          ":scheme": "http",
          "user-agent": "Mozilla/5.0 (X11; Linux x86_64) bench/1.0",
          accept: "application/json",
          "accept-encoding": "gzip, deflate",
          "x-request-id": `0b5f${i.toString(16).padStart(4, "0")}`,
          "x-forwarded-proto": "http",
          "x-b3-traceid": (i * 104729).toString(16).padStart(16, "0"),
          "x-user": `user-${i % 7}`,
        },
      },
    },
    "response.code": n(i % 20 ? 200 : 503),
    "response.size": n(1200 + (i % 13)),
    "response.total_size": n(1400 + (i % 13)),
    "response.time": { timestampValue: at(t + 3) },
    "response.duration": { durationValue: { seconds: "0", nanos: 3_000_000 + i * 1000 } },
    "response.headers": {
      stringMapValue: {
        entries: {
          ":status": i % 20 ? "200" : "503",
          "content-type": "application/json",
          "content-length": String(1200 + (i % 13)),
          date: "Thu, 01 Jan 2026 00:00:00 GMT",
          server: "envoy",
          "x-envoy-upstream-service-time": String(2 + (i % 5)),
        },
      },
    },
    "connection.mtls": { boolValue: true },
    "connection.id": s(`conn-${i % 16}`),
    "connection.received.bytes": n(830 * (i + 1)),
    "connection.sent.bytes": n(1400 * (i + 1)),
    "context.protocol": s("http"),
    "context.reporter.kind": s("inbound"),
    "context.reporter.uid": s("kubernetes://items-5c6b-0.shop"),
    "api.service": s("items"),
    "api.operation": s(`getItem${i % 3}`),
  };
}

export function loadFilter(): WireCodec {
  return loadWireCodec(WASM);
}

/** A ReportRequest of `ENTRIES` reported requests, encoded by the filter module. */
export function sidecarReportRequest(wasm: WireCodec, offset: number): Buffer {
  const Attributes = messageType("mesh.hub.v1.Attributes");
  const protos = Array.from({ length: ENTRIES }, (_, i) => Attributes.encode(Attributes.fromObject({ attributes: reported(offset + i) })).finish());
  const bytes = Buffer.from(encodeReport(wasm, protos));
  if (bytes.length === 0) throw new Error("the filter module refused the bench's attributes");
  return bytes;
}

/**
 * µs per reported request to decode sidecar-like batches as the Report
 * handler does, and by the general path alone (protobufjs and the UTF-8
 * walk: what every request took before the plain reader), in interleaved rounds.
 */
export function runReportDecodeBench(): string[] {
  const dictionary = new GlobalDictionary(GLOBAL_WORDS);
  const wasm = loadFilter();
  const batches = Array.from({ length: 4 }, (_, j) => sidecarReportRequest(wasm, j * ENTRIES));
  // A hub without an access log decodes only what its standard metrics read.
  const metricsRead = new RequestMetrics(new Registry(), 1).attributesRead();
  const ways = {
    handler: decodeReportBytes,
    general: decodeReportGeneral,
    metricsOnly: (bytes: Buffer, d: GlobalDictionary) => decodeReportBytes(bytes, d, metricsRead),
  };
  const round = (decode: (bytes: Buffer, d: GlobalDictionary) => { entries: unknown[] }) => {
    const start = performance.now();
    let taken = 0;
    for (let i = 0; i < BATCHES_PER_ROUND; i++) taken += decode(batches[i % batches.length], dictionary).entries.length;
    if (taken !== BATCHES_PER_ROUND * ENTRIES) throw new Error(`${BATCHES_PER_ROUND * ENTRIES - taken} entries refused`);
    return ((performance.now() - start) * 1000) / (BATCHES_PER_ROUND * ENTRIES);
  };
  round(ways.handler);
  round(ways.general);
  round(ways.metricsOnly);
  const micros = { handler: [] as number[], general: [] as number[], metricsOnly: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    micros.handler.push(round(ways.handler));
    micros.general.push(round(ways.general));
    micros.metricsOnly.push(round(ways.metricsOnly));
  }
  const handler = median(micros.handler);
  const general = median(micros.general);
  const metricsOnly = median(micros.metricsOnly);
  return [
    `hub Report decoding in process (sidecar-like batches: ${ENTRIES} entries of ${Object.keys(reported(0)).length} attributes, ${batches[0].length} bytes; medians of ${ROUNDS} interleaved rounds)`,
    `  µs per reported request          ${handler.toFixed(2).padStart(12)}   (general path alone: ${general.toFixed(2)} µs, ${(general / handler).toFixed(1)}×; only what the standard metrics read, as a hub without an access log decodes: ${metricsOnly.toFixed(2)} µs)`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const line of runReportDecodeBench()) console.log(line);
}
