import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "commander";

/**
 * How meshctl reaches a running sidecar: its admin listener (`disco-agent
 * proxy --proxyAdminPort`), and the shape of the `/config_dump` it serves
 * (host/proxy/sidecar.ts). There is no orchestrator to port-forward through,
 * so commands are told the admin address with `--admin` (a URL, `host:port`,
 * or a bare port on 127.0.0.1) or `--proxyAdminPort`.
 */

/** Each admin request gives up after this long. */
export const ADMIN_TIMEOUT_MS = 5000;
export const LOOPBACK = "127.0.0.1";

/** `15000` → `http://127.0.0.1:15000`; `host:15000` → `http://host:15000`; a URL is kept (without a trailing slash). */
export function parseAdminTarget(value: string): string {
  const text = value.trim();
  if (/^\d+$/.test(text)) return `http://${LOOPBACK}:${adminPort(text)}`;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new InvalidArgumentError("expected an admin URL (http://127.0.0.1:15000), host:port, or a port number");
  }
  if (url.protocol !== "http:" || url.hostname === "" || url.port === "") {
    throw new InvalidArgumentError("expected an admin URL with a port (http://127.0.0.1:15000), host:port, or a port number");
  }
  return `http://${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

function adminPort(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError("expected a port from 1 to 65535");
  return n;
}

/** commander parser for `--proxyAdminPort <port>`: the admin URL on loopback. */
export function parseAdminPort(value: string): string {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError("expected a port from 1 to 65535");
  return `http://${LOOPBACK}:${adminPort(value.trim())}`;
}

export class AdminError extends Error {
  constructor(
    readonly target: string,
    message: string,
  ) {
    super(`sidecar admin ${target}: ${message}`);
    this.name = "AdminError";
  }
}

/** One admin request; a network failure or timeout is an AdminError. */
export async function adminRequest(base: string, method: "GET" | "POST", path: string): Promise<{ status: number; body: string }> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { method, signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = (e as Error).name === "TimeoutError" ? `no answer within ${ADMIN_TIMEOUT_MS} ms` : (cause?.code ?? cause?.message ?? (e as Error).message);
    throw new AdminError(base, `unreachable (${why})`);
  }
  return { status: res.status, body: await res.text() };
}

// ---- /config_dump

export interface DumpListener {
  name: string;
  address: string;
  port: number;
  protocol: string;
  direction: string;
  filters: string[];
  upstream?: string;
  service?: string;
  /** Inbound: the container port the listener stands for (`--containerPort`), with the security path. */
  containerPort?: number;
  route?: string;
}

export interface DumpVirtualHost {
  name: string;
  domains: string[];
  upstream: string;
}

export interface DumpRoute {
  name: string;
  listener: string;
  virtualHosts: DumpVirtualHost[];
}

export interface DumpEndpoint {
  address: string;
  port: number;
  health: string;
}

export interface DumpCluster {
  cluster: string;
  endpoints: DumpEndpoint[];
}

/** One resource of `configuration.resources.<Kind>`: the decoded, normalized spec (see host/config/resources/). */
export interface DumpResource {
  name: string;
  namespace: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  file?: string;
  spec: unknown;
}

export interface ConfigDump {
  identity: { id: string; ip?: string; domain?: string; serviceCluster?: string; labels?: Record<string, string> };
  listeners: Record<string, DumpListener>;
  routes?: DumpRoute[];
  clusters?: Record<string, string>;
  endpoints?: DumpCluster[];
  secrets?: { certificates: unknown[]; note?: string };
  configuration: { files: string[]; filter: unknown; resources?: Record<string, DumpResource[]>; enforced?: boolean };
}

/** A config dump that cannot be read or is not one. */
export class DumpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DumpError";
  }
}

/** Checks the parts every command relies on; throws a DumpError saying what is missing. */
export function asConfigDump(value: unknown, where: string): ConfigDump {
  const v = value as Partial<ConfigDump> | null;
  const missing = (what: string) => new DumpError(`${where}: expected a sidecar /config_dump JSON document, ${what}`);
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw missing("got no JSON object");
  if (typeof v.identity !== "object" || v.identity === null || typeof v.identity.id !== "string") throw missing("without identity.id");
  if (typeof v.listeners !== "object" || v.listeners === null) throw missing("without listeners");
  if (typeof v.configuration !== "object" || v.configuration === null) throw missing("without configuration");
  return v as ConfigDump;
}

/** Reads a config dump saved from `/config_dump` (`curl …/config_dump > dump.json`). */
export function readDumpFile(file: string): ConfigDump {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new DumpError(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new DumpError(`${file}: expected a sidecar /config_dump JSON document, got text that is not JSON (${(e as Error).message})`);
  }
  return asConfigDump(json, file);
}

/** GET `/config_dump` from a running sidecar. */
export async function fetchDump(base: string): Promise<ConfigDump> {
  const res = await adminRequest(base, "GET", "/config_dump");
  if (res.status !== 200) throw new AdminError(base, `/config_dump answered ${res.status}`);
  let json: unknown;
  try {
    json = JSON.parse(res.body);
  } catch {
    throw new AdminError(base, "/config_dump is not JSON");
  }
  return asConfigDump(json, `${base}/config_dump`);
}

/** `<pod>.<namespace>` → its parts (split at the last dot, as upstream does); no dot: the default namespace. */
export function splitPodName(text: string, defaultNamespace: string): { pod: string; namespace: string } {
  const dot = text.lastIndexOf(".");
  return dot > 0 ? { pod: text.slice(0, dot), namespace: text.slice(dot + 1) } : { pod: text, namespace: defaultNamespace };
}

/** Whether a `<pod[.ns]>` argument names the sidecar whose identity is `id` (`<pod>.<namespace>`). */
export function podMatchesIdentity(arg: string, id: string): boolean {
  if (arg === id) return true;
  return !arg.includes(".") && splitPodName(id, "").pod === arg;
}
