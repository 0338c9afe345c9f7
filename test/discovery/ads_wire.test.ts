// ADS responses built from pre-encoded bytes (host/discovery/ads_wire.ts) and
// the selections shared by proxies (host/discovery/selection.ts): what Envoy
// reads from them, decoded with Envoy's own v3 protos.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import protobuf from "protobufjs";
import { deltaDiscoveryResponse, deltaResourceBytes, discoveryResponse, readSotwAck, sotwResourceBytes } from "../../host/discovery/ads_wire.ts";
import { type Resource, resourceVersion } from "../../host/discovery/resource_set.ts";
import { NameSets, selectionChange, selectionOf } from "../../host/discovery/selection.ts";
import { envoyType } from "../../host/wire/envoy_protos.ts";

const ENDPOINT = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

function assignment(cluster: string, address: string): Resource {
  const type = envoyType("envoy.config.endpoint.v3.ClusterLoadAssignment");
  const value = type
    .encode(
      type.fromObject({
        cluster_name: cluster,
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address, port_value: 80 } } } }] }],
      }),
    )
    .finish();
  return { name: cluster, any: { type_url: ENDPOINT, value } };
}

// Long and non-ASCII strings: lengths of two bytes and more, UTF-8 counted in bytes.
const longName = `outbound|80||${"é".repeat(100)}.svc.cluster.local`;
const IDENTIFIER = JSON.stringify({ Component: "disco-discovery", ID: "x".repeat(200) });

describe("ADS responses from pre-encoded resources", () => {
  it("a state-of-the-world response carries every resource, its version, type, nonce and control plane", () => {
    const resources = [assignment("a", "10.0.0.1"), assignment(longName, "10.0.0.2")];
    const type = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    const r = type.toObject(type.decode(discoveryResponse("v1", ENDPOINT, "7-3", sotwResourceBytes(resources), IDENTIFIER)), {
      defaults: true,
    }) as Record<string, unknown> & { resources: Array<{ type_url: string; value: Uint8Array }>; control_plane: { identifier: string } };
    assert.equal(r.version_info, "v1");
    assert.equal(r.type_url, ENDPOINT);
    assert.equal(r.nonce, "7-3");
    assert.equal(r.control_plane.identifier, IDENTIFIER);
    assert.deepEqual(
      r.resources.map((x) => [x.type_url, Buffer.from(x.value).toString("hex")]),
      resources.map((x) => [x.any.type_url, Buffer.from(x.any.value).toString("hex")]),
    );
  });

  it("an incremental response carries each resource with its name and version, and the names removed", () => {
    const resources = [assignment(longName, "10.0.0.2")];
    const type = envoyType("envoy.service.discovery.v3.DeltaDiscoveryResponse");
    const bytes = deltaDiscoveryResponse("", ENDPOINT, "n".repeat(130), deltaResourceBytes(resources, false), ["gone", `ü${"x".repeat(300)}`], undefined);
    const r = type.toObject(type.decode(bytes), { defaults: true }) as Record<string, unknown> & {
      resources: Array<{ name: string; version: string; resource: { type_url: string; value: Uint8Array } }>;
    };
    assert.equal(r.system_version_info, "");
    assert.equal(r.nonce, "n".repeat(130));
    assert.deepEqual(r.removed_resources, ["gone", `ü${"x".repeat(300)}`]);
    assert.equal(r.control_plane, null);
    assert.equal(r.resources.length, 1);
    assert.equal(r.resources[0].name, longName);
    assert.equal(r.resources[0].version, resourceVersion(resources[0]));
    assert.deepEqual(Buffer.from(r.resources[0].resource.value), Buffer.from(resources[0].any.value));
  });
});

describe("selections shared by proxies", () => {
  it("proxies that name the same resources share one selection; a change between two selections is computed once", () => {
    const names = new NameSets();
    const a = names.intern(new Set(["b", "a", "missing"]));
    const b = names.intern(new Set(["a", "missing", "b"]));
    assert.equal(a, b);
    const before = new Map([
      [
        ENDPOINT,
        new Map([
          ["a", assignment("a", "10.0.0.1")],
          ["b", assignment("b", "10.0.0.2")],
        ]),
      ],
    ]);
    const after = new Map([
      [
        ENDPOINT,
        new Map([
          ["a", before.get(ENDPOINT)!.get("a")!],
          ["b", assignment("b", "10.0.0.9")],
        ]),
      ],
    ]);
    const s1 = selectionOf(before, ENDPOINT, a);
    assert.equal(selectionOf(before, ENDPOINT, b), s1);
    assert.deepEqual(
      s1.resources.map((r) => r.name),
      ["a", "b"],
    );
    const s2 = selectionOf(after, ENDPOINT, a);
    const change = selectionChange(s1, s2);
    assert.deepEqual(
      change.changed.map((r) => r.name),
      ["b"],
    );
    assert.deepEqual(change.removed, []);
    assert.equal(selectionChange(s1, s2), change);
    const gone = selectionChange(s2, selectionOf(new Map([[ENDPOINT, new Map([["a", after.get(ENDPOINT)!.get("a")!]])]]), ENDPOINT, a));
    assert.deepEqual(gone, { changed: [], removed: ["b"] });
    assert.notEqual(s1.version(), s2.version());
  });
});

describe("state-of-the-world ACKs read without decoding their names", () => {
  const request = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
  const encode = (fields: Record<string, unknown>) => request.encode(request.fromObject(fields)).finish();
  const names = ["outbound|80||a.foo.svc.cluster.local", longName];

  it("an ACK gives its version, type, nonce and its names' bytes, the same for the same names in the same order", () => {
    const ack = readSotwAck(encode({ version_info: "v1", resource_names: names, type_url: ENDPOINT, response_nonce: "7-3" }))!;
    assert.deepEqual([ack.version, ack.typeUrl, ack.nonce], ["v1", ENDPOINT, "7-3"]);
    const again = readSotwAck(encode({ version_info: "v2", resource_names: names, type_url: ENDPOINT, response_nonce: "7-4" }))!;
    assert.ok(Buffer.from(again.names).equals(ack.names));
    const reordered = readSotwAck(encode({ resource_names: [...names].reverse(), type_url: ENDPOINT, response_nonce: "7-4" }))!;
    assert.ok(!Buffer.from(reordered.names).equals(ack.names));
    assert.equal(readSotwAck(encode({ type_url: ENDPOINT, response_nonce: "1" }))!.names.byteLength, 0);
  });

  it("a request with a node or an error, or names split by another field, is left to the full decoder", () => {
    assert.equal(readSotwAck(encode({ node: { id: "x" }, type_url: ENDPOINT, response_nonce: "1" })), undefined);
    assert.equal(readSotwAck(encode({ type_url: ENDPOINT, response_nonce: "1", error_detail: { message: "no" } })), undefined);
    const w = protobuf.Writer.create();
    w.uint32((3 << 3) | 2).string(names[0]);
    w.uint32((4 << 3) | 2).string(ENDPOINT);
    w.uint32((3 << 3) | 2).string(names[1]);
    assert.equal(readSotwAck(w.finish()), undefined);
  });
});
