import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { header, readResponses } from "../support/http_messages.ts";
import { tempDir } from "../support/processes.ts";
import { type RawHttpApp, startRawHttpApp } from "../support/raw_http_app.ts";
import { stats } from "./security_support.ts";

// Issue 25, the class behind item 1: whatever the framing a client writes,
// the app behind a real sidecar receives exactly the requests the policy
// saw, byte for byte, or the request is refused. Each run writes a random
// pipeline of requests on one connection (random method, Content-Length,
// Transfer-Encoding and Connection combinations, chunk extensions and
// trailers, bodies that hold requests of their own), in random pieces; a
// raw TCP app reads what arrives with a strict reader. The model says what
// each request must come to: forwarded (200, the app reads it with its
// body intact), denied by the DENY on /admin* (403, the app never sees it)
// or refused for its framing (400/501, the connection ends there).

const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
const POLICY = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: foo}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]
`;

type Framing =
  | { kind: "none" }
  | { kind: "length"; zeros: number }
  | { kind: "chunked"; name: string; value: string; cuts: number[]; extensions: string[]; trailers: string[] }
  | { kind: "length-and-chunked"; lengthFirst: boolean }
  | { kind: "other-coding"; value: string };

interface GeneratedRequest {
  method: string;
  admin: boolean;
  body: string;
  framing: Framing;
  /** Tokens of a Connection field, or none. */
  connection: string[] | undefined;
}

const PIECES = ["a", "\r\n", " ", ":", "0\r\n\r\n", "5\r\n", "\u00ff", "GET /admin/x HTTP/1.1\r\nHost: app.example.com\r\n\r\n", "POST /admin HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "Transfer-Encoding: chunked\r\n"];
const body = fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }).map((p) => p.join(""));
const extension = fc.constantFrom("", ";a=1", ";name", ';q="x y"', ";a=1;b");
const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("length" as const), zeros: fc.integer({ min: 0, max: 2 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("chunked" as const),
      name: fc.constantFrom("Transfer-Encoding", "transfer-encoding"),
      value: fc.constantFrom("chunked", "Chunked", "CHUNKED"),
      cuts: fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 3 }),
      extensions: fc.array(extension, { minLength: 5, maxLength: 5 }),
      trailers: fc.array(fc.constantFrom("X-Trailer: 1", "X-Other: a b"), { maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("length-and-chunked" as const), lengthFirst: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("other-coding" as const), value: fc.constantFrom("gzip, chunked", "chunked, gzip", "identity", "chunked\r\nTransfer-Encoding: chunked") }) },
);
const connectionTokens = fc.option(fc.subarray(["keep-alive", "content-length", "transfer-encoding", "x-e2e", "close"], { minLength: 1 }), { nil: undefined });
const request: fc.Arbitrary<GeneratedRequest> = fc
  .record({ method: fc.constantFrom("GET", "HEAD", "DELETE", "OPTIONS", "POST", "PUT", "PATCH"), admin: fc.boolean(), body, framing, connection: connectionTokens })
  .map((r) => (r.framing.kind === "none" ? { ...r, body: "" } : r));

type Expected = "forwarded" | "denied" | "refused";

function expected(r: GeneratedRequest): Expected {
  if (r.framing.kind === "length-and-chunked" || r.framing.kind === "other-coding") return "refused";
  return r.admin ? "denied" : "forwarded";
}

function chunkedBody(body: string, cuts: number[], extensions: string[], trailers: string[]): string {
  const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].filter((c) => c > 0 && c < body.length).sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of [...points, body.length]) {
    if (p > from) pieces.push(body.slice(from, p));
    from = p;
  }
  const chunks = pieces.map((piece, i) => `${piece.length.toString(16)}${extensions[i % extensions.length]}\r\n${piece}\r\n`);
  return `${chunks.join("")}0${extensions[4]}\r\n${trailers.map((t) => `${t}\r\n`).join("")}\r\n`;
}

/** The request on the wire; `last` adds `close` to its Connection field. */
function serialize(r: GeneratedRequest, id: string, last: boolean): string {
  const fields = [`Host: app.example.com`, `X-Id: ${id}`, "X-E2e: kept"];
  const length = Buffer.byteLength(r.body, "latin1");
  const f = r.framing;
  let wireBody = r.body;
  if (f.kind === "length") fields.push(`Content-Length: ${"0".repeat(f.zeros)}${length}`);
  else if (f.kind === "chunked") {
    fields.push(`${f.name}: ${f.value}`);
    wireBody = chunkedBody(r.body, f.cuts, f.extensions, f.trailers);
  } else if (f.kind === "length-and-chunked") {
    const both = ["Transfer-Encoding: chunked", `Content-Length: ${length}`];
    fields.push(...(f.lengthFirst ? both.reverse() : both));
    wireBody = chunkedBody(r.body, [], [""], []);
  } else if (f.kind === "other-coding") {
    fields.push(`Transfer-Encoding: ${f.value}`);
    wireBody = chunkedBody(r.body, [], [""], []);
  }
  const tokens = [...(r.connection ?? []), ...(last ? ["close"] : [])];
  if (tokens.length > 0) fields.push(`Connection: ${tokens.join(", ")}`);
  return `${r.method} /${r.admin ? "admin" : "public"}/${id} HTTP/1.1\r\n${fields.map((l) => `${l}\r\n`).join("")}\r\n${wireBody}`;
}

/** Writes `pieces` one event-loop turn apart on one connection; everything read until the proxy closes it. */
function exchange(port: number, pieces: string[]): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", async () => {
      for (const p of pieces) {
        if (socket.destroyed) return;
        socket.write(Buffer.from(p, "latin1"));
        await new Promise((r) => setImmediate(r));
      }
    });
    const deadline = setTimeout(() => socket.destroy(), 60_000);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(deadline);
      resolve(Buffer.concat(chunks));
    });
  });
}

function split(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of [...points, text.length]) {
    if (p > from) out.push(text.slice(from, p));
    from = p;
  }
  return out;
}

describe("HTTP framing through the sidecar: the app receives what the policy saw (issue 25)", { timeout: 900_000 }, () => {
  const dir = tempDir("mesh-framing-property-");
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  let app: RawHttpApp;
  let sidecar: SecureWorkload;

  before(async () => {
    mkdirSync(join(dir, "config"));
    writeFileSync(join(dir, "config", "policy.yaml"), POLICY);
    app = await startRawHttpApp();
    ca = await startMeshCa();
    sidecar = await startSecureWorkload({ name: "app", namespace: "foo", configDir: join(dir, "config"), ca, appPort: app.port });
  });
  after(async () => {
    await sidecar?.stop();
    await ca?.stop();
    await app?.close();
  });

  it(`${RUNS} random pipelines: forwarded byte for byte, denied or refused, never more`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 5 }), fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 4 }), async (requests, cuts) => {
        run++;
        const ids = requests.map((_, i) => `r${run}-${i}`);
        const wire = requests.map((r, i) => serialize(r, ids[i], i === requests.length - 1)).join("");
        // What the sidecar must process: up to the first refusal, or the first request asking to close.
        const processed: number[] = [];
        for (let i = 0; i < requests.length; i++) {
          processed.push(i);
          if (expected(requests[i]) === "refused" || requests[i].connection?.includes("close")) break;
        }
        const s0 = await stats(sidecar.adminUrl);
        const seenBefore = app.requests.length;
        const { responses, rest, malformed } = readResponses(await exchange(sidecar.inbound, split(wire, cuts)), processed.map((i) => requests[i].method));
        assert.equal(malformed, undefined, "the client reads well-framed responses");
        assert.equal(rest.length, 0, `bytes after the last response: ${JSON.stringify(rest.toString("latin1").slice(0, 200))}`);
        const statuses = responses.map((r) => r.status);
        const want = processed.map((i) => expected(requests[i]));
        assert.equal(statuses.length, want.length, `statuses ${statuses.join(",")} for ${want.join(",")}`);
        want.forEach((w, k) => {
          if (w === "forwarded") assert.equal(statuses[k], 200, `request ${k}`);
          else if (w === "denied") assert.equal(statuses[k], 403, `request ${k}`);
          else assert.ok(statuses[k] === 400 || statuses[k] === 501, `request ${k}: ${statuses[k]}`);
        });
        // The app: exactly the forwarded requests, each once, as the client wrote them.
        const got = app.requests.slice(seenBefore);
        assert.deepEqual(app.malformed, [], "every byte the app received is a well-framed request");
        const forwarded = processed.filter((i) => expected(requests[i]) === "forwarded");
        assert.deepEqual(got.map((r) => header(r.headers, "x-id")[0]).sort(), forwarded.map((i) => ids[i]).sort());
        for (const i of forwarded) {
          const r = requests[i];
          const m = got.find((g) => header(g.headers, "x-id")[0] === ids[i])!;
          assert.equal(m.method, r.method);
          assert.equal(m.target, `/public/${ids[i]}`);
          assert.equal(m.body.toString("latin1"), r.body, "the body byte for byte");
          assert.deepEqual(header(m.headers, "x-e2e"), r.connection?.includes("x-e2e") ? [] : ["kept"]);
          assert.equal(header(m.headers, "connection").filter((v) => /content-length|transfer-encoding/i.test(v)).length, 0);
        }
        const received = app.connections.reduce((n, c) => n + c.length, 0);
        assert.equal(received, app.requests.reduce((n, r) => n + r.raw.length, 0), "no byte outside a request the app read");
        // The policy saw the same requests: one authorization decision for each forwarded or denied request.
        const s1 = await stats(sidecar.adminUrl);
        const delta = (name: string) => (s1.get(name) ?? 0) - (s0.get(name) ?? 0);
        assert.equal(delta("rbac.allowed"), forwarded.length);
        assert.equal(delta("rbac.denied"), processed.filter((i) => expected(requests[i]) === "denied").length);
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });
});
