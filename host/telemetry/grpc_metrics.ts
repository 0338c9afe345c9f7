import { Counter, type Registry } from "prom-client";

interface MethodCounters {
  started: Counter.Internal;
  received: Counter.Internal;
  sent: Counter.Internal;
  handled: Map<string, Counter.Internal>;
}

/**
 * The gRPC server counters of go-grpc-prometheus (names and labels as the
 * upstream daemons exported them), for unary methods:
 * grpc_server_started_total, grpc_server_msg_received_total,
 * grpc_server_msg_sent_total and grpc_server_handled_total{grpc_code}.
 */
export class GrpcServerMetrics {
  private readonly startedTotal: Counter<string>;
  private readonly receivedTotal: Counter<string>;
  private readonly sentTotal: Counter<string>;
  private readonly handledTotal: Counter<string>;
  private readonly methods = new Map<string, MethodCounters>();

  constructor(registry: Registry) {
    const labelNames = ["grpc_type", "grpc_service", "grpc_method"];
    this.startedTotal = new Counter({
      name: "grpc_server_started_total",
      help: "Total number of RPCs started on the server.",
      labelNames,
      registers: [registry],
    });
    this.receivedTotal = new Counter({
      name: "grpc_server_msg_received_total",
      help: "Total number of RPC stream messages received on the server.",
      labelNames,
      registers: [registry],
    });
    this.sentTotal = new Counter({
      name: "grpc_server_msg_sent_total",
      help: "Total number of gRPC stream messages sent by the server.",
      labelNames,
      registers: [registry],
    });
    this.handledTotal = new Counter({
      name: "grpc_server_handled_total",
      help: "Total number of RPCs completed on the server, regardless of success or failure.",
      labelNames: [...labelNames, "grpc_code"],
      registers: [registry],
    });
  }

  private counters(service: string, method: string): MethodCounters {
    const id = `${service}/${method}`;
    let c = this.methods.get(id);
    if (c === undefined) {
      const labels = { grpc_type: "unary", grpc_service: service, grpc_method: method };
      c = { started: this.startedTotal.labels(labels), received: this.receivedTotal.labels(labels), sent: this.sentTotal.labels(labels), handled: new Map() };
      this.methods.set(id, c);
    }
    return c;
  }

  /** Makes the method's series appear (at 0) before the first call. */
  declare(service: string, method: string): void {
    this.counters(service, method);
  }

  started(service: string, method: string): void {
    this.forMethod(service, method).started();
  }

  handled(service: string, method: string, codeName: string): void {
    this.forMethod(service, method).handled(codeName);
  }

  /** One method's counters, for a server that counts each call without looking the method up (its series appear at 0). */
  forMethod(service: string, method: string): MethodMetrics {
    const c = this.counters(service, method);
    const handledTotal = this.handledTotal;
    return {
      started() {
        c.started.inc();
        c.received.inc();
      },
      handled(codeName) {
        let h = c.handled.get(codeName);
        if (h === undefined) {
          h = handledTotal.labels({ grpc_type: "unary", grpc_service: service, grpc_method: method, grpc_code: codeName });
          c.handled.set(codeName, h);
        }
        h.inc();
        if (codeName === "OK") c.sent.inc();
      },
    };
  }
}

/** A unary method's go-grpc-prometheus counters: a call started (and its message received); a call ended with a status. */
export interface MethodMetrics {
  started(): void;
  handled(codeName: string): void;
}
