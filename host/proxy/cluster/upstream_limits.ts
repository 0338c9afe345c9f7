import type { ScopedLogger } from "../../telemetry/logger.ts";
import type { Counters } from "../counters.ts";
import type { UpstreamControl } from "../router/route_decision.ts";
import type { UpstreamCluster } from "./cluster_manager.ts";
import { ConnectionPools, OVERFLOW_REPLY } from "./connection_pool.ts";
import { OutlierDetector, type OutlierEvent } from "./outlier_detection.ts";

/**
 * The DestinationRule limits of the upstream clusters as the data path
 * enforces them (docs/sidecar.md "Circuit breaking"): connection-pool
 * admission and outlier detection. Their state (open requests, ejections)
 * outlives configuration changes, so one instance serves the sidecar's life.
 */
export class UpstreamLimits {
  readonly pools = new ConnectionPools();
  readonly outliers: OutlierDetector;

  constructor(
    private readonly counters: Counters,
    private readonly log: Pick<ScopedLogger, "warn">,
    onOutlierEvent?: (event: OutlierEvent) => void,
  ) {
    this.outliers = new OutlierDetector(onOutlierEvent ? { onEvent: onOutlierEvent } : {});
  }

  /** Admission and outcome recording for one request to a cluster; undefined when its DestinationRule sets no limits. */
  control(u: UpstreamCluster): UpstreamControl | undefined {
    if (!u.connectionPool && !u.outlierDetection) return undefined;
    return {
      maxRequestsPerConnection: u.connectionPool?.maxRequestsPerConnection || undefined,
      admit: () => {
        const slot = this.pools.admit(u.cluster, u.connectionPool);
        if (slot === "overflow") {
          this.counters.bump("upstream_rq_pending_overflow");
          return OVERFLOW_REPLY;
        }
        return slot.then((release) => (outcome) => {
          release();
          if (outcome === "cancelled") return;
          if (this.outliers.record(u.cluster, u.endpoint, u.size, u.outlierDetection, outcome)) {
            this.counters.bump("outlier_detection.ejections_enforced_total");
            this.log.warn(`outlier detection: ${u.endpoint} of ${u.cluster} ejected after consecutive errors`);
          }
        });
      },
    };
  }

  close(): void {
    this.outliers.close();
  }
}
