import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { describe, it } from "node:test";
import { ConnectionFacts, RequestProperties, connectionFacts } from "../../host/proxy/request_properties.ts";
import { ProxyWasmVm } from "../../host/wasm/abi_host.ts";
import type { GrpcCall } from "../../host/wasm/abi_types.ts";
import { messageType } from "../../host/wire/protos.ts";
import { type AttributeMap, GlobalDictionary, decodeAttributes } from "../../host/wire/compressed.ts";
import { GLOBAL_WORDS } from "../../host/wire/global_words.ts";
import { BUILDS, SERVICE, pluginConfig } from "../wasm/emulator_support.ts";

// The sidecar's properties of a request (host/proxy/request_properties.ts),
// as the filter reads them: a connection's addresses are made once, and the
// host reuses a batched read's serialized answer for the connection's later
// requests only while they would answer it alike.

const DICTIONARY = new GlobalDictionary(GLOBAL_WORDS);
const CHECK = messageType("mesh.hub.v1.CheckRequest");
const HEADERS: Array<[string, string]> = [
  [":method", "GET"],
  [":path", "/orders/7"],
  [":authority", "orders:8080"],
  [":scheme", "http"],
];

function socket(remotePort: number): Socket {
  return { remoteAddress: "10.0.0.5", remotePort, localAddress: "10.0.0.9", localPort: 8080 } as unknown as Socket;
}

/** A VM whose every request is checked (no check cache), with the check attributes of each request. */
function checkedVm(wasm: string): { vm: ProxyWasmVm; checks: AttributeMap[] } {
  const checks: AttributeMap[] = [];
  const vm = new ProxyWasmVm(wasm, {
    log: () => {},
    now: () => 1_763_800_000_000_000_000n,
    grpcCall: (call: GrpcCall) => {
      if (call.method !== "Check") return;
      const decoded = CHECK.toObject(CHECK.decode(call.message), { longs: String, bytes: Array }) as { attributes: Parameters<typeof decodeAttributes>[0] };
      checks.push(decodeAttributes(decoded.attributes, { dictionary: DICTIONARY }));
    },
    tickPeriod: () => {},
  });
  const { accepted } = vm.startRoot(JSON.stringify(pluginConfig({ transport: { disableCheckCache: true } })));
  assert.equal(accepted, true);
  return { vm, checks };
}

function text(map: AttributeMap, name: string): unknown {
  const v = map.get(name);
  if (v === undefined) return undefined;
  if ("bytesValue" in v) return [...v.bytesValue].join(".");
  if ("int64Value" in v) return String(v.int64Value);
  return Object.values(v)[0];
}

describe("sidecar request properties", () => {
  it("a connection's requests share its facts; another connection has its own", () => {
    const s = socket(41000);
    assert.equal(connectionFacts(s), connectionFacts(s));
    assert.equal(connectionFacts(s).source, "10.0.0.5:41000");
    assert.equal(connectionFacts(s).destination, "10.0.0.9:8080");
    assert.notEqual(connectionFacts(socket(41001)), connectionFacts(s));
  });

  it("promises the same answers only for the same connection, route properties and protocol, before anything request-specific is known", () => {
    const facts = new ConnectionFacts(socket(41000));
    const route = Object.freeze({ "mesh.destination_service": SERVICE });
    const props = () => {
      const p = new RequestProperties(facts, "HTTP/1.1");
      p.route = route;
      return p;
    };
    const key = props().answersKey();
    assert.notEqual(key, undefined);
    assert.equal(props().answersKey(), key);
    const otherRoute = props();
    otherRoute.route = { "mesh.destination_service": "other.svc" };
    assert.notEqual(otherRoute.answersKey(), key);
    const staged = props();
    staged.stage = { "connection.uri_san_peer_certificate": "spiffe://x" };
    assert.equal(staged.answersKey(), undefined);
    const mtls = props();
    mtls.mtls = true;
    assert.equal(mtls.answersKey(), undefined);
    const finished = props();
    finished.outcome = { code: 200, requestBytes: 0, responseBytes: 1, durationNs: 1n };
    assert.equal(finished.answersKey(), undefined);
  });

  for (const [build, wasm] of BUILDS) {
    it(`the filter sees each request's own facts when answers are reused (${build})`, () => {
      const { vm, checks } = checkedVm(wasm);
      const facts = connectionFacts(socket(41000));
      const send = (configure: (p: RequestProperties) => void) => {
        const p = new RequestProperties(facts, "HTTP/1.1");
        configure(p);
        const id = vm.createStream(1, p);
        vm.requestHeaders(id, HEADERS, true, true);
        return checks.at(-1)!;
      };
      const routed = Object.freeze({ "mesh.destination_service": SERVICE });
      const first = send((p) => (p.route = routed));
      const second = send((p) => (p.route = routed));
      assert.equal(text(first, "source.ip"), "10.0.0.5");
      assert.equal(text(second, "source.port"), "41000");
      assert.equal(text(second, "destination.port"), "8080");
      assert.equal(text(second, "connection.mtls"), false);
      // Another route on the same connection: its own answer, a service
      // without a config, so no check (a reused answer would have named the configured one).
      send((p) => (p.route = { "mesh.destination_service": "elsewhere.shop.svc.cluster.local" }));
      assert.equal(checks.length, 2);
      // A security stage's facts are never taken from an earlier request's answer.
      const secured = send((p) => {
        p.route = routed;
        p.mtls = true;
        p.stage = { "connection.uri_san_peer_certificate": "spiffe://cluster.local/ns/web/sa/frontend" };
      });
      assert.equal(text(secured, "connection.mtls"), true);
      assert.equal(text(secured, "source.principal"), "cluster.local/ns/web/sa/frontend");
      assert.equal(checks.length, 3);
    });
  }
});
