import type { Logger } from "../telemetry/logger.ts";
import { readPlainCheck } from "../wire/check_request_reader.ts";
import type { AttributeMap, GlobalDictionary } from "../wire/compressed.ts";
import { type AccessLogWriter, accessLogLine } from "./access_log.ts";
import { check, type CheckRequestMessage } from "./check.ts";
import type { RawUnaryHandler } from "./grpc_server.ts";
import type { HubAccessLog } from "../config/resources/hub_rules.ts";
import type { HubConfig } from "./hub_config.ts";
import { decodeCheckGeneral, decodeReportBytes, decodeReportSlots, encodeMessage } from "./hub_messages.ts";
import type { HubMetrics } from "./metrics.ts";
import type { QuotaStore } from "./quota_store.ts";
import type { RequestMetrics } from "./request_metrics.ts";

/** A Report's answer: an empty ReportResponse (never written to: grpc-js copies it into the frame). */
const EMPTY = Buffer.alloc(0);

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
  // The histogram's series of Checks, looked up once rather than per call.
  const checkDuration = metrics.dispatchDuration.labels({ variety: "check" });
  /** A Report's entries to every access log, counted as dispatches (variety report). */
  const writeAccessLogs = async (logs: readonly HubAccessLog[], entries: AttributeMap[]): Promise<void> => {
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
  };
  return {
    Check: (bytes) => {
      // A plainly well-formed request (what clients send) is read in one pass; any other (and any while the
      // attributes are logged, by member) takes the general path, which names what is wrong.
      const debugAttributes = attributesLog.enabled("debug");
      const plain = debugAttributes ? undefined : readPlainCheck(bytes, dictionary);
      const request = plain ?? decodeCheckGeneral(bytes);
      if (debugAttributes) {
        const a = (request as CheckRequestMessage).attributes ?? {};
        const fields = Object.entries(a)
          .filter(([, v]) => v && typeof v === "object" && Object.keys(v).length > 0)
          .map(([k, v]) => `${k}=${Object.keys(v as object).length}`);
        attributesLog.debug("Check attributes", { globalWordCount: request.globalWordCount ?? 0, fields: fields.join(" ") || "none" });
      }
      if (apiLog.enabled("debug")) apiLog.debug("Check", { bytes: bytes.length, quotas: Object.keys(request.quotas ?? {}).length });
      const counting = fanOut();
      const began = performance.now();
      const finish = () => {
        checkDuration.observe((performance.now() - began) / 1000);
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
    Report: (bytes) => {
      const logs = config().accessLogs;
      // Without an access log, the standard metrics are all that read a report: only their attributes are decoded,
      // as where their bytes are when every entry is plainly well-formed.
      const slots = logs.length > 0 ? undefined : decodeReportSlots(bytes, dictionary, requestMetrics.attributeSlots());
      if (slots !== undefined) {
        if (apiLog.enabled("debug")) apiLog.debug("Report", { bytes: bytes.length, entries: slots.count });
        if (attributesLog.enabled("debug")) attributesLog.debug("Report attributes", { entries: slots.count, refused: 0 });
        requestMetrics.recordSlots(slots);
        metrics.request(0, 0);
        return EMPTY;
      }
      const { entries, refused } = decodeReportBytes(bytes, dictionary, logs.length > 0 ? undefined : requestMetrics.attributesRead());
      if (apiLog.enabled("debug")) apiLog.debug("Report", { bytes: bytes.length, entries: entries.length });
      if (attributesLog.enabled("debug")) attributesLog.debug("Report attributes", { entries: entries.length, refused: refused.length });
      if (refused.length > 0) {
        metrics.reportEntriesRefused.inc(refused.length);
        apiLog.warn("report entries refused", { refused: refused.length, taken: entries.length, first: refused[0].reason });
      }
      requestMetrics.record(entries);
      if (entries.length > 0 && logs.length > 0) return writeAccessLogs(logs, entries).then(() => EMPTY);
      metrics.request(0, 0);
      return EMPTY;
    },
  };
}
