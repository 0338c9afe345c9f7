// The filter embedded in a Node server: the module (build/filter.wasm) run by
// the sidecar's FilterHost, its hub calls carried by the HubTransport, the
// request's facts given by the application instead of a proxy's listener.
// The module decides (check, quota, cache, report batching, fail policy);
// this host carries calls, keeps time, and turns decisions into answers.

import type { Registry } from "prom-client";
import { HubTransport } from "../hub/transport.ts";
import { FilterHost, type RequestDecision } from "../proxy/filters/filter_host.ts";
import type { HeaderList } from "../wasm/abi_types.ts";
import { FilterModule, LOG_LEVELS, RELEASE_WASM } from "../wasm/filter_module.ts";
import { hubClusters, hubConnectionTls, loadFilterConfig } from "./options.ts";
import { CheckProperties, headerPairs, requestHeaderList } from "./request_facts.ts";
import { registerStats } from "./stats.ts";
import type {
  CheckRequest,
  Decision,
  Filter,
  FilterMiddleware,
  FilterOptions,
  FilterStats,
  HeaderValue,
  LogFunction,
  LogLevel,
  MiddlewareOptions,
  ReportOutcome,
} from "./types.ts";
import { connectMiddleware } from "./middleware.ts";

/** At most one warning a minute about failed hub attempts; the others at debug. */
const ATTEMPT_WARNING_INTERVAL_MS = 60_000;

const defaultLog: LogFunction = (level, message) => {
  if (level === "warn" || level === "error") process.stderr.write(`mesh-policy-filter ${level}: ${message}\n`);
};

const FAILED_REPLY = { status: 503, body: "filter failed" };

/** One decision of the filter, reported once. */
class FilterDecision implements Decision {
  private reported = false;
  private addedHeaders: Record<string, string> | undefined;

  constructor(
    private readonly owner: EmbeddedFilter,
    /** The module's stream; 0 when there is none to report (the module failed). */
    readonly id: number,
    readonly allowed: boolean,
    readonly status: number,
    readonly body: string,
    private readonly given: HeaderList,
    private readonly result: HeaderList,
    private readonly props: CheckProperties,
    private readonly started: bigint,
  ) {}

  get headers(): Record<string, string> {
    return (this.addedHeaders ??= this.allowed ? addedOrChanged(this.given, this.result) : replyHeaders(this.result));
  }

  report(outcome: ReportOutcome = {}): void {
    if (this.reported) return;
    this.reported = true;
    const durationNs = outcome.durationMs !== undefined ? BigInt(Math.round(outcome.durationMs * 1e6)) : process.hrtime.bigint() - this.started;
    this.props.outcome = {
      code: outcome.status ?? this.status,
      requestBytes: outcome.requestBytes ?? 0,
      responseBytes: outcome.responseBytes ?? 0,
      durationNs,
    };
    this.owner.finish(this, outcome.headers);
  }
}

/** The request headers the module added or changed (the forwarded attributes), by name. */
function addedOrChanged(given: HeaderList, result: HeaderList): Record<string, string> {
  const out: Record<string, string> = {};
  if (result === given) return out;
  const before = new Map<string, string>();
  for (const [k, v] of given) before.set(k, v);
  for (const [k, v] of result) if (!k.startsWith(":") && before.get(k) !== v) out[k] = v;
  return out;
}

/** A local reply's headers, with the sidecar's content type when the module set none. */
function replyHeaders(pairs: HeaderList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of pairs) out[k.toLowerCase()] = v;
  out["content-type"] ??= "text/plain";
  return out;
}

export class EmbeddedFilter implements Filter {
  private readonly open = new Map<number, FilterDecision>();
  private readonly counters = new Map<string, number>([
    ["hub_transport.calls", 0],
    ["hub_transport.failed_attempts", 0],
    ["hub_transport.retries", 0],
    ["hub_transport.failed_calls", 0],
  ]);
  private closing: Promise<void> | undefined;
  private unregister: () => void = () => {};

  private constructor(
    private readonly host: FilterHost,
    private readonly transport: HubTransport,
    private readonly service: string | undefined,
  ) {}

  /** Decodes the options, starts the module with the configuration and prepares the hub connection (made on the first call). */
  static create(options: FilterOptions): EmbeddedFilter {
    if (typeof options !== "object" || options === null) throw new TypeError("createFilter: expected options { config, hub, … }");
    const log = options.log ?? defaultLog;
    const wasm = options.wasm ?? RELEASE_WASM;
    const loaded = loadFilterConfig(options.config, FilterModule.load(wasm), options.service);
    const clusters = hubClusters(options.hub, loaded.bundle);
    const credentials = hubConnectionTls(options.hub);
    let filter: EmbeddedFilter | undefined;
    let warnedAt = -Infinity;
    const transport = new HubTransport({
      clusters,
      credentials: () => credentials,
      onAttemptFailed: (a) => {
        filter?.bump("hub_transport.failed_attempts");
        if (a.retryInMs !== undefined) filter?.bump("hub_transport.retries");
        const now = Date.now();
        const level: LogLevel = now - warnedAt >= ATTEMPT_WARNING_INTERVAL_MS ? "warn" : "debug";
        if (level === "warn") warnedAt = now;
        log(
          level,
          `hub ${a.cluster} ${a.method} attempt ${a.attempt} failed: ${a.status.message}${a.retryInMs !== undefined ? `; retrying in ${a.retryInMs} ms` : ""}`,
        );
      },
    });
    const failClose = loaded.bundle.clientConfig?.transport?.networkFailPolicy?.policy === "FAIL_CLOSE";
    const host = new FilterHost({
      wasm,
      hub: {
        call: async (call) => {
          filter?.bump("hub_transport.calls");
          const result = await transport.call(call);
          if (!result.ok) filter?.bump("hub_transport.failed_calls");
          return result;
        },
      },
      log: (level, message) => log(toLogLevel(level), message),
      failOpenOnTrap: () => !failClose,
      shutdownFlushWaitMs: options.closeTimeoutMs,
    });
    for (const warning of loaded.bundle.warnings) log("warn", warning);
    if (!host.configure(loaded.plugin)) {
      transport.close();
      throw new Error("the filter module refused the configuration (see the messages logged before)");
    }
    filter = new EmbeddedFilter(host, transport, loaded.service);
    if (options.registry) filter.unregister = registerStats(options.registry as Registry, options.metricsPrefix ?? "", () => filter!.statValues());
    return filter;
  }

  check(request: CheckRequest): Promise<Decision> {
    try {
      return Promise.resolve(this.decide(request));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The decision, at once when the module made it without the hub (the middlewares go on in the same turn). */
  decide(request: CheckRequest): FilterDecision | Promise<FilterDecision> {
    if (this.closing) throw new Error("the filter is closed");
    const started = process.hrtime.bigint();
    const headers = requestHeaderList(request);
    const props = new CheckProperties(request, this.service);
    const decided = this.host.onRequestHeaders(headers, props, true);
    if (decided instanceof Promise) return decided.then((d) => this.decisionOf(d, headers, props, started));
    return this.decisionOf(decided, headers, props, started);
  }

  middleware(options: MiddlewareOptions = {}): FilterMiddleware {
    return connectMiddleware(this, options);
  }

  stats(): FilterStats {
    const out: FilterStats = {};
    for (const [name, { value }] of this.statValues()) out[name] = value;
    return out;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  /** Called by a decision's report(): the module reports the stream. */
  finish(decision: FilterDecision, responseHeaders: Readonly<Record<string, HeaderValue>> | undefined): void {
    if (decision.id === 0) return;
    this.open.delete(decision.id);
    // The module reads them for the report (response.headers) and may apply a route directive's operations, which come too late here.
    if (responseHeaders) this.host.onResponseHeaders(decision.id, headerPairs(responseHeaders));
    this.host.finish(decision.id);
  }

  private async shutDown(): Promise<void> {
    for (const decision of [...this.open.values()]) decision.report();
    try {
      await this.host.close();
    } finally {
      this.transport.close();
      this.unregister();
    }
  }

  private decisionOf(decided: RequestDecision, given: HeaderList, props: CheckProperties, started: bigint): FilterDecision {
    let decision: FilterDecision;
    if (decided.kind === "continue") decision = new FilterDecision(this, decided.id, true, 200, "", given, decided.headers, props, started);
    else if (decided.kind === "reply")
      decision = new FilterDecision(this, decided.id, false, decided.reply.status, decided.reply.body, given, decided.reply.headers, props, started);
    else if (decided.failOpen) decision = new FilterDecision(this, 0, true, 200, "", given, given, props, started);
    else decision = new FilterDecision(this, 0, false, FAILED_REPLY.status, FAILED_REPLY.body, given, [], props, started);
    if (decision.id !== 0) this.open.set(decision.id, decision);
    return decision;
  }

  private bump(name: string): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + 1);
  }

  /** Every counter with its kind: the module's, then the host's. */
  private statValues(): Map<string, { value: number; gauge: boolean }> {
    const out = new Map<string, { value: number; gauge: boolean }>();
    const gauges = this.host.gauges();
    for (const [name, value] of this.host.metrics()) out.set(name, { value: Number(value), gauge: gauges.has(name) });
    for (const [name, value] of this.counters) out.set(name, { value, gauge: false });
    out.set("filter.restarts", { value: this.host.restarts, gauge: false });
    out.set("filter.open_decisions", { value: this.open.size, gauge: true });
    return out;
  }
}

function toLogLevel(level: (typeof LOG_LEVELS)[number]): LogLevel {
  if (level === "critical" || level === "error") return "error";
  if (level === "trace") return "debug";
  return level;
}
