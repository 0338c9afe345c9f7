// A straightforward TypeScript implementation of the filter's per-request
// matching, for the benchmark to compare against: the same attributes, API
// spec patterns, key locations and quota rules, done the obvious way (every
// pattern tried in turn as a RegExp).

export interface BaselinePattern {
  method: string;
  uriTemplate?: string;
  regex?: string;
  attributes: Record<string, string>;
}

export interface BaselineConfig {
  specAttributes: Record<string, string>;
  patterns: BaselinePattern[];
  apiKeys: Array<{ query?: string; header?: string }>;
  quotaRules: Array<{ match: Array<Record<string, { exact?: string; prefix?: string }>>; quotas: Array<{ quota: string; charge: number }> }>;
}

interface Compiled {
  config: BaselineConfig;
  matchers: Array<{ method: string; re: RegExp; attributes: Record<string, string> }>;
}

function templateToRegExp(t: string): RegExp {
  const [path, verb] = t.split(":");
  const parts = path
    .slice(1)
    .split("/")
    .map((seg) => {
      if (seg === "**" || /^\{[^}=]+=\*\*\}$/.test(seg)) return ".*";
      if (seg === "*" || /^\{[^}=]+(=\*)?\}$/.test(seg)) return "[^/]+";
      return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    });
  return new RegExp(`^/${parts.join("/")}${verb ? `:${verb}` : ""}$`);
}

export function compileBaseline(config: BaselineConfig): Compiled {
  return {
    config,
    matchers: config.patterns.map((p) => ({
      method: p.method,
      re: p.uriTemplate ? templateToRegExp(p.uriTemplate) : new RegExp(`^(?:${p.regex})$`),
      attributes: p.attributes,
    })),
  };
}

export interface BaselineRequest {
  headers: ReadonlyArray<readonly [string, string]>;
  sourceAddress: string;
  timeMs: number;
}

export function evaluateBaseline(c: Compiled, req: BaselineRequest): { attributes: Map<string, unknown>; quotas: Array<{ quota: string; charge: number }> } {
  const headers = new Map(req.headers);
  const a = new Map<string, unknown>();
  a.set("request.headers", headers);
  const path = headers.get(":path") ?? "";
  const method = headers.get(":method") ?? "";
  const q = path.indexOf("?");
  const urlPath = q < 0 ? path : path.slice(0, q);
  const query = new Map<string, string>();
  if (q >= 0) {
    for (const part of path.slice(q + 1).split("&")) {
      const eq = part.indexOf("=");
      const k = eq < 0 ? part : part.slice(0, eq);
      if (!query.has(k)) query.set(k, eq < 0 ? "" : part.slice(eq + 1));
    }
    a.set("request.query_params", query);
  }
  a.set("request.host", headers.get(":authority") ?? "");
  a.set("request.method", method);
  a.set("request.path", path);
  a.set("request.url_path", urlPath);
  a.set("request.scheme", headers.get(":scheme") ?? "http");
  const ua = headers.get("user-agent");
  if (ua !== undefined) a.set("request.useragent", ua);
  a.set("request.time", new Date(req.timeMs));
  const [ip, port] = req.sourceAddress.split(":");
  a.set("source.ip", Uint8Array.from(ip.split(".").map(Number)));
  a.set("source.port", Number(port));
  a.set("connection.mtls", false);
  a.set("context.protocol", "http");

  let matched = false;
  for (const m of c.matchers) {
    if (m.method !== "*" && m.method !== method) continue;
    if (!m.re.test(m.re.source.includes("\\?") ? path : urlPath)) continue;
    if (!matched) for (const [k, v] of Object.entries(c.config.specAttributes)) a.set(k, v);
    matched = true;
    for (const [k, v] of Object.entries(m.attributes)) a.set(k, v);
    break;
  }
  const keys = c.config.apiKeys.length > 0 ? c.config.apiKeys : [{ query: "key" }, { query: "api_key" }, { header: "x-api-key" }];
  for (const k of keys) {
    const v = k.query !== undefined ? query.get(k.query) : headers.get(k.header as string);
    if (v !== undefined) {
      a.set("request.api_key", v);
      break;
    }
  }
  const quotas: Array<{ quota: string; charge: number }> = [];
  for (const rule of c.config.quotaRules) {
    const holds =
      rule.match.length === 0 ||
      rule.match.some((clauses) =>
        Object.entries(clauses).every(([name, sm]) => {
          const v = a.get(name);
          if (typeof v !== "string") return false;
          return sm.exact !== undefined ? v === sm.exact : v.startsWith(sm.prefix as string);
        }),
      );
    if (holds) quotas.push(...rule.quotas);
  }
  return { attributes: a, quotas };
}
