// endToEndHeaders and requestHead skip the lookup of each field in what
// `Connection` names when it names nothing or only `keep-alive` (issue 30).
// This property holds them to the code before: the same fields kept, over
// any names and Connection values, non-ASCII ones among them (U+212A KELVIN
// SIGN lower-cases to ASCII `k`, U+0130 to two characters).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { endToEndHeaders, requestHead } from "../../host/proxy/http/hop_by_hop.ts";
import type { HeaderList } from "../../host/wasm/abi_types.ts";

const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
];

// The code as it was before (lower-cased with toLowerCase, looked up in sets).
function connectionTokensBefore(raw: string[]): Set<string> {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].length !== 10 || raw[i].toLowerCase() !== "connection") continue;
    for (const token of raw[i + 1].split(",")) {
      const name = token.trim().toLowerCase();
      if (name) named.add(name);
    }
  }
  return named;
}

function endToEndBefore(raw: string[], skip?: string): HeaderList {
  const named = connectionTokensBefore(raw);
  const out: HeaderList = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!HOP_BY_HOP.includes(name) && !named.has(name) && name !== skip) out.push([name, raw[i + 1]]);
  }
  return out;
}

function requestHeadersBefore(raw: string[]): HeaderList {
  const named = connectionTokensBefore(raw);
  const out: HeaderList = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name === "content-length") out.push([name, raw[i + 1]]);
    else if (name !== "host" && !HOP_BY_HOP.includes(name) && !named.has(name)) out.push([name, raw[i + 1]]);
  }
  return out;
}

/** Field names: the hop-by-hop ones and common ones in any case, near misses, and any text with non-ASCII in it. */
const fieldName = fc.oneof(
  fc.constantFrom(...HOP_BY_HOP, "Connection", "CONNECTION", "Keep-Alive", "TE", "Te", "Upgrade", "Transfer-Encoding", "Proxy-Connection"),
  fc.constantFrom(
    "content-type",
    "Content-Length",
    "Date",
    "host",
    "x-a",
    "X-Secret",
    "close",
    "Close",
    "connectioN",
    "keep-alivE",
    "keep_alive",
    "tf",
    "upgradf",
  ),
  fc.constantFrom("\u212Aeep-alive", "\u212Aeep-Alive", "conn\u0130ction", "Conn\u00c9ction", "t\u00c9", "x-\u00e9t\u00e9"),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
);
/** Connection values: the usual ones, lists naming other fields, any text. */
const connectionValue = fc.oneof(
  fc.constantFrom("keep-alive", "close", "Keep-Alive", "keep-alive, x-a", "X-Secret, close", " upgrade ,te", "\u212Aeep-alive"),
  fc.string({ maxLength: 20 }),
);
const rawHeaders = fc
  .array(fc.oneof(fc.tuple(fieldName, fc.string({ maxLength: 8 })), fc.tuple(fc.constantFrom("Connection", "connection"), connectionValue)), { maxLength: 12 })
  .map((pairs) => pairs.flat());

describe("hop-by-hop fields without a lookup for the usual Connection values", () => {
  it("keeps and drops the fields endToEndHeaders and requestHead kept and dropped", () => {
    fc.assert(
      fc.property(rawHeaders, fc.option(fieldName.map((n) => n.toLowerCase())), (raw, skip) => {
        assert.deepEqual(endToEndHeaders(raw, [], skip ?? undefined), endToEndBefore(raw, skip ?? undefined));
        assert.deepEqual(requestHead(raw).headers, requestHeadersBefore(raw));
      }),
      { numRuns: 3000 },
    );
  });
});
