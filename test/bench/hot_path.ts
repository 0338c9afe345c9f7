import { FilterModule, type RequestInput } from "../../host/wasm/filter_module.ts";
import { type BaselineConfig, type BaselineRequest, compileBaseline, evaluateBaseline } from "./baseline.ts";

const SERVICE = "bench.default.svc.cluster.local";
const PATTERN_COUNTS = [1, 10, 50, 200];
const ROUNDS = 5;
const WASM_ITERATIONS = 20_000;
const TS_ITERATIONS = 20_000;

/** N patterns over N/4 resources: collection GET/POST, item GET, and a `**` file route. */
function patterns(n: number): BaselineConfig["patterns"] {
  const kinds = [
    (i: number) => ({ method: "GET", uriTemplate: `/api/r${i}/items` }),
    (i: number) => ({ method: "POST", uriTemplate: `/api/r${i}/items` }),
    (i: number) => ({ method: "GET", uriTemplate: `/api/r${i}/items/{id}` }),
    (i: number) => ({ method: "GET", uriTemplate: `/api/r${i}/items/{id}/files/{path=**}` }),
  ];
  return Array.from({ length: n }, (_, i) => ({ ...kinds[i % 4](Math.floor(i / 4)), attributes: { "api.operation": `op${i}` } }));
}

function config(n: number): BaselineConfig {
  return {
    specAttributes: { "api.service": "bench", "api.version": "v1" },
    patterns: patterns(n),
    apiKeys: [],
    quotaRules: [
      { match: [], quotas: [{ quota: "requests", charge: 1 }] },
      { match: [{ "request.method": { exact: "POST" }, "request.path": { prefix: "/api/" } }], quotas: [{ quota: "writes", charge: 2 }] },
    ],
  };
}

function pluginConfig(c: BaselineConfig): string {
  const attrs = (r: Record<string, string>) => ({ attributes: Object.fromEntries(Object.entries(r).map(([k, v]) => [k, { stringValue: v }])) });
  return JSON.stringify({
    httpClientConfig: {
      serviceConfigs: {
        [SERVICE]: {
          httpApiSpec: [{ attributes: attrs(c.specAttributes), patterns: c.patterns.map((p) => ({ httpMethod: p.method, uriTemplate: p.uriTemplate, attributes: attrs(p.attributes) })) }],
          quotaSpec: [{ rules: c.quotaRules.map((r) => ({ match: r.match.map((m) => ({ clause: m })), quotas: r.quotas })) }],
        },
      },
    },
  });
}

/** The request mix: a hit on the last resource, on the first, a `**` route, and a miss. */
function requests(n: number): Array<Array<[string, string]>> {
  const last = Math.max(0, Math.floor((n - 1) / 4));
  const common: Array<[string, string]> = [
    [":authority", SERVICE],
    [":scheme", "http"],
    ["user-agent", "bench/1.0"],
    ["accept", "application/json"],
    ["x-request-id", "0f0e0d0c-0b0a-0908-0706-050403020100"],
    ["x-api-key", "k-1"],
  ];
  return [
    [[":method", "GET"], [":path", `/api/r${last}/items/42?key=abc`], ...common],
    [[":method", "POST"], [":path", "/api/r0/items"], ...common],
    [[":method", "GET"], [":path", `/api/r${last}/items/7/files/a/b/c.txt`], ...common],
    [[":method", "GET"], [":path", "/nowhere/at/all"], ...common],
  ];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function nsPer(iterations: number, run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / iterations;
}

/** Measures the hot path in the module and in the TS baseline, side by side. */
export function runHotPathBench(): string[] {
  const filter = FilterModule.load();
  const lines = [
    "hot path: attributes + API spec + API key + quotas, ns per request (median of 5 interleaved rounds, 4-request mix)",
    "patterns   filter.wasm   TS baseline   baseline/wasm",
  ];
  const wasmByCount: number[] = [];
  for (const n of PATTERN_COUNTS) {
    const c = config(n);
    const configured = filter.configure(pluginConfig(c));
    if ("error" in configured) throw new Error(configured.error);
    const baseline = compileBaseline(c);
    const mix = requests(n);
    const inputs: RequestInput[] = mix.map((headers) => ({ headers, properties: [["source.address", "10.1.2.3:51000"], ["mesh.destination_service", SERVICE]], timeNanos: 1_763_800_000_000_000_000n }));
    const tsInputs: BaselineRequest[] = mix.map((headers) => ({ headers, sourceAddress: "10.1.2.3:51000", timeMs: 1_763_800_000_000 }));
    const wasm: number[] = [];
    const ts: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      wasm.push(nsPer(WASM_ITERATIONS * inputs.length, () => {
        for (const input of inputs) filter.evaluateRepeatedly(configured.handle, input, WASM_ITERATIONS);
      }));
      ts.push(nsPer(TS_ITERATIONS * tsInputs.length, () => {
        for (let i = 0; i < TS_ITERATIONS; i++) for (const input of tsInputs) evaluateBaseline(baseline, input);
      }));
    }
    filter.release(configured.handle);
    const w = median(wasm);
    const t = median(ts);
    wasmByCount.push(w);
    lines.push(`${String(n).padStart(8)}   ${w.toFixed(0).padStart(11)}   ${t.toFixed(0).padStart(11)}   ${(t / w).toFixed(2).padStart(13)}`);
  }
  lines.push(`filter.wasm cost at ${PATTERN_COUNTS.at(-1)} patterns / at ${PATTERN_COUNTS[0]} pattern: ${(wasmByCount.at(-1)! / wasmByCount[0]).toFixed(2)}`);
  return lines;
}
