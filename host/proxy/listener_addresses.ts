import { isIP } from "node:net";

/**
 * Where each listener of the agent binds (docs/sidecar.md, "Listeners"), as
 * upstream's sidecar: the inbound, tcp and status listeners on the pod's
 * address (`--bindAddress`; other pods and the kubelet reach them), the
 * outbound listener on loopback (only the pod's own app may send through it:
 * from anywhere else it would let a stranger call STRICT services as this
 * pod's identity), and the admin listener on loopback unless
 * `--adminBindAddress` says otherwise, with a warning (one POST
 * /quitquitquit stops the sidecar).
 */
export interface ListenerAddresses {
  /** inbound, tcp, status. */
  readonly pod: string;
  readonly outbound: string;
  readonly admin: string;
  /** What the operator should hear about (an admin port off loopback). */
  readonly warnings: readonly string[];
}

/** Loopback of the bind address's family: `::1` for an IPv6 pod, else 127.0.0.1. */
export function loopbackFor(bindAddress: string): string {
  return isIP(bindAddress) === 6 ? "::1" : "127.0.0.1";
}

export function isLoopback(address: string): boolean {
  return address === "localhost" || address === "::1" || (isIP(address) === 4 && address.startsWith("127."));
}

export function listenerAddresses(bindAddress: string, adminBindAddress?: string): ListenerAddresses {
  const loopback = loopbackFor(bindAddress);
  const admin = adminBindAddress || loopback;
  const warnings = isLoopback(admin)
    ? []
    : [`--adminBindAddress ${admin}: the admin port (POST /quitquitquit, /healthcheck/fail, /logging, /config_dump with the workload's configuration) is reachable from the network; upstream keeps it on localhost`];
  return Object.freeze({ pod: bindAddress, outbound: loopback, admin, warnings: Object.freeze(warnings) });
}
