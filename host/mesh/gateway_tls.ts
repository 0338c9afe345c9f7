import type { Resource } from "../config/catalog.ts";
import type { Labels } from "./labels.ts";
import { hostSpecificity } from "./hosts.ts";
import { gatewayServersOnPort, serverHost } from "./routing.ts";

/**
 * HTTPS Gateway servers (`tls.mode: SIMPLE`) a gateway workload terminates on
 * one of its container ports, with the certificate and key their
 * `credentialName` names: a Secret of that name, type `kubernetes.io/tls`,
 * in the gateway workload's namespace (where upstream's secure-gateway task
 * creates it with `kubectl create secret tls`).
 */

export interface GatewayTlsServer {
  /** `ns/name` of the Gateway. */
  readonly gateway: string;
  /** The server's hosts without their `ns/` prefix. */
  readonly hosts: readonly string[];
  readonly credentialName: string;
  readonly cert?: string;
  readonly key?: string;
  /** Why there is no certificate (the Secret is missing or not a TLS secret). */
  readonly problem?: string;
}

export function gatewayTlsServers(
  gateways: readonly Resource<"Gateway">[],
  secrets: readonly Resource<"Secret">[],
  workload: { readonly namespace: string; readonly labels: Labels },
  containerPort: number,
  toContainerPort: (servicePort: number) => number | undefined,
): GatewayTlsServer[] {
  return gatewayServersOnPort(gateways, workload.labels, containerPort, toContainerPort)
    .filter(({ server }) => server.tls?.mode === "SIMPLE")
    .map(({ gateway, server }) => {
      const credentialName = server.tls!.credentialName ?? "";
      const base = { gateway: `${gateway.namespace}/${gateway.name}`, hosts: server.hosts.map((h) => serverHost(h, gateway.namespace).host), credentialName };
      const secret = secrets.find((s) => s.namespace === workload.namespace && s.name === credentialName);
      if (!credentialName) return { ...base, problem: "the server has no tls.credentialName" };
      if (!secret) return { ...base, problem: `no Secret ${workload.namespace}/${credentialName}` };
      const cert = secret.spec.data["tls.crt"];
      const key = secret.spec.data["tls.key"];
      if (!cert || !key) return { ...base, problem: `Secret ${workload.namespace}/${credentialName} has no tls.crt and tls.key` };
      return { ...base, cert, key };
    });
}

/** The server whose hosts cover the SNI name most specifically (none covers it: undefined, as Envoy finds no filter chain); without SNI the first one with a certificate. */
export function serverForSni(servers: readonly GatewayTlsServer[], sni: string | undefined): GatewayTlsServer | undefined {
  const usable = servers.filter((s) => s.cert !== undefined);
  let best: GatewayTlsServer | undefined;
  let score = -1;
  if (sni) {
    for (const s of usable)
      for (const h of s.hosts) {
        const n = hostSpecificity(h, sni);
        if (n > score) [best, score] = [s, n];
      }
  }
  return sni ? best : usable[0];
}
