import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FilterEmulator } from "../../host/wasm/emulator.ts";
import { type AttributeMap, type AttributeValue, GlobalDictionary, decodeAttributes } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { BUILDS, REQUEST, SERVICE, allow, pluginConfig } from "./emulator_support.ts";

// The module reads a stream's properties as two sets (request time, log
// time): in one call each from a host that answers batched reads (ours), one
// call per property from a host that does not (Envoy answers NOT_FOUND).
// Either way the hub must see the same attributes, from the first request on.

const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);

const REQUEST_PROPERTIES = {
  "source.address": "10.0.0.5:41000",
  "destination.address": "10.0.0.9:8080",
  "connection.mtls": true,
  "connection.uri_san_peer_certificate": "spiffe://cluster.local/ns/web/sa/frontend",
  "connection.uri_san_local_certificate": "spiffe://cluster.local/ns/shop/sa/orders",
  "connection.requested_server_name": "outbound_.8080_._.orders.shop.svc.cluster.local",
  "mesh.destination_service": SERVICE,
  "mesh.authn_payload": JSON.stringify({ iss: "https://issuer.example", sub: "user-7", aud: ["orders"] }),
};

const LOG_PROPERTIES = {
  "request.size": 12n,
  "response.size": 345n,
  "request.total_size": 112n,
  "response.total_size": 445n,
  "upstream.address": "10.0.0.9:8080",
};

function plain(map: AttributeMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of [...map].sort(([a], [b]) => a.localeCompare(b))) out[name] = shown(v);
  return out;
}

function shown(v: AttributeValue): unknown {
  if ("bytesValue" in v) return [...v.bytesValue];
  if ("int64Value" in v) return Number(v.int64Value);
  if ("timestampValue" in v || "durationValue" in v) return "(time)";
  if ("stringMapValue" in v) return Object.fromEntries(Object.entries(v.stringMapValue.entries).sort(([a], [b]) => a.localeCompare(b)));
  return Object.values(v)[0];
}

/** The check's and the report's attributes of one request, on a host that batches property reads or not. */
function attributesSeen(wasm: string, propertyBatches: boolean): { check: Record<string, unknown>; report: Record<string, unknown> } {
  const emu = new FilterEmulator(pluginConfig({ transport: { disableReportBatch: true } }), wasm, { propertyBatches });
  emu.script.push({ respond: allow() });
  // A request with a body (LOG_PROPERTIES' request.size): its headers do not end the stream.
  const r = emu.request(REQUEST, REQUEST_PROPERTIES, true);
  assert.equal(emu.continued(r.id), true);
  emu.finish(r.id, 201, [["content-type", "text/plain"]], LOG_PROPERTIES);
  const check = emu.calls.find((c) => c.method === "Check")!;
  const report = emu.calls.find((c) => c.method === "Report")!;
  return {
    check: plain(decodeAttributes(check.decoded.attributes, { dictionary: DICTIONARY })),
    report: plain(decodeAttributes(report.decoded.attributes[0], { dictionary: DICTIONARY, defaultWords: report.decoded.defaultWords ?? [] })),
  };
}

for (const [build, wasm] of BUILDS) {
  describe(`filter in a proxy-wasm host (${build}): stream properties`, () => {
    it("a host that answers batched reads and one that does not give the hub the same attributes", () => {
      const batched = attributesSeen(wasm, true);
      const single = attributesSeen(wasm, false);
      assert.deepEqual(batched, single);
    });

    it("every request-time and log-time property reaches its attribute", () => {
      for (const propertyBatches of [true, false]) {
        const { check, report } = attributesSeen(wasm, propertyBatches);
        const mode = propertyBatches ? "batched" : "one call each";
        assert.deepEqual(check["source.ip"], [10, 0, 0, 5], mode);
        assert.equal(check["source.port"], 41000, mode);
        assert.deepEqual(check["destination.ip"], [10, 0, 0, 9], mode);
        assert.equal(check["destination.port"], 8080, mode);
        assert.equal(check["connection.mtls"], true, mode);
        assert.equal(check["source.principal"], "cluster.local/ns/web/sa/frontend", mode);
        assert.equal(check["destination.principal"], "cluster.local/ns/shop/sa/orders", mode);
        assert.equal(check["connection.requested_server_name"], "outbound_.8080_._.orders.shop.svc.cluster.local", mode);
        assert.equal(check["destination.service.host"], SERVICE, mode);
        assert.equal(check["request.auth.principal"], "https://issuer.example/user-7", mode);
        assert.equal(report["response.code"], 201, mode);
        assert.equal(report["request.size"], 12, mode);
        assert.equal(report["response.size"], 345, mode);
        assert.equal(report["request.total_size"], 112, mode);
        assert.equal(report["response.total_size"], 445, mode);
      }
    });

    for (const propertyBatches of [false, true]) {
      const host = propertyBatches ? "a host that answers batched reads (its batch names only the rest)" : "a host that reads one property per call (Envoy)";
      it(`what the module knows at log time it does not ask ${host}: no body's size, an unused upstream address`, () => {
        const emu = new FilterEmulator(pluginConfig({ transport: { disableReportBatch: true } }), wasm, { propertyBatches });
        emu.script.push({ respond: allow() });
        const reportOf = (withBody: boolean, properties: Record<string, string | boolean>) => {
          const r = emu.request(REQUEST, properties, withBody);
          emu.propertiesAsked.length = 0;
          // A host whose answers disagree with the stream's ends: the module keeps what the headers said.
          emu.finish(r.id, 200, [], withBody ? LOG_PROPERTIES : { ...LOG_PROPERTIES, "response.size": 0n, "request.size": 12n });
          const report = emu.calls.filter((c) => c.method === "Report").at(-1)!;
          const asked = [...emu.propertiesAsked];
          return {
            asked,
            attrs: plain(decodeAttributes(report.decoded.attributes[0], { dictionary: DICTIONARY, defaultWords: report.decoded.defaultWords ?? [] })),
          };
        };
        // Headers that end the request and the response; destination.address gives destination.ip and port.
        const bodyless = reportOf(false, REQUEST_PROPERTIES);
        assert.deepEqual(bodyless.asked, ["response.code", "request.total_size", "response.total_size"]);
        assert.equal(bodyless.attrs["request.size"], 0);
        assert.equal(bodyless.attrs["response.size"], 0);
        assert.deepEqual(bodyless.attrs["destination.ip"], [10, 0, 0, 9]);
        // Bodies, and no destination address: every outcome property is read.
        const { "destination.address": _, ...withoutDestination } = REQUEST_PROPERTIES;
        const full = reportOf(true, withoutDestination);
        assert.deepEqual(full.asked, ["response.code", "request.size", "response.size", "request.total_size", "response.total_size", "upstream.address"]);
        assert.equal(full.attrs["request.size"], 12);
        assert.equal(full.attrs["response.size"], 345);
        assert.deepEqual([full.attrs["destination.ip"], full.attrs["destination.port"]], [[10, 0, 0, 9], 8080]);
      });
    }

    it("without a destination address, each report's destination ip and port are those of its own upstream", () => {
      const emu = new FilterEmulator(pluginConfig({ transport: { disableReportBatch: true } }), wasm);
      emu.script.push({ respond: allow() });
      const { "destination.address": _, ...withoutDestination } = REQUEST_PROPERTIES;
      const upstreams = ["10.0.0.9:8080", "10.0.0.9:8080", "[fd00::7]:9090", "10.0.0.9:8080", "10.1.0.1:81"];
      const seen: unknown[] = [];
      for (const upstream of upstreams) {
        const r = emu.request(REQUEST, withoutDestination, true);
        emu.finish(r.id, 200, [], { ...LOG_PROPERTIES, "upstream.address": upstream });
        const report = emu.calls.filter((c) => c.method === "Report").at(-1)!;
        const attrs = plain(decodeAttributes(report.decoded.attributes[0], { dictionary: DICTIONARY, defaultWords: report.decoded.defaultWords ?? [] }));
        seen.push([attrs["destination.ip"], attrs["destination.port"]]);
      }
      const v6 = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
      assert.deepEqual(seen, [
        [[10, 0, 0, 9], 8080],
        [[10, 0, 0, 9], 8080],
        [v6, 9090],
        [[10, 0, 0, 9], 8080],
        [[10, 1, 0, 1], 81],
      ]);
    });
  });
}
