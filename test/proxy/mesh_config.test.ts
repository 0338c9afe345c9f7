// Mesh settings of the sidecar (`disco-agent proxy --meshConfigFile`,
// docs/sidecar.md "Security"): rows that must be accepted with the settings
// they give, rows that must be refused naming the file and the field path,
// and the DISCO_ENABLE_FALLTHROUGH_ROUTE override.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { NO_EXTENSION_PROVIDERS } from "../../host/config/extension_providers.ts";
import { DEFAULT_MESH_SETTINGS, type MeshSettings, MeshConfigError, loadMeshConfig, parseMeshConfig } from "../../host/proxy/mesh_config.ts";
import { securitySettings } from "../../host/proxy/security_settings.ts";
import { tempDir } from "../support/processes.ts";

const FILE = "mesh.yaml";

describe("parseMeshConfig", () => {
  it("defaults: mesh-system, cluster.local, auto mTLS, ALLOW_ANY, fallthrough route, BASE; frozen", () => {
    assert.deepEqual(DEFAULT_MESH_SETTINGS, {
      rootNamespace: "mesh-system",
      trustDomain: "cluster.local",
      enableAutoMtls: true,
      outboundTrafficPolicy: "ALLOW_ANY",
      enableFallthroughRoute: true,
      pathNormalization: "BASE",
      extensionProviders: NO_EXTENSION_PROVIDERS,
    });
    assert.ok(Object.isFrozen(DEFAULT_MESH_SETTINGS));
  });

  const accepted: Array<[string, string, Partial<MeshSettings>]> = [
    ["an empty file", "", {}],
    ["comments only", "# nothing set\n", {}],
    ["an explicit null document", "~\n", {}],
    ["rootNamespace", "rootNamespace: istio-system\n", { rootNamespace: "istio-system" }],
    ["a one-character rootNamespace", "rootNamespace: x\n", { rootNamespace: "x" }],
    ["trustDomain", "trustDomain: example.org\n", { trustDomain: "example.org" }],
    ["a trustDomain with capitals and dashes", "trustDomain: Corp-1.Example.COM\n", { trustDomain: "Corp-1.Example.COM" }],
    ["enableAutoMtls: false", "enableAutoMtls: false\n", { enableAutoMtls: false }],
    ["enableAutoMtls: true", "enableAutoMtls: true\n", { enableAutoMtls: true }],
    ["outboundTrafficPolicy, upstream's object form", "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n", { outboundTrafficPolicy: "REGISTRY_ONLY" }],
    ["outboundTrafficPolicy, block mapping", "outboundTrafficPolicy:\n  mode: ALLOW_ANY\n", { outboundTrafficPolicy: "ALLOW_ANY" }],
    ["outboundTrafficPolicy, the bare mode", "outboundTrafficPolicy: REGISTRY_ONLY\n", { outboundTrafficPolicy: "REGISTRY_ONLY" }],
    ["outboundTrafficPolicy: {} (the default mode)", "outboundTrafficPolicy: {}\n", { outboundTrafficPolicy: "ALLOW_ANY" }],
    ["outboundTrafficPolicy: null (the default)", "outboundTrafficPolicy:\n", { outboundTrafficPolicy: "ALLOW_ANY" }],
    ["enableFallthroughRoute: false", "enableFallthroughRoute: false\n", { enableFallthroughRoute: false }],
    ["pathNormalization, upstream's object form", "pathNormalization: {normalization: MERGE_SLASHES}\n", { pathNormalization: "MERGE_SLASHES" }],
    ["pathNormalization, the bare value", "pathNormalization: DECODE_AND_MERGE_SLASHES\n", { pathNormalization: "DECODE_AND_MERGE_SLASHES" }],
    ["pathNormalization: NONE", "pathNormalization: {normalization: NONE}\n", { pathNormalization: "NONE" }],
    ["JSON (a YAML subset)", '{"trustDomain": "td.local", "enableAutoMtls": false}', { trustDomain: "td.local", enableAutoMtls: false }],
    [
      "every field",
      "rootNamespace: root\ntrustDomain: td.example\nenableAutoMtls: false\noutboundTrafficPolicy: {mode: REGISTRY_ONLY}\nenableFallthroughRoute: false\npathNormalization: {normalization: NONE}\n",
      {
        rootNamespace: "root",
        trustDomain: "td.example",
        enableAutoMtls: false,
        outboundTrafficPolicy: "REGISTRY_ONLY",
        enableFallthroughRoute: false,
        pathNormalization: "NONE",
      },
    ],
  ];
  for (const [what, yaml, expected] of accepted) {
    it(`accepts ${what}`, () => {
      const m = parseMeshConfig(yaml, FILE);
      assert.deepEqual(m, { ...DEFAULT_MESH_SETTINGS, ...expected });
      assert.ok(Object.isFrozen(m));
    });
  }

  // [what, yaml, field path ("" = the document), message after "<file>: <path>: "]
  const refused: Array<[string, string, string, RegExp]> = [
    ["not YAML", "rootNamespace: [\n", "", /^not YAML: /],
    ["several YAML documents", "trustDomain: a\n---\ntrustDomain: b\n", "", /^not YAML: /],
    ["a list", "- rootNamespace: x\n", "", /^expected a mapping of mesh settings$/],
    ["a scalar", "REGISTRY_ONLY\n", "", /^expected a mapping of mesh settings$/],
    [
      "an unknown field",
      "outboundTrafficPolicyMode: REGISTRY_ONLY\n",
      "outboundTrafficPolicyMode",
      /^unknown field \(expected one of rootNamespace, trustDomain, enableAutoMtls, outboundTrafficPolicy, enableFallthroughRoute, pathNormalization, extensionProviders\)$/,
    ],
    ["a field of another MeshConfig version (wrong case)", "trustdomain: x\n", "trustdomain", /^unknown field/],
    ["__proto__ as a field", "__proto__: {rootNamespace: x}\n", "__proto__", /^unknown field/],
    ["rootNamespace with capitals", "rootNamespace: Mesh-System\n", "rootNamespace", /^expected a namespace name \(DNS label\), got "Mesh-System"$/],
    ["rootNamespace with a dot", "rootNamespace: mesh.system\n", "rootNamespace", /^expected a namespace name \(DNS label\), got "mesh\.system"$/],
    ["rootNamespace ending in '-'", "rootNamespace: mesh-\n", "rootNamespace", /got "mesh-"$/],
    ["rootNamespace longer than 63", `rootNamespace: ${"a".repeat(64)}\n`, "rootNamespace", /^expected a namespace name/],
    ["rootNamespace null", "rootNamespace:\n", "rootNamespace", /got null$/],
    ["rootNamespace a number", "rootNamespace: 42\n", "rootNamespace", /got 42$/],
    ["trustDomain empty", "trustDomain: ''\n", "trustDomain", /^expected a trust domain \(DNS name\), got ""$/],
    ["trustDomain a SPIFFE URI", "trustDomain: spiffe://cluster.local\n", "trustDomain", /got "spiffe:\/\/cluster\.local"$/],
    ["trustDomain ending in '.'", "trustDomain: cluster.local.\n", "trustDomain", /got "cluster\.local\."$/],
    ["enableAutoMtls a string", 'enableAutoMtls: "true"\n', "enableAutoMtls", /^expected true or false, got "true"$/],
    ["enableAutoMtls yes (a string in YAML 1.2)", "enableAutoMtls: yes\n", "enableAutoMtls", /^expected true or false, got "yes"$/],
    ["enableAutoMtls null", "enableAutoMtls:\n", "enableAutoMtls", /^expected true or false, got null$/],
    ["enableFallthroughRoute 0", "enableFallthroughRoute: 0\n", "enableFallthroughRoute", /^expected true or false, got 0$/],
    [
      "outboundTrafficPolicy.mode unknown (the docs' example)",
      "outboundTrafficPolicy: {mode: SOMETIMES}\n",
      "outboundTrafficPolicy.mode",
      /^expected one of ALLOW_ANY, REGISTRY_ONLY, got "SOMETIMES"$/,
    ],
    ["outboundTrafficPolicy.mode in lower case", "outboundTrafficPolicy: {mode: registry_only}\n", "outboundTrafficPolicy.mode", /got "registry_only"$/],
    ["outboundTrafficPolicy.mode null", "outboundTrafficPolicy: {mode: null}\n", "outboundTrafficPolicy.mode", /got null$/],
    [
      "the bare outboundTrafficPolicy unknown",
      "outboundTrafficPolicy: DENY\n",
      "outboundTrafficPolicy",
      /^expected one of ALLOW_ANY, REGISTRY_ONLY, got "DENY"$/,
    ],
    ["outboundTrafficPolicy a list", "outboundTrafficPolicy: [REGISTRY_ONLY]\n", "outboundTrafficPolicy", /got \["REGISTRY_ONLY"\]$/],
    [
      "an unknown field under outboundTrafficPolicy",
      "outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {}}\n",
      "outboundTrafficPolicy.egressProxy",
      /^unknown field \(expected mode\)$/,
    ],
    [
      "pathNormalization.normalization unknown",
      "pathNormalization: {normalization: DECODE}\n",
      "pathNormalization.normalization",
      /^expected one of NONE, BASE, MERGE_SLASHES, DECODE_AND_MERGE_SLASHES, got "DECODE"$/,
    ],
    ["the bare pathNormalization unknown", "pathNormalization: base\n", "pathNormalization", /got "base"$/],
    ["an unknown field under pathNormalization", "pathNormalization: {mode: BASE}\n", "pathNormalization.mode", /^unknown field \(expected normalization\)$/],
    [
      "an extension provider without a kind",
      "extensionProviders: [{name: a}]\n",
      "extensionProviders[0]",
      /^expected exactly one of envoyExtAuthzHttp, envoyExtAuthzGrpc, zipkin/,
    ],
    [
      "an extension provider port out of range",
      "extensionProviders: [{name: a, envoyExtAuthzGrpc: {service: x, port: 0}}]\n",
      "extensionProviders[0].envoyExtAuthzGrpc.port",
      /^expected an integer from 1 to 65535, got 0$/,
    ],
    [
      "a typo in an extension provider",
      "extensionProviders: [{name: a, envoyExtAuthzHttp: {service: x, port: 80, includeHeadersInChek: [a]}}]\n",
      "extensionProviders[0].envoyExtAuthzHttp.includeHeadersInChek",
      /^unknown field \(known: service, port/,
    ],
    [
      "two extension providers with one name",
      "extensionProviders: [{name: a, envoyExtAuthzGrpc: {service: x, port: 1}}, {name: a, prometheus: {}}]\n",
      "extensionProviders[1].name",
      /^duplicate extension provider name "a"$/,
    ],
  ];
  for (const [what, yaml, fieldPath, why] of refused) {
    it(`refuses ${what}${fieldPath ? ` at ${fieldPath}` : ""}`, () => {
      assert.throws(
        () => parseMeshConfig(yaml, FILE),
        (e: unknown) => {
          assert.ok(e instanceof MeshConfigError, String(e));
          assert.equal(e.code, "MESH_CONFIG_INVALID");
          assert.equal(e.file, FILE);
          assert.equal(e.fieldPath, fieldPath);
          const prefix = `${FILE}: ${fieldPath || "(document)"}: `;
          assert.ok(e.message.startsWith(prefix), e.message);
          assert.match(e.message.slice(prefix.length), why);
          return true;
        },
      );
    });
  }
});

describe("extensionProviders (upstream's ext-authz task mesh config)", () => {
  it("decodes both authorizer kinds with upstream's defaults; other provider kinds are kept by name", () => {
    const m = parseMeshConfig(
      `extensionProviders:
- name: "sample-ext-authz-grpc"
  envoyExtAuthzGrpc: {service: "ext-authz.foo.svc.cluster.local", port: "9000"}
- name: "sample-ext-authz-http"
  envoyExtAuthzHttp:
    service: "ext-authz.foo.svc.cluster.local"
    port: "8000"
    timeout: 2s
    pathPrefix: /check
    failOpen: true
    statusOnError: "503"
    includeRequestHeadersInCheck: ["X-Ext-Authz", "x-b3-*"]
    includeAdditionalHeadersInCheck: {x-mesh: "1"}
    headersToUpstreamOnAllow: ["x-user"]
- name: prom
  prometheus: {}
`,
      FILE,
    );
    const p = m.extensionProviders;
    assert.deepEqual(p.authorizers.get("sample-ext-authz-grpc"), {
      kind: "envoyExtAuthzGrpc",
      name: "sample-ext-authz-grpc",
      service: "ext-authz.foo.svc.cluster.local",
      port: 9000,
      timeoutMs: 600_000,
      failOpen: false,
      clearRouteCache: false,
      statusOnError: 403,
    });
    assert.deepEqual(p.authorizers.get("sample-ext-authz-http"), {
      kind: "envoyExtAuthzHttp",
      name: "sample-ext-authz-http",
      service: "ext-authz.foo.svc.cluster.local",
      port: 8000,
      timeoutMs: 2000,
      failOpen: true,
      clearRouteCache: false,
      statusOnError: 503,
      pathPrefix: "/check",
      includeRequestHeadersInCheck: ["x-ext-authz", "x-b3-*"],
      includeAdditionalHeadersInCheck: { "x-mesh": "1" },
      headersToUpstreamOnAllow: ["x-user"],
      headersToDownstreamOnDeny: [],
      headersToDownstreamOnAllow: [],
    });
    assert.deepEqual([...p.other], [["prom", "prometheus"]]);
  });
});

describe("loadMeshConfig", () => {
  const dir = tempDir("mesh-config-");

  it("reads and decodes the file", () => {
    const file = join(dir, "mesh.yaml");
    writeFileSync(file, "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\nenableFallthroughRoute: false\n");
    assert.deepEqual(loadMeshConfig(file), { ...DEFAULT_MESH_SETTINGS, outboundTrafficPolicy: "REGISTRY_ONLY", enableFallthroughRoute: false });
  });

  it("a file that cannot be read names the file, at the document", () => {
    const file = join(dir, "missing.yaml");
    assert.throws(
      () => loadMeshConfig(file),
      (e: unknown) => e instanceof MeshConfigError && e.fieldPath === "" && e.message.startsWith(`${file}: (document): cannot read: `),
    );
  });

  it("a bad value names the file's own path", () => {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "outboundTrafficPolicy: {mode: SOMETIMES}\n");
    assert.throws(() => loadMeshConfig(file), { message: `${file}: outboundTrafficPolicy.mode: expected one of ALLOW_ANY, REGISTRY_ONLY, got "SOMETIMES"` });
  });
});

describe("the sidecar's mesh settings: --meshConfigFile, DISCO_ENABLE_FALLTHROUGH_ROUTE, --trustDomain", () => {
  const dir = tempDir("mesh-settings-");
  const meshFile = (name: string, yaml: string) => {
    const file = join(dir, name);
    writeFileSync(file, yaml);
    return file;
  };
  const registryOnly = meshFile("registry-only.yaml", "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n");
  const noFallthrough = meshFile("no-fallthrough.yaml", "enableFallthroughRoute: false\ntrustDomain: file.example\n");
  const settings = (opts: Record<string, unknown>, env: Record<string, string> = {}) =>
    securitySettings({ caAddress: "127.0.0.1:8060", appPort: 8080, ...opts }, env, "foo");

  // [what, flags, environment, enableFallthroughRoute, trustDomain]
  const rows: Array<[string, Record<string, unknown>, Record<string, string>, boolean, string]> = [
    ["no mesh config file: the defaults", {}, {}, true, "cluster.local"],
    ["the file's value", { meshConfigFile: noFallthrough }, {}, false, "file.example"],
    ["the variable alone (no file): false", {}, { DISCO_ENABLE_FALLTHROUGH_ROUTE: "false" }, false, "cluster.local"],
    ["the variable overrides the file's false with true", { meshConfigFile: noFallthrough }, { DISCO_ENABLE_FALLTHROUGH_ROUTE: "true" }, true, "file.example"],
    [
      "the variable overrides the default true with false",
      { meshConfigFile: registryOnly },
      { DISCO_ENABLE_FALLTHROUGH_ROUTE: "false" },
      false,
      "cluster.local",
    ],
    ["--trustDomain overrides the file's", { meshConfigFile: noFallthrough, trustDomain: "flag.example" }, {}, false, "flag.example"],
  ];
  for (const [what, opts, env, fallthrough, trustDomain] of rows) {
    it(what, () => {
      const s = settings(opts, env);
      assert.ok(s);
      assert.equal(s.mesh.enableFallthroughRoute, fallthrough);
      assert.equal(s.mesh.trustDomain, trustDomain);
      assert.equal(s.trustDomain, trustDomain);
      assert.ok(Object.isFrozen(s.mesh));
    });
  }

  it("the override leaves the other settings of the file alone", () => {
    const s = settings({ meshConfigFile: registryOnly }, { DISCO_ENABLE_FALLTHROUGH_ROUTE: "false" });
    assert.deepEqual(s?.mesh, { ...DEFAULT_MESH_SETTINGS, outboundTrafficPolicy: "REGISTRY_ONLY", enableFallthroughRoute: false });
  });

  for (const value of ["TRUE", "False", "1", "yes", " true"]) {
    it(`refuses DISCO_ENABLE_FALLTHROUGH_ROUTE=${JSON.stringify(value)}`, () => {
      assert.throws(() => settings({}, { DISCO_ENABLE_FALLTHROUGH_ROUTE: value }), {
        message: `DISCO_ENABLE_FALLTHROUGH_ROUTE: expected true or false, got ${JSON.stringify(value)}`,
      });
    });
  }

  it("a bad mesh config file is refused with its file and field path", () => {
    const bad = meshFile("bad.yaml", "pathNormalization: {normalization: WHATEVER}\n");
    assert.throws(
      () => settings({ meshConfigFile: bad }),
      (e: unknown) =>
        e instanceof MeshConfigError && e.fieldPath === "pathNormalization.normalization" && e.message.startsWith(`${bad}: pathNormalization.normalization: `),
    );
  });

  it("--meshConfigFile without --caAddress is refused (no meaning without workload certificates)", () => {
    assert.throws(
      () => securitySettings({ meshConfigFile: registryOnly, appPort: 8080 }, {}, "foo"),
      /--meshConfigFile, --gateway and --endpoint need --caAddress/,
    );
    assert.equal(
      securitySettings({ appPort: 8080 }, { DISCO_ENABLE_FALLTHROUGH_ROUTE: "false" }, "foo"),
      undefined,
      "without --caAddress the variable has nothing to override",
    );
  });
});
