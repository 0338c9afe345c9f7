import { request } from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { get, stats, waitFor } from "./sidecar_support.ts";

export { get, stats, waitFor };

/** A request's outcome: an HTTP answer, or a connection failure with no status (rule 3). */
export type Outcome =
  | { outcome: "http"; status: number; headers: Record<string, string | string[] | undefined>; body: string }
  | { outcome: "connection-failure"; error: string };

/** One plain-text HTTP/1.1 request to 127.0.0.1:port on a fresh connection, with the Host given. */
export function send(port: number, o: { path?: string; host?: string; method?: string; headers?: Record<string, string> } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: o.path ?? "/",
        method: o.method ?? "GET",
        headers: { connection: "close", ...(o.host ? { host: o.host } : {}), ...(o.headers ?? {}) },
        agent: false,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ outcome: "http", status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", (e) => resolve({ outcome: "connection-failure", error: e.message }));
      },
    );
    req.on("error", (e) => resolve({ outcome: "connection-failure", error: e.message }));
    req.end();
  });
}

/** The headers the echo app received, from its JSON answer. */
export function upstreamHeaders(o: Outcome): Record<string, string> {
  if (o.outcome !== "http") throw new Error(`no HTTP answer: ${o.error}`);
  if (o.status !== 200) throw new Error(`status ${o.status}: ${o.body}`);
  return JSON.parse(o.body).headers;
}

/** Writes one configuration file (the directory is watched) and waits until every sidecar applied it. */
export async function writeConfigAndWait(dir: string, file: string, yaml: string, adminUrls: string[]): Promise<void> {
  const before = await Promise.all(adminUrls.map(async (u) => (await stats(u)).get("config.applied") ?? 0));
  writeFileSync(join(dir, file), yaml);
  await Promise.all(
    adminUrls.map((u, i) => waitFor(`config applied at ${u}`, async () => (((await stats(u)).get("config.applied") ?? 0) > before[i] ? true : undefined))),
  );
}

import { createServer, type Server } from "node:http";
import { type JWK, SignJWT, exportJWK, exportSPKI, generateKeyPair } from "jose";
import { createHmac } from "node:crypto";

export const ISSUER = "testing@secure.mesh.io";

/** Keys and a JWKS server on loopback: key-1 published, key-2 and `rogue` (same kid as key-1) not. */
export interface JwtKit {
  jwksUri: string;
  server: Server;
  /** A token signed with a key: `key-1` (published), `key-2` (unpublished) or `rogue` (unpublished, kid key-1). */
  token(o?: {
    key?: "key-1" | "key-2" | "rogue";
    iss?: string;
    sub?: string;
    aud?: string[];
    exp?: number;
    nbf?: number;
    claims?: Record<string, unknown>;
  }): Promise<string>;
  /** `alg: none` with an empty signature. */
  algNone(): string;
  /** HS256 keyed with key-1's RSA public key (algorithm confusion). */
  algConfusion(): Promise<string>;
  close(): void;
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

export async function startJwtKit(): Promise<JwtKit> {
  const keys = { "key-1": await generateKeyPair("RS256"), "key-2": await generateKeyPair("RS256"), rogue: await generateKeyPair("RS256") };
  const jwk: JWK = { ...(await exportJWK(keys["key-1"].publicKey)), kid: "key-1", alg: "RS256", use: "sig" };
  const server = createServer((req, res) =>
    res.writeHead(req.url === "/jwks.json" ? 200 : 404, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const now = () => Math.floor(Date.now() / 1000);
  const publicPem = await exportSPKI(keys["key-1"].publicKey);
  return {
    jwksUri: `http://127.0.0.1:${port}/jwks.json`,
    server,
    async token(o = {}) {
      const key = o.key ?? "key-1";
      const kid = key === "rogue" ? "key-1" : key;
      const jwt = new SignJWT({ ...(o.claims ?? {}) })
        .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
        .setIssuer(o.iss ?? ISSUER)
        .setSubject(o.sub ?? "alice")
        .setIssuedAt();
      jwt.setExpirationTime(o.exp ?? now() + 3600);
      if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
      if (o.aud) jwt.setAudience(o.aud);
      return jwt.sign(keys[key].privateKey);
    },
    algNone() {
      return `${b64({ alg: "none", typ: "JWT" })}.${b64({ iss: ISSUER, sub: "alice", exp: now() + 3600 })}.`;
    },
    async algConfusion() {
      const input = `${b64({ alg: "HS256", kid: "key-1", typ: "JWT" })}.${b64({ iss: ISSUER, sub: "alice", exp: now() + 3600 })}`;
      return `${input}.${createHmac("sha256", publicPem).update(input).digest("base64url")}`;
    },
    close: () => server.close(),
  };
}
