import type { Logger } from "../telemetry/logger.ts";
import type { GlobalDictionary } from "../wire/compressed.ts";
import { type AccessLogWriter, accessLogLine } from "./access_log.ts";
import { check, type CheckRequestMessage } from "./check.ts";
import type { RawUnaryHandler } from "./grpc_server.ts";
import type { HubConfig } from "./hub_config.ts";
import { checkStrings, decodeMessage, decodeReportBytes, encodeMessage } from "./hub_messages.ts";
import type { HubMetrics } from "./metrics.ts";
import type { QuotaStore } from "./quota_store.ts";
import type { RequestMetrics } from "./request_metrics.ts";

export interface HubMethodsDeps {
  /** The configuration in force. */
  config: () => HubConfig;
  /** The quota store in use. */
  quotas: () => QuotaStore;
  dictionary: GlobalDictionary;
  metrics: HubMetrics;
  requestMetrics: RequestMetrics;
  accessLogs: AccessLogWriter;
  /** Wall clock in ms (access-log times). */
  now: () => number;
  logger: Logger;
}

/** The handlers of `mesh.hub.v1.Hub`'s Check and Report, on raw message bytes. */
export function hubMethods(deps: HubMethodsDeps): { Check: RawUnaryHandler; Report: RawUnaryHandler } {
  const { config, quotas, dictionary, metrics, requestMetrics, accessLogs, now, logger } = deps;
  const apiLog = logger.scope("api");
  const adaptersLog = logger.scope("adapters");
  const attributesLog = logger.scope("attributes");
  /** Counts each dispatch, and per request the distinct handlers and the dispatches (spec 2 hub_dispatcher_*). */
  const fanOut = () => {
    const handlers = new Set<string>();
    let instances = 0;
    return {
      onDispatch: (handler: string, variety: "check" | "quota" | "report") => {
        adaptersLog.debug(`dispatched to ${handler}`, { variety });
        metrics.dispatched(handler, variety);
        handlers.add(handler);
        instances++;
      },
      done: () => metrics.request(handlers.size, instances),
    };
  };
  return {
    Check: (bytes) => {
      checkStrings("mesh.hub.v1.CheckRequest", bytes);
      const request = decodeMessage<CheckRequestMessage>("mesh.hub.v1.CheckRequest", bytes);
      if (attributesLog.enabled("debug")) {
        const a = request.attributes ?? {};
        const fields = Object.entries(a)
          .filter(([, v]) => v && typeof v === "object" && Object.keys(v).length > 0)
          .map(([k, v]) => `${k}=${Object.keys(v as object).length}`);
        attributesLog.debug("Check attributes", { globalWordCount: request.globalWordCount ?? 0, fields: fields.join(" ") || "none" });
      }
      apiLog.debug("Check", { bytes: bytes.length, quotas: Object.keys(request.quotas ?? {}).length });
      const counting = fanOut();
      const stop = metrics.dispatchDuration.startTimer({ variety: "check" });
      const finish = () => {
        stop();
        counting.done();
      };
      let answer;
      try {
        answer = check({ config: config(), quotas: quotas(), dictionary, onDispatch: counting.onDispatch }, request);
      } catch (e) {
        finish();
        throw e;
      }
      if (!(answer instanceof Promise)) {
        finish();
        return encodeMessage("mesh.hub.v1.CheckResponse", answer);
      }
      return answer.then(
        (response) => {
          finish();
          return encodeMessage("mesh.hub.v1.CheckResponse", response);
        },
        (e: unknown) => {
          finish();
          throw e;
        },
      );
    },
    Report: async (bytes) => {
      const logs = config().accessLogs;
      // Without an access log, the standard metrics are all that read a report: only their attributes are decoded.
      const { entries, refused } = decodeReportBytes(bytes, dictionary, logs.length > 0 ? undefined : requestMetrics.attributesRead());
      apiLog.debug("Report", { bytes: bytes.length, entries: entries.length });
      if (attributesLog.enabled("debug")) attributesLog.debug("Report attributes", { entries: entries.length, refused: refused.length });
      if (refused.length > 0) {
        metrics.reportEntriesRefused.inc(refused.length);
        apiLog.warn("report entries refused", { refused: refused.length, taken: entries.length, first: refused[0].reason });
      }
      requestMetrics.record(entries);
      if (entries.length > 0 && logs.length > 0) {
        const time = new Date(now());
        const text = entries.map((e) => accessLogLine(time, e)).join("");
        await Promise.all(
          logs.map(async (l) => {
            const stop = metrics.dispatchDuration.startTimer({ variety: "report" });
            await accessLogs.append(l.path, text);
            stop();
          }),
        );
        for (const l of logs) {
          adaptersLog.debug(`dispatched to ${l.id}`, { variety: "report", entries: entries.length });
          metrics.dispatched(l.id, "report", entries.length);
        }
        metrics.request(logs.length, logs.length * entries.length);
      } else {
        metrics.request(0, 0);
      }
      return Buffer.alloc(0);
    },
  };
}
