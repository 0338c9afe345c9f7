import { InvalidArgumentError } from "commander";
import { PROXY_LOGGER_SCOPES } from "../../proxy/proxy_loggers.ts";
import type { LogLevel } from "../../telemetry/logger.ts";
import { type ConfigDump, type DumpCluster, type DumpListener, type DumpRoute, AdminError, adminRequest } from "./sidecar_admin.ts";
import { formatTable } from "./table.ts";

/**
 * `meshctl proxy-config listener|route|endpoints|secret|log`: views of a
 * sidecar's `/config_dump` (live or saved), and its log levels. Output
 * `short` (tables, the default) or `json` (the selected part of the dump).
 */

export type ProxyConfigOutput = "short" | "json";

// ---- listeners

export interface ListenerFilter {
  /** 0: any. */
  port: number;
  address?: string;
  /** HTTP or TCP, any case. */
  type?: string;
}

export function selectListeners(dump: ConfigDump, f: ListenerFilter): DumpListener[] {
  return Object.entries(dump.listeners)
    .map(([name, l]) => ({ ...l, name: l.name ?? name }))
    .filter(
      (l) =>
        (f.port === 0 || l.port === f.port) &&
        (!f.address || l.address === f.address) &&
        (!f.type || (l.protocol ?? "").toUpperCase() === f.type.toUpperCase()),
    );
}

export function formatListeners(listeners: readonly DumpListener[]): string {
  const rows = [["NAME", "ADDRESS", "PORT", "TYPE", "DIRECTION", "FILTERS", "DESTINATION"]];
  for (const l of listeners) {
    const destination = l.service ? `${l.service} -> ${l.upstream}` : (l.upstream ?? "-");
    rows.push([l.name, l.address ?? "-", String(l.port), l.protocol ?? "-", l.direction ?? "-", (l.filters ?? []).join(",") || "-", destination]);
  }
  return formatTable(rows);
}

// ---- routes

export function selectRoutes(dump: ConfigDump, name: string | undefined): DumpRoute[] {
  return (dump.routes ?? []).filter((r) => !name || r.name === name);
}

export function formatRoutes(routes: readonly DumpRoute[]): string {
  const rows = [["NAME", "LISTENER", "VIRTUAL HOST", "DOMAINS", "UPSTREAM"]];
  for (const r of routes) for (const v of r.virtualHosts) rows.push([r.name, r.listener, v.name, v.domains.join(","), v.upstream]);
  return formatTable(rows);
}

// ---- endpoints

export function selectEndpoints(dump: ConfigDump, name: string | undefined): DumpCluster[] {
  return (dump.endpoints ?? []).filter((c) => !name || c.cluster === name);
}

export function formatEndpoints(clusters: readonly DumpCluster[]): string {
  const rows = [["ENDPOINT", "STATUS", "CLUSTER"]];
  for (const c of clusters) for (const e of c.endpoints) rows.push([`${e.address}:${e.port}`, e.health, c.cluster]);
  return formatTable(rows);
}

// ---- secrets

/** The columns of `secret -o short`: upstream's, then the identity the certificate carries. */
export const SECRET_COLUMNS = ["RESOURCE NAME", "TYPE", "STATUS", "VALID CERT", "SERIAL NUMBER", "NOT AFTER", "NOT BEFORE", "IDENTITY"] as const;

/** A /config_dump `secrets.certificates[]` entry (host/proxy/workload_tls.ts `secrets()`); every field may be missing in a saved dump. */
interface DumpCertificate {
  name?: string;
  identity?: string;
  subject?: string;
  subjectAltName?: string;
  serialNumber?: string;
  notBefore?: string;
  notAfter?: string;
}

/** RFC 3339 to the second, as upstream prints it; `-` when absent or not a time. */
function certTime(text: string | undefined): string {
  const t = text === undefined ? NaN : Date.parse(text);
  return Number.isNaN(t) ? "-" : new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The serial number in decimal, as upstream prints it (the dump has it in hex). */
function serialDecimal(hex: string | undefined): string {
  if (!hex || !/^[0-9A-Fa-f]+$/.test(hex)) return hex || "-";
  return BigInt(`0x${hex}`).toString(10);
}

/** The workload identity; for a root, its URI SANs or else its subject. */
function certIdentity(c: DumpCertificate): string {
  if (c.identity) return c.identity;
  const uris = (c.subjectAltName ?? "")
    .split(", ")
    .filter((s) => s.startsWith("URI:"))
    .map((s) => s.slice(4));
  if (uris.length > 0) return uris.join(",");
  return c.subject ? c.subject.split("\n").join(",") : "-";
}

/**
 * `proxy-config secret -o short`: one row per certificate of /config_dump
 * `secrets` — `default` (TYPE `Cert Chain`) and the roots (`ROOTCA…`, TYPE
 * `CA`); STATUS `ACTIVE` (the sidecar holds no warming secrets); VALID CERT
 * `true` when `now` is within NOT BEFORE..NOT AFTER. Without certificates,
 * the header and the dump's note.
 */
export function formatSecrets(dump: ConfigDump, now: Date = new Date()): string {
  const certs = (dump.secrets?.certificates ?? []) as DumpCertificate[];
  if (certs.length === 0) return `${formatTable([[...SECRET_COLUMNS]])}\nNo certificates: ${dump.secrets?.note ?? "none reported"}\n`;
  const rows: string[][] = [[...SECRET_COLUMNS]];
  for (const c of certs) {
    const name = c.name ?? "-";
    const from = Date.parse(c.notBefore ?? "");
    const to = Date.parse(c.notAfter ?? "");
    const valid = !Number.isNaN(from) && !Number.isNaN(to) && from <= now.getTime() && now.getTime() <= to;
    rows.push([
      name,
      name.startsWith("ROOTCA") ? "CA" : "Cert Chain",
      "ACTIVE",
      String(valid),
      serialDecimal(c.serialNumber),
      certTime(c.notAfter),
      certTime(c.notBefore),
      certIdentity(c),
    ]);
  }
  return formatTable(rows);
}

// ---- log

/** Upstream proxy log levels (spec 3) → the sidecar's logger levels. */
export const PROXY_LOG_LEVELS: Readonly<Record<string, LogLevel>> = Object.freeze({
  trace: "debug",
  debug: "debug",
  info: "info",
  warning: "warn",
  warn: "warn",
  error: "error",
  critical: "fatal",
  fatal: "fatal",
  off: "none",
  none: "none",
});

/** The sidecar's levels shown with upstream's names. */
const SHOWN_LEVEL: Readonly<Record<string, string>> = Object.freeze({
  debug: "debug",
  info: "info",
  warn: "warning",
  error: "error",
  fatal: "critical",
  none: "off",
});

/** Upstream logger names → the sidecar's scopes (one mapping, host/proxy/proxy_loggers.ts). */
export const LOGGER_SCOPES = PROXY_LOGGER_SCOPES;

/** The reset level of `--reset` (spec 3: "reset all loggers to default, warning"). */
export const RESET_LEVEL: LogLevel = "warn";

/**
 * `--level` (`[<logger>:]<level>,…`) → POST /logging query parameters, in
 * order: `level=L` (every scope) or `<scope>=L`.
 */
export function parseLogLevels(text: string): Array<[string, LogLevel]> {
  const out: Array<[string, LogLevel]> = [];
  for (const item of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = item.lastIndexOf(":");
    const logger = colon < 0 ? undefined : item.slice(0, colon);
    const levelName = (colon < 0 ? item : item.slice(colon + 1)).toLowerCase();
    const level = PROXY_LOG_LEVELS[levelName];
    if (!level) throw new InvalidArgumentError(`unknown level ${JSON.stringify(levelName)} (levels: trace, debug, info, warning, error, critical, off)`);
    if (logger === undefined) {
      out.push(["level", level]);
      continue;
    }
    const scope = LOGGER_SCOPES[logger];
    if (!scope) throw new InvalidArgumentError(`unknown logger ${JSON.stringify(logger)} (loggers: ${Object.keys(LOGGER_SCOPES).join(", ")})`);
    out.push([scope, level]);
  }
  if (out.length === 0) throw new InvalidArgumentError("expected [<logger>:]<level>[,…]");
  return out;
}

/** Parses the `active loggers:` answer of /logging into scope → upstream level name. */
export function parseActiveLoggers(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/^\s+([\w.-]+): (\w+)$/gm)) out[m[1]] = SHOWN_LEVEL[m[2]] ?? m[2];
  return out;
}

/** Applies `--reset` then `--level` on a running sidecar; returns the resulting levels. */
export async function setLogLevels(admin: string, reset: boolean, levels: Array<[string, LogLevel]>): Promise<Record<string, string>> {
  const steps = [...(reset ? [["level", RESET_LEVEL] as [string, LogLevel]] : []), ...levels];
  let body = "";
  if (steps.length === 0) {
    const res = await adminRequest(admin, "GET", "/logging");
    if (res.status !== 200) throw new AdminError(admin, `/logging answered ${res.status}: ${res.body.trim()}`);
    body = res.body;
  }
  for (const [scope, level] of steps) {
    const res = await adminRequest(admin, "POST", `/logging?${new URLSearchParams([[scope, level]])}`);
    if (res.status !== 200) throw new AdminError(admin, `/logging answered ${res.status}: ${res.body.trim()}`);
    body = res.body;
  }
  return parseActiveLoggers(body);
}

export function formatLogLevels(levels: Record<string, string>): string {
  return `active loggers:\n${Object.entries(levels)
    .map(([k, v]) => `  ${k}: ${v}\n`)
    .join("")}`;
}
