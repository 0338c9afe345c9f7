import type { Resource } from "../../../../config/catalog.ts";
import type { Analyzer } from "../analyzer.ts";
import { ConflictingServiceEntryProtocol, ServiceEntryAddressesRequired } from "../messages.ts";

type ServiceEntry = Resource<"ServiceEntry">;

/**
 * Upstream's ServiceEntry checks. Addresses: a TCP (or unspecified
 * protocol) port without `addresses` (nor allocated ones in its `status`)
 * cannot be told apart from other such entries on the same port, unless the
 * mesh config turns on DNS capture with address auto-allocation. Protocols: entries visible in the same namespace
 * that define the same host and port with different protocols.
 */
/** Upstream: addresses the control plane allocated, in the entry's `status.addresses`, count. */
function allocated(body: Readonly<Record<string, unknown>> | undefined): boolean {
  const addresses = (body?.status as { addresses?: unknown } | undefined)?.addresses;
  return Array.isArray(addresses) && addresses.length > 0;
}

export const serviceEntryAddressesAnalyzer: Analyzer = {
  name: "serviceentry-addresses",
  upstream: "serviceentry.Analyzer",
  description: "ServiceEntries with a TCP port and no addresses",
  codes: [ServiceEntryAddressesRequired],
  needs: [],
  analyze(ctx) {
    if (ctx.model.config.dnsAutoAllocate) return;
    for (const se of ctx.catalog.byKind.ServiceEntry) {
      if (se.spec.addresses.length > 0 || allocated(ctx.model.bodyOf(se.origin))) continue;
      se.spec.ports.forEach((p, i) => {
        if (p.protocol !== "TCP") return;
        ctx.report(
          ServiceEntryAddressesRequired,
          se,
          `ServiceEntry addresses are required for this protocol (port ${p.number}, ${p.protocol}): without them every TCP entry on that port shares one listener`,
          `spec.ports[${i}].protocol`,
        );
      });
    }
  },
};

function scopes(se: ServiceEntry): string[] {
  const e = se.spec.exportTo;
  if (e.length === 0 || e.includes("*")) return ["*"];
  return [...new Set(e.map((ns) => (ns === "." ? se.namespace : ns)))];
}

export const serviceEntryProtocolsAnalyzer: Analyzer = {
  name: "serviceentry-conflicting-protocol",
  upstream: "serviceentry.ConflictingServiceEntryProtocolAnalyzer",
  description: "ServiceEntries visible in one namespace defining the same host and port with different protocols",
  codes: [ConflictingServiceEntryProtocol],
  needs: [],
  analyze(ctx) {
    const index = new Map<string, { scope: string; host: string; port: number; entries: Array<{ protocol: string; se: ServiceEntry }> }>();
    for (const se of ctx.catalog.byKind.ServiceEntry) {
      for (const scope of scopes(se)) {
        for (const host of se.spec.hosts) {
          for (const p of se.spec.ports) {
            const key = `${scope}|${host}|${p.number}`;
            const slot = index.get(key) ?? { scope, host, port: p.number, entries: [] };
            slot.entries.push({ protocol: p.protocol, se });
            index.set(key, slot);
          }
        }
      }
    }
    const reported = new Set<ServiceEntry>();
    for (const slot of index.values()) {
      const entries = slot.scope === "*" ? slot.entries : [...slot.entries, ...(index.get(`*|${slot.host}|${slot.port}`)?.entries ?? [])];
      const protocols = [...new Set(entries.map((e) => e.protocol.toUpperCase()))].sort();
      if (protocols.length < 2) continue;
      const names = [...new Set(entries.map((e) => `${e.se.namespace}/${e.se.name}`))].sort().join(", ");
      for (const { se } of entries) {
        if (reported.has(se)) continue;
        reported.add(se);
        ctx.report(
          ConflictingServiceEntryProtocol,
          se,
          `Multiple ServiceEntries (${names}) define the same host ${JSON.stringify(slot.host)} and port ${slot.port} with conflicting protocols (${protocols.join(", ")}).`,
          "spec.ports",
        );
      }
    }
  },
};
