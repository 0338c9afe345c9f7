import type { AnalysisContext } from "../analyzer.ts";
import type { MessageType } from "../messages.ts";

/** A Gateway server as the gateway analyzers read it. */
export interface AnalyzedServer {
  readonly port: { readonly number: number; readonly name?: string; readonly protocol?: string };
  readonly hosts: readonly string[];
  readonly bind?: string;
  readonly tls?: { readonly credentialName?: string; readonly serverCertificate?: string; readonly privateKey?: string };
}

/** A Gateway, decoded or (as upstream's analyzers still see it) read from a document validation refused. */
export interface AnalyzedGateway {
  readonly namespace: string;
  readonly name: string;
  readonly selector: Readonly<Record<string, string>>;
  readonly servers: readonly AnalyzedServer[];
  report(type: MessageType, text: string, fieldPath?: string): void;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** What can be read of a refused Gateway's servers: those with a port number; absent parts left out. */
function readServers(spec: Record<string, unknown>): AnalyzedServer[] {
  const servers = Array.isArray(spec.servers) ? spec.servers : [];
  const out: AnalyzedServer[] = [];
  for (const s of servers) {
    if (!s || typeof s !== "object") continue;
    const server = s as Record<string, unknown>;
    const port = (server.port ?? {}) as Record<string, unknown>;
    if (typeof port.number !== "number") continue;
    const tls = server.tls && typeof server.tls === "object" ? (server.tls as Record<string, unknown>) : undefined;
    out.push({
      port: { number: port.number, name: str(port.name), protocol: str(port.protocol)?.toUpperCase() },
      hosts: Array.isArray(server.hosts) ? server.hosts.filter((h): h is string => typeof h === "string") : [],
      bind: str(server.bind),
      tls: tls && { credentialName: str(tls.credentialName), serverCertificate: str(tls.serverCertificate), privateKey: str(tls.privateKey) },
    });
  }
  return out;
}

/** Every Gateway of the input: the decoded ones, then those validation refused, read from their documents. */
export function gatewaysOf(ctx: AnalysisContext): AnalyzedGateway[] {
  const decoded = ctx.catalog.byKind.Gateway.map(
    (g): AnalyzedGateway => ({
      namespace: g.namespace,
      name: g.name,
      selector: g.spec.selector,
      servers: g.spec.servers,
      report: (type, text, at) => ctx.report(type, g, text, at),
    }),
  );
  const refused = ctx.model.refused
    .filter((d) => d.kind === "Gateway")
    .map((d): AnalyzedGateway => {
      const spec = (d.body.spec && typeof d.body.spec === "object" ? d.body.spec : {}) as Record<string, unknown>;
      const rawSelector = spec.selector && typeof spec.selector === "object" ? (spec.selector as Record<string, unknown>) : {};
      const selector = Object.fromEntries(Object.entries(rawSelector).filter(([, v]) => typeof v === "string")) as Record<string, string>;
      return { namespace: d.namespace, name: d.name, selector, servers: readServers(spec), report: (type, text, at) => ctx.reportRefused(type, d, text, at) };
    });
  return [...decoded, ...refused];
}

/** The Gateway a VirtualService's `gateways` entry names (`name` in the VirtualService's namespace, or `namespace/name`). */
export function findGateway(gateways: readonly AnalyzedGateway[], ref: string, vsNamespace: string): AnalyzedGateway | undefined {
  const [ns, name] = ref.includes("/") ? ref.split("/", 2) : [vsNamespace, ref];
  return gateways.find((g) => g.namespace === ns && g.name === name);
}
