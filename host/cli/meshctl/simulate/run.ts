import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { type CatalogChecks, filterChecks } from "../../../config/catalog.ts";
import { ConfigError } from "../../../config/errors.ts";
import { FilterModule } from "../../../wasm/filter_module.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { type SimulateCa, startSimulateCa } from "./ca.ts";
import { type SimulateResult, buildRequest, resolveConnection, send } from "./request.ts";
import { scenarioDocuments } from "./resources.ts";
import { type Scenario, decodeScenarioFile } from "./scenario.ts";
import { routeTaken, snapshotRoutes } from "./route_taken.ts";
import { type ScenarioMesh, startScenarioMesh } from "./scenario_mesh.ts";
import type { AgentEnvironment } from "../../../proxy/agent_options.ts";
import { startLimit } from "./start_limit.ts";
import { type TokenKeys, createTokenKeys, tokenKeysNeeded } from "./tokens.ts";

export interface SimulateOptions {
  file: string;
  /** Scenarios run at the same time (each has its own processes). */
  parallel: number;
  output: Writable;
  errors: Writable;
  /** Text of `-`; read from file descriptor 0 when not given. */
  stdin?: () => string;
  /** Keep the temporary directories (configuration, mesh settings) for inspection. */
  keep?: boolean;
  /** meshctl's environment: the CT variables the sidecars apply (AGENT_CT_VARIABLES) are taken from it. */
  env?: NodeJS.ProcessEnv;
}

/** Spec 2 variables of columns AG and CT that disco-agent applies and a scenario's outcome can show: simulate's sidecars take them from meshctl's environment. */
export const AGENT_CT_VARIABLES = ["DISCO_ENABLE_FALLTHROUGH_ROUTE"] as const;

/** Default of `--parallel`: scenarios of one file started at once. */
export const DEFAULT_PARALLEL_SCENARIOS = 8;

/** Files with at least this many scenarios get a progress line on stderr per scenario done. */
export const PROGRESS_MIN_SCENARIOS = 10;

/**
 * `meshctl x simulate -f FILE`: decodes every scenario first (a bad one: exit
 * 2, no scenario runs), then runs them on loopback — one CA (mesh_ca's
 * server, in-process) per trust domain for the whole file, each scenario's
 * own workloads — and prints one JSON line per scenario in file order.
 * Everything is stopped at the end, also on errors and on SIGINT/SIGTERM.
 */
export async function runSimulate(o: SimulateOptions): Promise<number> {
  let text: string;
  try {
    text = o.file === "-" ? (o.stdin ?? (() => readFileSync(0, "utf8")))() : readFileSync(o.file, "utf8");
  } catch (e) {
    o.errors.write(`Error: meshctl x simulate: cannot read ${JSON.stringify(o.file)}: ${(e as Error).message}\n`);
    return EXIT_BAD_CONFIG;
  }
  const agentEnv: AgentEnvironment = {};
  for (const name of AGENT_CT_VARIABLES) {
    const value = o.env?.[name];
    if (value === undefined || value === "") continue;
    if (value !== "true" && value !== "false") {
      o.errors.write(`Error: meshctl x simulate: ${name}: expected true or false, got ${JSON.stringify(value)}\n`);
      return EXIT_BAD_CONFIG;
    }
    agentEnv[name] = value;
  }
  const warnings: string[] = [];
  const label = o.file === "-" ? "<stdin>" : o.file;
  const badConfig = (e: unknown) => {
    for (const w of warnings) o.errors.write(`${w.startsWith("Warning: ") ? w : `Warning: ${w}`}\n`);
    if (!(e instanceof ConfigError)) throw e;
    o.errors.write(`Error: meshctl x simulate: ${e.message}\n`);
    return EXIT_BAD_CONFIG;
  };
  let scenarios: Scenario[];
  try {
    scenarios = decodeScenarioFile(text, label, warnings);
  } catch (e) {
    return badConfig(e);
  }

  const root = mkdtempSync(join(tmpdir(), "meshctl-simulate-"));
  if (o.keep) o.errors.write(`meshctl x simulate: keeping ${root}\n`);
  const cas = new Map<string, Promise<SimulateCa>>();
  // Every scenario's stop function, from before its first process starts (stop is idempotent).
  const stoppers = new Set<() => Promise<void>>();
  const inflight = new Set<Promise<unknown>>();
  let aborted = false;
  const cleanup = async () => {
    await Promise.all([...stoppers].map((stop) => stop()));
    await Promise.all(
      [...cas.values()].map((c) =>
        c.then(
          (ca) => ca.stop(),
          () => undefined,
        ),
      ),
    );
    if (!o.keep) rmSync(root, { recursive: true, force: true });
  };
  // A signal or an abrupt exit must not leave sidecars behind.
  const killAll = () => {
    for (const stop of stoppers) void stop();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    aborted = true;
    // Scenarios still starting finish their starts (then stop at once) before the CA goes.
    void Promise.all([...stoppers].map((stop) => stop()))
      .then(() => Promise.allSettled([...inflight]))
      .then(cleanup)
      .finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", killAll);
  const forget = () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("exit", killAll);
  };
  const caFor = (trustDomain: string) => {
    let ca = cas.get(trustDomain);
    if (!ca) cas.set(trustDomain, (ca = startSimulateCa(trustDomain, join(root, `ca-${cas.size}`))));
    return ca;
  };

  // The CAs start while the token keys are generated (other threads) and the resources are checked.
  for (const s of scenarios) caFor(s.mesh.trustDomain).catch(() => undefined);
  let keys: TokenKeys;
  let prepared: Array<Record<string, unknown>[]>;
  let filter: FilterModule;
  try {
    const keysMade = createTokenKeys(tokenKeysNeeded(scenarios));
    keysMade.catch(() => undefined);
    filter = FilterModule.load();
    const checks: CatalogChecks = filterChecks(filter);
    keys = await keysMade;
    prepared = scenarios.map((s) => scenarioDocuments(s, keys, checks, label, warnings));
  } catch (e) {
    await cleanup();
    forget();
    return badConfig(e);
  }
  for (const w of warnings) o.errors.write(`${w.startsWith("Warning: ") ? w : `Warning: ${w}`}\n`);

  const limit = startLimit();
  let done = 0;
  const progress = (i: number, r: SimulateResult | undefined) => {
    if (scenarios.length < PROGRESS_MIN_SCENARIOS || aborted) return;
    const what = r === undefined ? "error" : r.outcome === "http" ? String(r.status) : r.outcome;
    o.errors.write(`[${++done}/${scenarios.length}] ${scenarios[i].id} ${what}\n`);
  };
  let failed = false;
  let next = 0;
  const runOne = async (i: number): Promise<SimulateResult | undefined> => {
    const s = scenarios[i];
    let stop: (() => Promise<void>) | undefined;
    try {
      const ca = await caFor(s.mesh.trustDomain);
      const mesh = await startScenarioMesh(s, prepared[i], keys, { ca, checks: filter, agentEnv }, join(root, `scenario-${i}`), limit, (f) =>
        stoppers.add((stop = f)),
      );
      if (aborted) return undefined;
      return await simulateRequest(
        s,
        mesh,
        keys,
        prepared[i].some((d) => d.kind === "VirtualService"),
      );
    } catch (e) {
      failed = true;
      if (!aborted) o.errors.write(`Error: meshctl x simulate: ${s.path || "scenario"} (id ${JSON.stringify(s.id)}): ${(e as Error).message}\n`);
      return undefined;
    } finally {
      // Stopped in the background: the next scenario need not wait; cleanup awaits it (stoppers).
      void stop?.();
    }
  };
  // A small pool: scenarios start in file order, lines are printed in file order.
  const slots: Array<Promise<void>> = [];
  const settled: Array<SimulateResult | undefined | null> = scenarios.map(() => null);
  let printed = 0;
  const flush = () => {
    while (printed < settled.length && settled[printed] !== null) {
      const r = settled[printed++];
      if (r) o.output.write(`${JSON.stringify(r)}\n`);
    }
  };
  for (let k = 0; k < Math.max(1, o.parallel); k++) {
    slots.push(
      (async () => {
        while (next < scenarios.length && !aborted) {
          const i = next++;
          const p = runOne(i);
          inflight.add(p);
          settled[i] = await p;
          inflight.delete(p);
          progress(i, settled[i] ?? undefined);
          flush();
        }
      })(),
    );
  }
  try {
    await Promise.all(slots);
  } finally {
    await cleanup();
    forget();
  }
  return failed ? EXIT_FAILURE : EXIT_OK;
}

/**
 * Sends the scenario's request and reads what the destination app received.
 * `routed`: the scenario has VirtualServices, so a route may be taken (the
 * sidecars record only the routes VirtualServices choose); without any, the
 * sidecars' /config_dump is not read before and after (a full dump per
 * sidecar, twice, for a `route` field that cannot be there).
 */
async function simulateRequest(s: Scenario, mesh: ScenarioMesh, keys: TokenKeys, routed: boolean): Promise<SimulateResult> {
  const sent = await buildRequest(s.request, keys);
  const target = resolveConnection(s.request, mesh);
  const before = new Map([...mesh.workloads.values()].filter((w) => w.app).map((w) => [w.spec.id, w.app!.seen.length]));
  if ("error" in target)
    return { id: s.id, outcome: "connection-failure", status: null, body: null, responseHeaders: {}, sent, upstream: null, error: target.error };
  if (sent.headers.host === undefined) sent.headers = { host: `127.0.0.1:${target.port}`, ...sent.headers };
  const routesBefore = routed ? await snapshotRoutes(mesh) : undefined;
  const started = performance.now();
  const answer = await send(target.port, s.request.method, sent);
  const elapsedMs = Math.round(performance.now() - started);
  const route = routesBefore ? await routeTaken(mesh, routesBefore) : undefined;
  let upstream: SimulateResult["upstream"] = null;
  for (const w of mesh.workloads.values()) {
    const n = before.get(w.spec.id);
    if (n === undefined || w.app!.seen.length <= n) continue;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(w.app!.seen[n].headers)) if (v !== undefined) headers[k] = v;
    upstream = { workload: w.spec.id, headers };
    break;
  }
  return {
    id: s.id,
    outcome: answer.outcome,
    status: answer.status,
    body: answer.body,
    responseHeaders: answer.responseHeaders,
    sent,
    upstream,
    via: target.via,
    ...(answer.error ? { error: answer.error } : {}),
    ...(route ? { route } : {}),
    elapsedMs,
  };
}
