// An HTTP/1.1 request head (RFC 9112 §3): request line and header fields,
// checked as Node's ClientRequest checks them (a method and names that are
// tokens, no CR, LF or other control character in a value, no unescaped
// character in the target), written as latin1, with `Connection:
// keep-alive` (the pool keeps the connection); an object's Cookie values
// are joined into one field. The caller frames the body:
// its Content-Length or `Transfer-Encoding: chunked` field is in `headers`.
import { isToken } from "./response_head.ts";

/** Header fields: a flat name, value, name, value… list, or an object (an array value repeats the field). */
export type RequestHeaders = readonly string[] | Readonly<Record<string, string | number | readonly string[] | undefined>>;

const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_PATH = /[^\u0021-\u00ff]/;

function invalidToken(what: string, name: string): TypeError {
  return Object.assign(new TypeError(`${what} must be a valid HTTP token ["${name}"]`), { code: "ERR_INVALID_HTTP_TOKEN" });
}

function field(name: string, value: string): string {
  if (!isToken(name)) throw invalidToken("Header name", name);
  if (INVALID_VALUE.test(value)) throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), { code: "ERR_INVALID_CHAR" });
  return `${name}: ${value}\r\n`;
}

/** The head (request line, fields, the blank line) as a latin1 string; throws a TypeError naming what is invalid. */
export function requestHead(method: string, path: string, headers: RequestHeaders): string {
  if (!isToken(method)) throw invalidToken("Method", method);
  if (INVALID_PATH.test(path)) throw Object.assign(new TypeError("Request path contains unescaped characters"), { code: "ERR_UNESCAPED_CHARACTERS" });
  let head = `${method} ${path} HTTP/1.1\r\n`;
  if (Array.isArray(headers)) {
    const list = headers as readonly string[];
    for (let i = 0; i + 1 < list.length; i += 2) head += field(list[i], list[i + 1]);
  } else {
    for (const [name, value] of Object.entries(headers as Readonly<Record<string, string | number | readonly string[] | undefined>>)) {
      if (value === undefined) continue;
      // Cookie fields are joined into one (RFC 9113 §8.2.3 splits them; HTTP/1.1 wants one), as Node's client does.
      if (typeof value === "object") {
        if (value.length > 1 && name.length === 6 && name.toLowerCase() === "cookie") head += field(name, value.join("; "));
        else for (const v of value) head += field(name, v);
      } else head += field(name, String(value));
    }
  }
  return `${head}Connection: keep-alive\r\n\r\n`;
}

/** A chunk of a chunked body (RFC 9112 §7.1): size line, data, CRLF. */
export function chunkFrame(data: Buffer): Buffer {
  const size = Buffer.from(`${data.length.toString(16)}\r\n`, "latin1");
  return Buffer.concat([size, data, CRLF], size.length + data.length + 2);
}

const CRLF = Buffer.from("\r\n", "latin1");
/** The last chunk and the end of a chunked body (no trailers). */
export const LAST_CHUNK = Buffer.from("0\r\n\r\n", "latin1");
