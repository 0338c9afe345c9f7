import { DEFAULT_PATH_NORMALIZATION, type PathNormalization, normalizePath } from "../../security/authz/path.ts";

/**
 * The request target as every later stage sees it (issue 15 item 2;
 * docs/security.md "Request targets"). Applied once, at the listener edge,
 * before the security stage, the filter and routing: the `:path` they
 * decide on is the path the upstream receives.
 *
 * - origin form (`/path?query`): the path is normalized (mesh
 *   `pathNormalization`, `normalizePath`);
 * - absolute form (`http://host:port/path`, RFC 9112 §3.2.2): turned into
 *   origin form; its authority must name the same host and port as the
 *   `Host` header (a proxy on the way could route by either, so a mismatch is
 *   refused rather than guessed); `http`/`https` only, no userinfo;
 * - asterisk form (`*`): only for OPTIONS, forwarded as is;
 * - anything else: refused.
 * Refusals are 400 and never reach a policy, the filter or the app.
 */

export type TargetRefusal =
  /** The absolute-form authority and the Host header name different hosts or ports. */
  | "authority_mismatch"
  /** `*` with a method other than OPTIONS. */
  | "asterisk_form"
  /** Not origin, absolute or asterisk form; a scheme other than http(s); userinfo; an empty or malformed authority. */
  | "invalid_target"
  /** The path cannot be normalized (an encoded NUL). */
  | "invalid_path";

export type RequestTarget =
  | {
      readonly ok: true;
      readonly form: "origin" | "absolute" | "asterisk";
      /** Normalized path with its query (fragment dropped): the `:path` of every later stage and of the forwarded request. */
      readonly path: string;
      /** The `Host` header, or for HTTP/1.0 without one, the absolute-form authority. */
      readonly authority: string;
    }
  | { readonly ok: false; readonly status: 400; readonly reason: TargetRefusal; readonly message: string };

// RFC 3986 §3.1 scheme, then "://".
const ABSOLUTE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s;
// host (reg-name or IP literal) and an optional port: no userinfo, no spaces.
const AUTHORITY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(?::([0-9]*))?$/;
const DEFAULT_PORTS: Record<string, string> = { http: "80", https: "443" };

const refuse = (reason: TargetRefusal, message: string): RequestTarget => Object.freeze({ ok: false, status: 400, reason, message });

/** host and port of an authority, lower-cased, the scheme's default port filled in; undefined when malformed. */
function canonicalAuthority(authority: string, scheme: string): string | undefined {
  const m = AUTHORITY.exec(authority);
  if (!m) return undefined;
  const port = m[2] === undefined || m[2] === "" ? DEFAULT_PORTS[scheme] : String(Number(m[2]));
  return `${m[1].toLowerCase()}:${port}`;
}

/**
 * @example normalizeRequestTarget("GET", "http://httpbin.foo:8000/public/../admin", "httpbin.foo:8000")
 *   // { ok: true, form: "absolute", path: "/admin", authority: "httpbin.foo:8000" }
 * @example normalizeRequestTarget("GET", "http://evil.example/admin", "httpbin.foo:8000").ok // false: authority_mismatch
 */
export function normalizeRequestTarget(
  method: string,
  target: string,
  host: string | undefined,
  mode: PathNormalization = DEFAULT_PATH_NORMALIZATION,
): RequestTarget {
  let path: string;
  let authority = host ?? "";
  let form: "origin" | "absolute";
  if (target === "*") {
    if (method !== "OPTIONS") return refuse("asterisk_form", `the asterisk-form target "*" is only for OPTIONS, not ${method}`);
    return Object.freeze({ ok: true, form: "asterisk", path: "*", authority });
  }
  if (target.startsWith("/")) {
    form = "origin";
    path = target;
  } else {
    const m = ABSOLUTE.exec(target);
    if (!m) return refuse("invalid_target", "the target is neither origin form (/path) nor absolute form (http://host/path)");
    const scheme = m[1].toLowerCase();
    if (DEFAULT_PORTS[scheme] === undefined) return refuse("invalid_target", `scheme ${m[1]} in an absolute-form target (expected http or https)`);
    const targetAuthority = canonicalAuthority(m[2], scheme);
    if (targetAuthority === undefined) return refuse("invalid_target", `authority ${JSON.stringify(m[2])} of the absolute-form target is not host[:port]`);
    if (host !== undefined && canonicalAuthority(host, scheme) !== targetAuthority) {
      return refuse("authority_mismatch", `the absolute-form authority ${JSON.stringify(m[2])} is not the Host header ${JSON.stringify(host)}`);
    }
    if (host === undefined) authority = m[2];
    form = "absolute";
    const rest = m[3];
    path = rest.startsWith("/") ? rest : `/${rest}`;
  }
  const normalized = normalizePath(path, mode);
  if (!normalized.ok) return refuse("invalid_path", "the path holds an encoded NUL (%00)");
  return Object.freeze({ ok: true, form, path: normalized.path, authority });
}
