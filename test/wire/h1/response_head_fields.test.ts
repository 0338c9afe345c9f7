// The response head's per-field fast paths (issue 30) against what they
// replaced: a Content-Length, Transfer-Encoding or Connection value without
// a comma read without a split, digits and the `timeout=N` hint without a regular
// expression, the head's characters checked by one expression instead of a
// loop over them.
// Whole heads are parsed and compared with a reference built from the old
// expressions: the same head, framing and errors.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { HttpParseError, isDigits, keepAliveTimeout, parseResponseHead } from "../../../host/wire/h1/response_head.ts";

// The old expressions.
const DIGITS = /^[0-9]+$/;
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*([0-9]+)/i;
const trimOws = (s: string) => s.replace(/^[ \t]+|[ \t]+$/g, "");

function headCharsOk(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x09 || (c >= 0x20 && c <= 0xff && c !== 0x7f)) continue;
    if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) {
      i++;
      continue;
    }
    return false;
  }
  return true;
}

function contentLengthBefore(values: string[]): number | string {
  let length: number | undefined;
  for (const value of values)
    for (const v of value.split(",")) {
      const digits = trimOws(v);
      if (!DIGITS.test(digits) || !Number.isSafeInteger(Number(digits))) return "HPE_INVALID_CONTENT_LENGTH";
      if (length !== undefined && length !== Number(digits)) return "HPE_UNEXPECTED_CONTENT_LENGTH";
      length = Number(digits);
    }
  return length ?? -2;
}

function connectionHasBefore(value: string, token: string): boolean {
  if (value === token) return true;
  for (const t of value.split(",")) if (trimOws(t).toLowerCase() === token) return true;
  return false;
}

const valueText = fc.oneof(
  fc.constantFrom(
    "27",
    " 27 ",
    "27, 27",
    "27,28",
    "",
    "0x1",
    "2 7",
    "+5",
    "9007199254740993",
    "keep-alive",
    "close",
    "Keep-Alive, Close",
    " close",
    "upgrade",
    "CLOSE",
    "\tKeep-Alive ",
    "close\u0130",
    "\u212aeep-alive",
    "Chunked",
  ),
  fc.constantFrom("chunked", "Chunked ", "gzip, chunked", "chunked, gzip", "gzip,chunked ,", ",chunked"),
  fc.constantFrom(
    "timeout=5",
    "timeout=",
    "Timeout=5",
    "timeout = 5",
    "max=3, timeout=10",
    "timeout=5x",
    "timeout=12345678901234567890",
    "xtimeout=5",
    "\u00a0timeout=5",
  ),
  fc.stringMatching(/^[ \t0-9,a-z=]{0,12}$/),
  fc.string({ maxLength: 10 }),
);
const fieldName = fc.constantFrom("Content-Length", "content-length", "Connection", "Keep-Alive", "keep-alive", "Transfer-Encoding", "Date", "X-A");

describe("response head fields", () => {
  it("reads digits and the Keep-Alive hint as the regular expressions did", () => {
    fc.assert(
      fc.property(valueText, (v) => {
        assert.equal(isDigits(v), DIGITS.test(v));
        const hint = KEEP_ALIVE_TIMEOUT.exec(v);
        assert.equal(keepAliveTimeout(v), hint ? Number(hint[1]) : undefined);
      }),
      { numRuns: 3000 },
    );
  });

  it("parses heads as before: framing, reuse, the hint and the errors", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fieldName, valueText), { maxLength: 6 }), fc.constantFrom("1.1", "1.0"), (fields, version) => {
        const text = `HTTP/${version} 200 OK${fields.map(([n, v]) => `\r\n${n}: ${v}`).join("")}`;
        const framing = { length: 0 };
        let got: unknown;
        try {
          const head = parseResponseHead(text, false, framing);
          got = { length: framing.length, keepAlive: head?.keepAlive, hint: head?.keepAliveTimeoutS, raw: head?.rawHeaders };
        } catch (e) {
          got = (e as HttpParseError).code;
        }
        if (!headCharsOk(text)) return assert.equal(got, "HPE_INVALID_HEADER_TOKEN");
        // The reference, field by field, from the old expressions (values are trimmed as the parser trims them).
        const values = (name: string) => fields.filter(([n]) => n.toLowerCase() === name).map(([, v]) => trimOws(v));
        let length = values("content-length").length > 0 ? contentLengthBefore(values("content-length")) : -2;
        if (typeof length === "string") return assert.equal(got, length);
        const codings = values("transfer-encoding").map((v) => v.split(","));
        if (codings.length > 0) {
          if (values("content-length").length > 0) return assert.equal(got, "HPE_UNEXPECTED_CONTENT_LENGTH");
          const last = codings[codings.length - 1];
          length = trimOws(last[last.length - 1]).toLowerCase() === "chunked" ? -1 : -2;
        }
        let close = false;
        let keepAlive = false;
        for (const v of values("connection")) {
          const lower = v.toLowerCase();
          if (connectionHasBefore(lower, "close")) close = true;
          else if (connectionHasBefore(lower, "keep-alive")) keepAlive = true;
        }
        let hint: number | undefined;
        for (const v of values("keep-alive")) {
          const m = KEEP_ALIVE_TIMEOUT.exec(v);
          if (m) hint = Number(m[1]);
        }
        const reusable = length !== -2 && (version === "1.1" ? !close : keepAlive && !close);
        assert.deepEqual(got, { length, keepAlive: reusable, hint, raw: fields.flatMap(([n, v]) => [n, trimOws(v)]) });
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses a head for its characters exactly when the old per-character check did", () => {
    const char = fc.constantFrom("a", "Z", " ", ":", "\t", "\r", "\n", "\r\n", "\u0000", "\u001f", "\u007f", "\u0080", "\u00ff", "\u0100", "\u212a");
    fc.assert(
      fc.property(fc.array(char, { maxLength: 30 }), (chars) => {
        const text = `HTTP/1.1 200 OK\r\n${chars.join("")}`;
        let message = "";
        try {
          parseResponseHead(text, false, { length: 0 });
        } catch (e) {
          message = (e as Error).message;
        }
        assert.equal(message === "invalid character in the response head", !headCharsOk(text));
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses control characters, DEL and a lone CR or LF anywhere, and takes obs-text", () => {
    const framing = { length: 0 };
    for (const bad of ["\u0000", "\u0001", "\u001f", "\u007f", "\r", "\n", "\u0100", "\u212a"])
      assert.throws(
        () => parseResponseHead(`HTTP/1.1 200 OK\r\nX-A: a${bad}b\r\nContent-Length: 0`, false, framing),
        (e: HttpParseError) => e.code === "HPE_INVALID_HEADER_TOKEN",
        JSON.stringify(bad),
      );
    const head = parseResponseHead("HTTP/1.1 200 OK\r\nX-A: \u00e9\t\u00ff~\r\nContent-Length: 0", false, framing);
    assert.deepEqual(head?.rawHeaders, ["X-A", "\u00e9\t\u00ff~", "Content-Length", "0"]);
  });
});
