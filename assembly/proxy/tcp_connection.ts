import { AttributeBag } from "../attributes/bag";
import { CheckOutcome } from "../attributes/report";
import { ConnectionTraffic } from "../attributes/tcp_report";
import { QuotaCharge } from "../quota";

/** Where a TCP connection is (upstream src/envoy/tcp/mixer/filter.h states). */
export const enum ConnectionState {
  /** Accepted; the check waits for the first downstream data. */
  Accepted,
  /** Reading paused, waiting for the hub's answer. */
  Checking,
  /** Allowed: data flows, periodic reports run. */
  Open,
  /** Closed (or denied): the close report was sent, nothing more happens. */
  Closed,
}

/** Per-connection state of the filter, from proxy_on_new_connection to delete. */
export class TcpConnection {
  /** False when the plugin had no tcpClientConfig at accept: the connection passes untouched. */
  served: bool = false;
  state: ConnectionState = ConnectionState.Accepted;
  /** Check-time attributes, built at accept; reports copy them. */
  attributes: AttributeBag = new AttributeBag(0);
  quotas: Array<QuotaCharge> = [];
  outcome: CheckOutcome = new CheckOutcome();
  traffic: ConnectionTraffic = new ConnectionTraffic();
  startNanos: i64 = 0;
  /** When the next `continue` report is due. */
  nextReportNanos: i64 = 0;
  /**
   * Size of the downstream buffer at the last callback while reading was
   * paused: a proxy hands the held bytes again with the next data (Envoy
   * keeps them in its read buffer), so only the growth is new.
   */
  heldBytes: i64 = 0;
  /** Token of the check in flight, -1 when none. */
  checkToken: i64 = -1;
  /** The filter closed the connection (denied, or FAIL_CLOSE). */
  closedByFilter: bool = false;

  constructor(
    public readonly id: u32,
    public readonly rootId: u32,
  ) {}
}
