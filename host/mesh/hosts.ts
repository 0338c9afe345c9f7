/**
 * Host names as upstream reads them. A Service `httpbin` in namespace `foo`
 * of a mesh whose DNS domain is `cluster.local` answers, from a client in
 * `foo`, on `httpbin`, `httpbin.foo`, `httpbin.foo.svc`,
 * `httpbin.foo.svc.cluster.local` and its addresses, each with or without
 * `:port`; from another namespace on every form but the bare `httpbin` (the
 * client's DNS search path would resolve that in its own namespace). Mesh
 * resources (VirtualService, DestinationRule) resolve a short host in their
 * own namespace.
 *
 * The DNS domain is a value of the mesh (disco-discovery's `--domain`,
 * upstream's `--domain` of its control plane), passed to every function that
 * builds or reads a service host. It is not the SPIFFE trust domain
 * (`--trust-domain`), though both default to `cluster.local`.
 */

/** The DNS domain of a mesh when none is configured (upstream's default). */
export const DEFAULT_DOMAIN = "cluster.local";

/** A DNS domain as `--domain` takes it: dot-separated DNS labels, no leading or trailing dot. */
export function isDnsDomain(domain: string): boolean {
  return domain.length <= 253 && domain.split(".").every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l));
}

/**
 * A proxy's DNS domain as upstream's agent takes it (`--domain`, default
 * `<namespace>.svc.<domain>`), split into the namespace and the mesh's
 * domain; undefined when it is not of that form.
 */
export function splitProxyDnsDomain(dnsDomain: string): { namespace: string; domain: string } | undefined {
  const m = /^([a-z0-9]([a-z0-9-]*[a-z0-9])?)\.svc\.(.+)$/.exec(dnsDomain.toLowerCase());
  return m && isDnsDomain(m[3]) ? { namespace: m[1], domain: m[3] } : undefined;
}

/** `httpbin`, `foo`, `cluster.local` → `httpbin.foo.svc.cluster.local`. */
export function serviceFqdn(name: string, namespace: string, domain: string): string {
  return `${name}.${namespace}.svc.${domain}`;
}

/** `reviews.shop.svc.cluster.local` (or `reviews.shop.svc`, or under any domain) → `shop`; undefined for a host that is not `<service>.<namespace>.svc[.…]`. */
export function serviceNamespace(host: string): string | undefined {
  const m = /^[^.]+\.([^.]+)\.svc(\.|$)/.exec(host.toLowerCase());
  return m ? m[1] : undefined;
}

/**
 * The host a mesh resource names, resolved in the resource's namespace: a
 * name without dots is a service of that namespace (`reviews` in `shop` →
 * `reviews.shop.svc.<domain>`); wildcards and dotted names stay.
 */
export function resolveResourceHost(host: string, namespace: string, domain: string): string {
  if (host === "*" || host.includes(".")) return host.toLowerCase();
  return serviceFqdn(host.toLowerCase(), namespace, domain);
}

/** `host[:port]` split; an IPv6 literal keeps its brackets. The port is undefined when absent or not a number. */
export function splitAuthority(authority: string): { host: string; port: number | undefined } {
  const a = authority.trim().toLowerCase();
  if (a.startsWith("[")) {
    const end = a.indexOf("]");
    const rest = a.slice(end + 1);
    return { host: a.slice(0, end + 1), port: /^:\d+$/.test(rest) ? Number(rest.slice(1)) : undefined };
  }
  const colon = a.lastIndexOf(":");
  if (colon >= 0 && /^\d+$/.test(a.slice(colon + 1))) return { host: a.slice(0, colon), port: Number(a.slice(colon + 1)) };
  return { host: colon >= 0 && colon === a.length - 1 ? a.slice(0, colon) : a, port: undefined };
}

/**
 * The names a service answers on for a client namespace (without ports):
 * FQDN, `name.ns.svc`, `name.ns`, the bare name for same-namespace clients,
 * then the service's addresses. Only a service host under the mesh's domain
 * has the short forms.
 */
export function serviceDomains(fqdn: string, clientNamespace: string | undefined, domain: string, addresses: readonly string[] = []): string[] {
  const suffix = `.svc.${domain}`;
  const labels = fqdn.endsWith(suffix) ? fqdn.slice(0, -suffix.length).split(".") : [];
  if (labels.length !== 2 || labels.some((l) => l === "")) return [fqdn, ...addresses];
  const [name, ns] = labels;
  const out = [fqdn, `${name}.${ns}.svc`, `${name}.${ns}`];
  if (clientNamespace === ns) out.push(name);
  return [...out, ...addresses];
}

/**
 * The FQDN a request host stands for, written in any of upstream's forms,
 * seen from a client namespace of a mesh with DNS domain `domain`: `httpbin`
 * → `httpbin.<client ns>.svc.<domain>`, `httpbin.foo` and `httpbin.foo.svc`
 * → `httpbin.foo.svc.<domain>`. Names that are not cluster services
 * (external hosts) are returned as given, lower case. Addresses are resolved
 * by the registry (it knows them).
 */
export function canonicalHost(host: string, clientNamespace: string | undefined, domain: string, isNamespace: (ns: string) => boolean = () => true): string {
  const h = host.toLowerCase().replace(/\.$/, "");
  const labels = h.split(".");
  if (labels.length === 1 && clientNamespace && /^[a-z0-9-]+$/.test(h)) return serviceFqdn(h, clientNamespace, domain);
  if (labels.length === 2 && isNamespace(labels[1])) return serviceFqdn(labels[0], labels[1], domain);
  if (labels.length === 3 && labels[2] === "svc") return serviceFqdn(labels[0], labels[1], domain);
  return h;
}

/** Whether a host pattern (`*`, `*.suffix` or a name; case-insensitive) covers a host. */
export function hostMatches(pattern: string, host: string): boolean {
  return hostSpecificity(pattern, host) >= 0;
}

/** How specifically a host pattern covers a host: -1 no match; exact beats any wildcard, a longer wildcard beats a shorter one. */
export function hostSpecificity(pattern: string, host: string): number {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase();
  if (p === h) return Number.MAX_SAFE_INTEGER;
  if (p === "*") return 0;
  if (p.startsWith("*.") && h.endsWith(p.slice(1))) return p.length;
  return -1;
}

/**
 * Whether two host patterns can match a common host (`*.foo.com` and
 * `bar.foo.com`; `*` and anything) — how upstream finds the VirtualServices
 * of a Gateway server and conflicting hosts.
 */
export function hostsIntersect(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === "*" || y === "*" || x === y) return true;
  if (x.startsWith("*.") && y.startsWith("*.")) return x.endsWith(y.slice(1)) || y.endsWith(x.slice(1));
  if (x.startsWith("*.")) return y.endsWith(x.slice(1));
  if (y.startsWith("*.")) return x.endsWith(y.slice(1));
  return false;
}
