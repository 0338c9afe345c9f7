/** `hubs server --quotaStoreURL`: where quota counters live. */
export type QuotaStoreLocation =
  | { readonly kind: "memory" }
  | {
      readonly kind: "redis";
      /** The URL as given (credentials included), for the client. */
      readonly url: string;
      readonly tls: boolean;
      readonly host: string;
      readonly port: number;
      readonly db: number;
      /** The URL without credentials, for logs, /healthz and ControlZ. */
      readonly description: string;
    };

const FORMS = "expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or rediss://… (TLS), or empty for the memory store";

/**
 * Reads a `--quotaStoreURL` value; throws an Error naming the flag, the value
 * and what was expected.
 *
 * @example parseQuotaStoreURL("redis://127.0.0.1:6379/2") // { kind: "redis", host: "127.0.0.1", port: 6379, db: 2, … }
 */
export function parseQuotaStoreURL(text: string): QuotaStoreLocation {
  if (text === "" || text === "memory") return { kind: "memory" };
  const bad = (why: string): never => {
    throw new Error(`--quotaStoreURL ${JSON.stringify(text)}: ${why} (${FORMS})`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bad("not a URL");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") bad(`scheme ${url.protocol.replace(/:$/, "")} is not supported`);
  if (!url.hostname) bad("the host is missing");
  const port = url.port === "" ? 6379 : Number(url.port);
  const dbText = url.pathname.replace(/^\//, "");
  if (dbText !== "" && !/^\d{1,5}$/.test(dbText)) bad(`database ${JSON.stringify(dbText)} is not a number`);
  if (url.search || url.hash) bad("query and fragment are not supported");
  const db = dbText === "" ? 0 : Number(dbText);
  const tls = url.protocol === "rediss:";
  return { kind: "redis", url: text, tls, host: url.hostname, port, db, description: `${tls ? "rediss" : "redis"}://${url.host}/${db}` };
}
