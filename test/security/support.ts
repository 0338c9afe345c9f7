import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, type JWK, type JWTPayload, SignJWT, base64url, exportJWK, exportSPKI, generateKeyPair } from "jose";
import { type AnyResource, type Catalog, decodeDocuments } from "../../host/config/catalog.ts";
import { parseSourceText } from "../../host/config/sources.ts";

/** Security kinds need none of the filter's pattern checks. */
const NO_PATTERN_CHECKS = { template: () => "", regex: () => "" };

/** Decodes YAML documents through the catalog; fails on any problem. */
export function catalogOf(yaml: string): Catalog {
  const { documents, problems } = parseSourceText(yaml, "test.yaml");
  if (problems.length > 0) throw new Error(`parse: ${JSON.stringify(problems)}`);
  const c = decodeDocuments(documents, NO_PATTERN_CHECKS);
  if (c.errors.length > 0) throw new Error(`decode: ${c.errors.map((e) => `${e.resource} ${e.fieldPath}: ${e.message}`).join("; ")}`);
  return c;
}

export function only<K extends AnyResource["kind"]>(c: Catalog, kind: K) {
  return c.byKind[kind];
}

/** A settable clock, in ms since the epoch. */
export class Clock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.ms;
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export interface SigningKey {
  readonly alg: string;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  readonly spkiPem: string;
}

export async function signingKey(alg: "RS256" | "ES256" | "ES384" | "PS256" | "EdDSA", kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, use: "sig" };
  return { alg, kid, privateKey, publicJwk, spkiPem: await exportSPKI(publicKey) };
}

export function jwksOf(...keys: SigningKey[]): { keys: JWK[] } {
  return { keys: keys.map((k) => k.publicJwk) };
}

/** A signed token; claims are set as given (iat defaults to the clock). */
export async function mint(key: SigningKey, claims: JWTPayload, clock: Clock, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ iat: clock.seconds, ...claims }).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT", ...header }).sign(key.privateKey);
}

/** `alg: none`, with an empty or a junk signature part. */
export function unsigned(claims: JWTPayload, kid: string, signature = ""): string {
  const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
  return `${enc({ alg: "none", typ: "JWT", kid })}.${enc(claims)}.${signature}`;
}

/** HS256 keyed with the RSA public key (PEM text): the classic algorithm confusion. */
export async function algConfusion(key: SigningKey, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: key.kid, typ: "JWT" }).sign(new TextEncoder().encode(key.spkiPem));
}

/** A JWKS server on 127.0.0.1, port 0: serves `body` (mutable), counts requests. */
export class JwksServer {
  requests = 0;
  status = 200;
  body: unknown = { keys: [] };
  private server: Server | undefined;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((_req, res) => {
      this.requests++;
      res.writeHead(this.status, { "content-type": "application/json" });
      res.end(typeof this.body === "string" ? this.body : JSON.stringify(this.body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/jwks.json`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
