// Every counter and gauge of spec 2 under its spec name and type, on the
// four daemons as real processes: the expected table is generated from the
// spec file (../shared/spec/2-control-plane-daemons.md, test/support/spec2.ts),
// never kept by hand. A spec row of a daemon is either exposed under its name
// (counters: the OpenMetrics `_total` sample name; gauges and histograms: the
// spec name as written, `_total` included) with its type, or declared not
// exported with a reason (host/daemon/spec_surface/metrics.ts) — never both,
// never neither. promtool stays clean apart from exactly the gauges the spec
// names `…_total`, which it flags and the spec mandates.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { METRICS_NOT_EXPORTED, coversMetric, type SpecDaemon } from "../../host/daemon/spec_surface/metrics.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";
import { exposition, type SpecMetric, specMetrics, specMetricsOf } from "../support/spec2.ts";
import { needPromtool, promtoolCheck } from "./promtool.ts";

/** `family → type` of every `# TYPE` line. */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

const SERVICE_ENTRY = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: shop}
spec:
  hosts: [db.example.com]
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  resolution: STATIC
  endpoints: [{address: 127.0.0.1}]
`;

let mesh: LocalMesh;
let discovery: Daemon<{ monitoring: string }>;
const scraped = new Map<SpecDaemon, string>();

before(async () => {
  mesh = await startLocalMesh({ secure: true });
  const dir = tempDir("spec-metrics-disco-");
  writeFileSync(join(dir, "mesh.yaml"), SERVICE_ENTRY);
  discovery = await startDaemon(
    DISCOVERY_BIN,
    ["discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF, "--monitoringAddr", "127.0.0.1:0"],
    "disco-discovery listening: ",
  );
  const text = async (url: string) => (await fetch(url)).text();
  scraped.set("hubs", await text(`http://127.0.0.1:${mesh.hub.listening.monitoringPort}/metrics`));
  scraped.set("mesh_ca", await text(`http://127.0.0.1:${mesh.ca!.listening.monitoringPort}/metrics`));
  scraped.set("disco-agent", await text(`${mesh.adminUrl}/stats/prometheus`));
  scraped.set("disco-discovery", await text(`http://${discovery.listening.monitoring}/metrics`));
});

after(async () => {
  await discovery?.stop();
  await mesh?.stop();
});

describe("spec 2's counters and gauges on every daemon", { timeout: 600_000 }, () => {
  it("the table generated from spec 2 has every group (a parser that reads nothing would pass everything)", () => {
    const all = specMetrics();
    assert.ok(all.length >= 120, `${all.length} rows`);
    for (const daemon of ["disco-agent", "mesh_ca", "hubs", "disco-discovery"] as const) assert.ok(specMetricsOf(daemon).length >= 10, daemon);
    assert.deepEqual(
      all.find((m) => m.name === "hub_config_rule_configs_total"),
      { name: "hub_config_rule_configs_total", type: "LastValue", by: ["HU", "DI", "CT"] },
    );
    assert.deepEqual(all.find((m) => m.name === "sidecar_injection_skip_total")?.type, "Sum");
    assert.deepEqual(all.find((m) => m.name === "outgoing_latency")?.by, ["AG", "CT"]);
  });

  for (const daemon of ["disco-agent", "mesh_ca", "hubs", "disco-discovery"] as const) {
    it(`${daemon}: each spec row exposed under its name and type, or declared not exported`, () => {
      const text = scraped.get(daemon)!;
      const types = families(text);
      const rows = specMetricsOf(daemon);
      const notExported = METRICS_NOT_EXPORTED[daemon];
      const problems: string[] = [];
      for (const row of rows) {
        const { family, type } = exposition(row);
        const declared = notExported.find((e) => coversMetric(e, row.name));
        if (declared) {
          if (types.has(family)) problems.push(`${row.name}: exported as ${family} but declared not exported (${declared.reason})`);
          continue;
        }
        if (!types.has(family)) problems.push(`${row.name} (${row.type}): no family ${family}`);
        else if (types.get(family) !== type) problems.push(`${row.name} (${row.type}): ${family} is a ${types.get(family)}, expected a ${type}`);
        // The names the old exposition used instead (a gauge without `_total`, a unit suffix) must be gone.
        for (const wrong of [row.name.replace(/_total$/, ""), `${row.name}_seconds_total`, `${row.name}_seconds`]) {
          if (wrong !== family && wrong !== row.name && types.has(wrong)) problems.push(`${row.name}: also exposed as ${wrong}`);
        }
      }
      for (const entry of notExported) {
        if (!rows.some((r) => coversMetric(entry, r.name))) problems.push(`${entry.name}: declared not exported, but no spec row of ${daemon} has that name`);
      }
      assert.deepEqual(problems, []);
    });

    it(`${daemon}: promtool is clean apart from the spec's gauges named _total`, (t) => {
      needPromtool(t);
      const text = scraped.get(daemon)!;
      const mandated = new Set(
        specMetricsOf(daemon)
          .filter((m: SpecMetric) => m.type === "LastValue" && m.name.endsWith("_total"))
          .map((m) => m.name),
      );
      const { problems } = promtoolCheck(text);
      const lines = problems.split("\n").filter(Boolean);
      const unexpected = lines.filter((l) => {
        const m = /^(\S+) non-counter metrics should not have "_total" suffix$/.exec(l);
        return !(m && mandated.has(m[1]));
      });
      assert.deepEqual(unexpected, []);
      // Each mandated gauge this daemon exports is one flagged line, and only those.
      const flagged = lines.map((l) => l.split(" ")[0]).sort();
      assert.deepEqual(flagged, [...mandated].filter((name) => families(text).has(name)).sort());
    });
  }
});
