import type { Server } from "node:net";
import type { Socket } from "node:net";
import { acceptedSocketOf } from "../listener_limits.ts";

/**
 * The connection stage of a listener, as Envoy's listener filters run on an
 * accepted socket before any byte is read: where the connection was going
 * before the kernel redirected it to the proxy (Envoy's `original_dst`
 * listener filter: `SO_ORIGINAL_DST` under iptables REDIRECT). TLS is the
 * other half of this stage (mtls_listener.ts).
 *
 * The source of original destinations is supplied by the program
 * (`SidecarOptions.originalDestination`, the capture's getsockopt); without
 * one, or when it answers undefined (the connection was not redirected),
 * nothing is recorded and the listener behaves as a plain listener.
 */

/** An address and port a connection was sent to. */
export interface Destination {
  readonly address: string;
  readonly port: number;
}

/** Asked once per accepted socket: its original destination, or undefined when it was not redirected. */
export type OriginalDestinationSource = (socket: Socket) => Destination | undefined;

export class ConnectionStage {
  private readonly destinations = new WeakMap<Socket, Destination>();

  constructor(private readonly source?: OriginalDestinationSource) {}

  /** Runs on every connection the listener accepts, before the HTTP server (or TLS) sees it. */
  watch(server: Server): void {
    if (!this.source) return;
    server.prependListener("connection", (socket: Socket) => this.accept(socket));
  }

  /** Records the original destination of one accepted socket. */
  accept(socket: Socket): void {
    const d = this.source?.(socket);
    if (d) this.destinations.set(socket, d);
  }

  /** The original destination of the connection a request came on (its TLS socket or the accepted one), if it was redirected. */
  originalDestination(socket: Socket): Destination | undefined {
    return this.destinations.get(socket) ?? this.destinations.get(acceptedSocketOf(socket));
  }
}
