import { readFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { DEMO_SERVICE } from "../../host/demo/local_mesh.ts";
import { waitFor as pollFor } from "../support/processes.ts";

export { DEMO_SERVICE };

/** Sidecar resources for the end-to-end tests: the demo API, short intervals so tests need not wait. */
export function sidecarConfig(failPolicy: "FAIL_OPEN" | "FAIL_CLOSE", extra = ""): string {
  return `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: {name: sidecar, namespace: demo}
spec:
  defaultDestinationService: ${DEMO_SERVICE}
  forwardAttributes:
    attributes:
      source.uid: {stringValue: "kubernetes://petstore-v1.demo"}
  transport:
    statsUpdateInterval: 0.1s
    reportBatchMaxTime: 0.1s
    networkFailPolicy: {policy: ${failPolicy}, maxRetry: 2, baseRetryWait: 0.050s, maxRetryWait: 0.2s}
${extra}---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: {name: petstore, namespace: demo}
spec:
  attributes: {attributes: {api.service: {stringValue: petstore}}}
  patterns:
  - {httpMethod: GET, uriTemplate: "/pets/{id}", attributes: {attributes: {api.operation: {stringValue: getPet}}}}
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: {name: petstore, namespace: demo}
spec: {services: [{name: petstore}], apiSpecs: [{name: petstore}]}
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: {name: requests, namespace: demo}
spec:
  rules:
  - match: [{clause: {request.path: {prefix: /limited}}}]
    quotas: [{quota: requestcount, charge: 1}]
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpecBinding
metadata: {name: requests, namespace: demo}
spec: {services: [{name: petstore}], quotaSpecs: [{name: requests}]}
`;
}

export const HUB_RULES = `apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: deny-admin, namespace: mesh-system}
spec:
  match: [{clause: {request.path: {prefix: /admin}}}]
  actions: [{deny: {code: PERMISSION_DENIED, message: "admins only"}}]
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: {name: limited, namespace: mesh-system}
spec:
  match: [{clause: {request.path: {prefix: /limited}}}]
  actions: [{quota: {name: requestcount}}]
---
apiVersion: config.mesh.io/v1alpha2
kind: HubQuota
metadata: {name: requestcount, namespace: mesh-system}
spec: {maxAmount: 3, validDuration: 60s}
`;

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP/1.1 request on a fresh connection (so one test cannot hold another's socket). */
export function get(url: string, headers: Record<string, string> = {}, method = "GET", body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { connection: "close", ...headers }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The sidecar's /stats as name → number. */
export async function stats(adminUrl: string): Promise<Map<string, number>> {
  const res = await get(`${adminUrl}/stats`);
  return new Map(
    res.body
      .trim()
      .split("\n")
      .map((l) => {
        const [k, v] = l.split(": ");
        return [k, Number(v)] as [string, number];
      }),
  );
}

/** Polls until `probe` returns something other than undefined (test/support/processes.ts `waitFor`; limits of at least 60 s). */
export function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs?: number): Promise<T> {
  return pollFor(what, probe, timeoutMs);
}

export function accessLogLines(path: string): Array<{ attributes: Record<string, any> }> {
  try {
    return readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

/** A TCP port free on 127.0.0.1 right now, for flags where 0 means "off" rather than "any free port" (`--statusPort`, `--stsPort`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
