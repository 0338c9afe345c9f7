// meshctl's variables of spec 2's column CT take effect where its commands
// use them: x simulate's sidecars (the agent's code) apply
// DISCO_ENABLE_FALLTHROUGH_ROUTE as disco-agent does; manifest generate
// installs in NAMESPACE and renders JWT_POLICY into the components it
// configures. A malformed value is a usage error naming the variable.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { meshctlInProcess } from "./in_process.ts";

type Obj = Record<string, any>;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null);

const REGISTRY_ONLY = JSON.stringify({
  id: "unknown-host",
  meshConfig: { outboundTrafficPolicy: "REGISTRY_ONLY" },
  workloads: [
    { name: "sleep", namespace: "foo", ports: [{ name: "http", servicePort: null, containerPort: 80 }] },
    {
      name: "example",
      namespace: "external",
      kind: "external-server",
      hostname: "www.example.org",
      ports: [{ name: "http", servicePort: null, containerPort: 80 }],
    },
  ],
  request: { from: "foo/sleep", to: "www.example.org:80", path: "/headers" },
});

describe("meshctl's CT variables", () => {
  it("DISCO_ENABLE_FALLTHROUGH_ROUTE=false: simulate's sidecars answer an unregistered host 404 instead of the fallthrough route's 502", async () => {
    const plain = await meshctlInProcess(["x", "simulate", "-f", "-"], { input: REGISTRY_ONLY, env: { ...process.env, DISCO_ENABLE_FALLTHROUGH_ROUTE: "" } });
    assert.equal(plain.status, 0, plain.stderr);
    assert.equal(JSON.parse(plain.stdout).status, 502);
    const off = await meshctlInProcess(["x", "simulate", "-f", "-"], {
      input: REGISTRY_ONLY,
      env: { ...process.env, DISCO_ENABLE_FALLTHROUGH_ROUTE: "false" },
    });
    assert.equal(off.status, 0, off.stderr);
    assert.equal(JSON.parse(off.stdout).status, 404);
    const bad = await meshctlInProcess(["x", "simulate", "-f", "-"], { input: REGISTRY_ONLY, env: { ...process.env, DISCO_ENABLE_FALLTHROUGH_ROUTE: "no" } });
    assert.equal(bad.status, 2);
    assert.equal(bad.stdout, "");
    assert.match(bad.stderr, /DISCO_ENABLE_FALLTHROUGH_ROUTE: expected true or false, got "no"/);
  });

  it("NAMESPACE is manifest generate's install namespace (-i and --set meshNamespace win)", async () => {
    const env = { ...process.env, NAMESPACE: "mesh-west" };
    const west = docs((await meshctlInProcess(["manifest", "generate"], { env })).stdout);
    assert.ok(west.some((o) => o.kind === "Deployment" && o.metadata.namespace === "mesh-west"));
    const flag = docs((await meshctlInProcess(["manifest", "generate", "-i", "mesh-east"], { env })).stdout);
    assert.ok(flag.every((o) => o.kind !== "Deployment" || o.metadata.namespace === "mesh-east"));
    const bad = await meshctlInProcess(["manifest", "generate"], { env: { ...process.env, NAMESPACE: "Not_A_Namespace" } });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /NAMESPACE: meshNamespace: expected a DNS label/);
  });

  it("JWT_POLICY selects the token policy of the rendered mesh_ca (values.global.jwtPolicy)", async () => {
    const env = (v: string) => ({ ...process.env, JWT_POLICY: v });
    const jwtPolicyOf = (objects: Obj[], name: string) =>
      objects.find((o) => o.kind === "Deployment" && o.metadata.name === name)!.spec.template.spec.containers[0].env.find((e: Obj) => e.name === "JWT_POLICY")
        ?.value;
    const third = docs((await meshctlInProcess(["manifest", "generate"], { env: env("") })).stdout);
    assert.equal(jwtPolicyOf(third, "mesh-ca"), "third-party-jwt");
    const first = docs((await meshctlInProcess(["manifest", "generate"], { env: env("first-party-jwt") })).stdout);
    assert.equal(jwtPolicyOf(first, "mesh-ca"), "first-party-jwt");
    assert.equal(jwtPolicyOf(first, "mesh-disco"), undefined, "disco-discovery reads no tokens and refuses a non-default JWT_POLICY");
    const set = docs(
      (await meshctlInProcess(["manifest", "generate", "--set", "values.global.jwtPolicy=third-party-jwt"], { env: env("first-party-jwt") })).stdout,
    );
    assert.equal(jwtPolicyOf(set, "mesh-ca"), "third-party-jwt");
    const bad = await meshctlInProcess(["manifest", "generate"], { env: env("second-party-jwt") });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /JWT_POLICY: values\.global\.jwtPolicy: expected third-party-jwt or first-party-jwt, got "second-party-jwt"/);
  });
});
