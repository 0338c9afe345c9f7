import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { decodeExtensionProviders, unknownProviderProblems } from "../../host/config/extension_providers.ts";
import { Field } from "../../host/config/decode.ts";
import { readDiscoveryMeshConfig } from "../../host/discovery/mesh_config.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { tempDir } from "../support/processes.ts";
import { startTestDiscovery, testChecks } from "./support/in_process.ts";

// A CUSTOM AuthorizationPolicy names its external authorizer by
// `provider.name`, an entry of meshConfig `extensionProviders`: disco-discovery
// reads them from --meshConfig and refuses a configuration whose CUSTOM
// policy names none, with the resource and field path.

const custom = (provider: string) => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ext-authz, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: CUSTOM
  provider: {name: ${provider}}
  rules: [{to: [{operation: {paths: ["/headers"]}}]}]
`;

const providers = decodeExtensionProviders(
  Field.root(
    {
      extensionProviders: [
        { name: "sample-ext-authz-http", envoyExtAuthzHttp: { service: "ext-authz.foo.svc.cluster.local", port: "8000" } },
        { name: "otel", opentelemetry: { service: "otel", port: 4317 } },
      ],
    },
    { warnings: [] },
  ).get("extensionProviders"),
);

describe("extension providers for CUSTOM policies", () => {
  it("a provider the mesh config lacks, or one that is not an authorizer, is an error on spec.provider.name", () => {
    const catalog = (p: string) => loadDocuments(parseDocuments(custom(p), "authz.yaml"), ["authz.yaml"], testChecks(), DEFAULT_DOMAIN).mesh;
    assert.deepEqual(unknownProviderProblems(catalog("sample-ext-authz-http"), providers), []);
    assert.deepEqual(unknownProviderProblems(catalog("nope"), providers), [
      {
        severity: "error",
        file: "authz.yaml",
        resource: "AuthorizationPolicy foo/ext-authz",
        fieldPath: "spec.provider.name",
        message: 'unknown extension provider "nope" (meshConfig extensionProviders has "sample-ext-authz-http")',
      },
    ]);
    assert.match(unknownProviderProblems(catalog("otel"), providers)[0].message, /"otel" is a provider of kind opentelemetry, not an external authorizer/);
  });

  it("disco-discovery --meshConfig reads extensionProviders (no longer an ignored field)", () => {
    const dir = tempDir("disco-extauthz-mesh-");
    const file = join(dir, "mesh.yaml");
    writeFileSync(file, "extensionProviders:\n- name: a\n  envoyExtAuthzGrpc: {service: authz.foo.svc.cluster.local, port: 9000}\n");
    const mesh = readDiscoveryMeshConfig(file, true);
    assert.deepEqual(mesh.ignored, []);
    assert.equal(mesh.extensionProviders.authorizers.get("a")?.port, 9000);
  });

  it("disco-discovery refuses a folder whose CUSTOM policy names an unknown provider, naming the field; a known one is served", async () => {
    const dir = tempDir("disco-extauthz-");
    writeFileSync(join(dir, "authz.yaml"), custom("nope"));
    const errors: string[] = [];
    const log = { info: () => {}, warn: () => {}, debug: () => {}, error: (m: string) => errors.push(m) } as never;
    await assert.rejects(startTestDiscovery(dir, { extensionProviders: providers, log }), /no usable configuration/);
    assert.match(errors.join("\n"), /authz\.yaml: AuthorizationPolicy foo\/ext-authz: spec\.provider\.name: unknown extension provider "nope"/);
    writeFileSync(join(dir, "authz.yaml"), custom("sample-ext-authz-http"));
    const served = await startTestDiscovery(dir, { extensionProviders: providers });
    await served.close();
  });
});
