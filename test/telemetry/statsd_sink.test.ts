import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { datagrams, parseStatsdAddress, statsdLines } from "../../host/telemetry/statsd_sink.ts";

describe("statsd sink (--metricsdUdpAddress)", () => {
  it("sends counter increases since the last flush (|c) and gauge values (|g), as Envoy's statsd sink; unused counters are left out", () => {
    const last = new Map<string, number>();
    const gauges = new Set(["listener.inbound.active"]);
    const first = statsdLines(
      {
        values: new Map<string, number | bigint>([
          ["listener.inbound.requests", 3],
          ["listener.inbound.active", 1],
          ["hub.calls", 0n],
        ]),
        gauges,
      },
      last,
      "envoy",
    );
    assert.deepEqual(first, ["envoy.listener.inbound.requests:3|c", "envoy.listener.inbound.active:1|g"]);
    const second = statsdLines(
      {
        values: new Map<string, number | bigint>([
          ["listener.inbound.requests", 5],
          ["listener.inbound.active", 0],
          ["hub.calls", 2n],
        ]),
        gauges,
      },
      last,
      "envoy",
    );
    assert.deepEqual(second, ["envoy.listener.inbound.requests:2|c", "envoy.listener.inbound.active:0|g", "envoy.hub.calls:2|c"]);
    const reset = statsdLines({ values: new Map([["listener.inbound.requests", 1]]), gauges }, last, "envoy");
    assert.deepEqual(reset, ["envoy.listener.inbound.requests:1|c"], "a counter that went down was reset: its value is the increase");
  });

  it("packs lines into datagrams below the MTU without splitting a line", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `envoy.some.rather.long.stat.name.number_${i}:${i}|c`);
    const packets = datagrams(lines);
    assert.ok(packets.length > 1);
    assert.ok(packets.every((p) => p.length <= 1432));
    assert.deepEqual(
      packets.flatMap((p) => p.toString().split("\n")),
      lines,
    );
  });

  it("reads IP:port and refuses anything else naming the flag", () => {
    assert.deepEqual(parseStatsdAddress("127.0.0.1:8125"), { host: "127.0.0.1", port: 8125 });
    assert.deepEqual(parseStatsdAddress("[::1]:8125"), { host: "::1", port: 8125 });
    for (const bad of ["127.0.0.1", "127.0.0.1:0", ":8125", "host:99999"])
      assert.throws(() => parseStatsdAddress(bad), /--metricsdUdpAddress: expected IP:port/, bad);
  });
});
