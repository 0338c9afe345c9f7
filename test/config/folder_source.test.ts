import assert from "node:assert/strict";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { ConfigDirWatcher, type LoadedConfig } from "../../host/config/config_dir.ts";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { DEMO_SERVICE, HUB_RULES, get, sidecarConfig, stats } from "../e2e/sidecar_support.ts";
import { checkRequest, type HubProcess, metricsText, metricValue, startHub } from "../hubs/support/hub_process.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";

// The one folder source (host/config/folder_source.ts) in each of its three
// daemons, with real files and real processes: a file that stops decoding
// keeps its last good version while the folder's other files still update,
// and a removed file is removed. (Before issue 29 the sidecar and
// disco-discovery refused the whole folder while any file was bad.)

/** Written beside and renamed into place, as an orchestrator swaps a ConfigMap: the watcher never reads a half-written file. */
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

const policy = (name: string, path: string, action = "DENY") =>
  `apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: ${name}, namespace: demo}\nspec:\n  action: ${action}\n  rules: [{to: [{operation: {paths: ["${path}"]}}]}]\n`;

const CHECKS_OFF = `  serviceConfigs:\n    ${DEMO_SERVICE}: {disableCheckCalls: true}\n`;

describe("folder source: the sidecar's --configDir (disco-agent proxy)", () => {
  let mesh: LocalMesh;
  before(async () => {
    mesh = await startLocalMesh({ hubConfig: HUB_RULES, sidecarConfig: sidecarConfig("FAIL_CLOSE") });
  });
  after(async () => {
    await mesh?.stop();
  });

  const policies = async () => {
    const dump = JSON.parse((await get(`${mesh.adminUrl}/config_dump`)).body);
    const list = (dump.configuration.resources.AuthorizationPolicy ?? []) as Array<{ name: string; spec: { rules: Array<{ to: unknown }> } }>;
    return new Map(list.map((p) => [p.name, JSON.stringify(p.spec.rules)]));
  };

  it("a file that stops decoding keeps its last good version; the other files still update; a removed file is removed", async () => {
    const extra = join(mesh.sidecarConfigDir, "extra.yaml");
    replaceFile(extra, policy("extra", "/first"));
    const good = await waitFor("extra.yaml applied", async () => ((await policies()).get("extra")?.includes("/first") ? await policies() : undefined));
    assert.equal((await get(`${mesh.inboundUrl}/admin/users`)).status, 403, "the hub is asked and denies");

    const errors = (await stats(mesh.adminUrl)).get("config.errors") ?? 0;
    replaceFile(extra, policy("extra", "/second", "MAYBE"));
    await waitFor("the bad file counted", async () => (((await stats(mesh.adminUrl)).get("config.errors") ?? 0) > errors ? true : undefined));
    await waitFor("the refusal logged", () =>
      /extra\.yaml: AuthorizationPolicy demo\/extra: spec\.action: .*; keeping its last good version/.test(mesh.sidecar.output()) ? true : undefined,
    );
    assert.deepEqual(await policies(), good, "extra.yaml's last good version stays in force");

    // Another file changes while extra.yaml is still bad: the change applies.
    replaceFile(join(mesh.sidecarConfigDir, "config.yaml"), sidecarConfig("FAIL_CLOSE", CHECKS_OFF));
    await waitFor("config.yaml's change enforced", async () => ((await get(`${mesh.inboundUrl}/admin/users`)).status === 200 ? true : undefined));
    assert.equal((await policies()).get("extra"), good.get("extra"), "still extra.yaml's last good version");

    rmSync(extra);
    await waitFor("extra.yaml's policy gone", async () => ((await policies()).has("extra") ? undefined : true));
    assert.equal((await get(`${mesh.inboundUrl}/admin/users`)).status, 200, "the rest of the folder stays in force");
  });
});

interface DiscoveryListening {
  grpc: string;
  http: string;
  monitoring: string;
}

describe("folder source: disco-discovery's --configDir", () => {
  const dir = tempDir("disco-folder-");
  let disco: Daemon<DiscoveryListening>;
  before(async () => {
    writeFileSync(join(dir, "a.yaml"), policy("a", "/a"));
    writeFileSync(join(dir, "b.yaml"), policy("b", "/b"));
    disco = await startDaemon<DiscoveryListening>(
      DISCOVERY_BIN,
      ["discovery", "--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--httpAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0"].concat([
        "--secureGrpcAddr",
        "",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ]),
      "disco-discovery listening: ",
    );
  });
  after(async () => {
    await disco?.stop();
  });

  /** The configuration disco-discovery serves: each AuthorizationPolicy's paths by name. */
  const served = async () => {
    const configz = JSON.parse((await get(`http://${disco.listening.http}/debug/configz`)).body) as {
      resources: Array<{ kind: string; name: string; spec: unknown }>;
    };
    return new Map(configz.resources.filter((r) => r.kind === "AuthorizationPolicy").map((r) => [r.name, JSON.stringify(r.spec)]));
  };

  it("a file that stops decoding keeps its last good version; the other files still update; a removed file is removed", async () => {
    const first = await served();
    assert.deepEqual([...first.keys()].sort(), ["a", "b"]);
    assert.match(first.get("a")!, /"\/a"/);

    const rejected = async () => metricValue((await get(`http://${disco.listening.monitoring}/metrics`)).body, "disco_total_rejected_configs_total") ?? 0;
    const before = await rejected();
    replaceFile(join(dir, "a.yaml"), policy("a", "/a2", "MAYBE"));
    await waitFor("a.yaml refused and counted", async () => ((await rejected()) > before ? true : undefined));
    assert.match(disco.output(), /a\.yaml: AuthorizationPolicy demo\/a: spec\.action: .*; keeping its last good version/);
    assert.equal((await served()).get("a"), first.get("a"), "a.yaml's last good version is still served");

    replaceFile(join(dir, "b.yaml"), policy("b", "/b2"));
    const next = await waitFor("b.yaml's change served", async () => ((await served()).get("b")?.includes('"/b2"') ? await served() : undefined));
    assert.equal(next.get("a"), first.get("a"), "still a.yaml's last good version");

    rmSync(join(dir, "b.yaml"));
    await waitFor("b.yaml's policy gone", async () => ((await served()).has("b") ? undefined : true));

    replaceFile(join(dir, "a.yaml"), policy("a", "/a3"));
    await waitFor("a.yaml fixed and served", async () => ((await served()).get("a")?.includes('"/a3"') ? true : undefined));
  });
});

const denyRule = (name: string, path: string) =>
  `apiVersion: config.mesh.io/v1alpha2\nkind: HubRule\nmetadata: {name: ${name}}\nspec:\n  match: [{clause: {request.path: {exact: "${path}"}}}]\n  actions: [{deny: {code: PERMISSION_DENIED, message: ${name}}}]\n`;

describe("folder source: the hub's fs:// config store (hubs server)", () => {
  const dir = tempDir("hubs-folder-");
  let hub: HubProcess;
  before(async () => {
    writeFileSync(join(dir, "a.yaml"), denyRule("deny-a", "/a"));
    writeFileSync(join(dir, "b.yaml"), denyRule("deny-b", "/b"));
    hub = await startHub(["--configStoreURL", `fs://${dir}`, "--configDefaultNamespace", "ops"]);
  });
  after(async () => {
    await hub?.stop();
  });

  const denied = async (path: string) => (await hub.client.check(checkRequest({ "request.path": path }))).response!.precondition.status?.message;

  it("a file that stops decoding keeps its last good version; the other files still update; a removed file is removed", async () => {
    assert.equal(await denied("/a"), "deny-a");
    assert.equal(await denied("/b"), "deny-b");

    replaceFile(join(dir, "a.yaml"), denyRule("deny-a", "/a2").replace("exact:", "exactly:"));
    await waitFor("the bad file counted", async () => (metricValue(await metricsText(hub), "hub_config_rule_config_errors_total") === 1 ? true : undefined));
    assert.equal(await denied("/a"), "deny-a", "a.yaml's last good version is in force");

    replaceFile(join(dir, "b.yaml"), denyRule("deny-b", "/b2"));
    await waitFor("b.yaml's change applied", async () => ((await denied("/b2")) === "deny-b" ? true : undefined));
    assert.equal(await denied("/a"), "deny-a", "still a.yaml's last good version");

    rmSync(join(dir, "b.yaml"));
    await waitFor("b.yaml's rule gone", async () => ((await denied("/b2")) === undefined ? true : undefined));
    assert.equal(await denied("/a"), "deny-a");

    rmSync(join(dir, "a.yaml"));
    await waitFor("the bad file's error gone with it", async () =>
      metricValue(await metricsText(hub), "hub_config_rule_config_errors_total") === 0 ? true : undefined,
    );
    assert.equal(await denied("/a"), undefined, "a removed file is removed, its last good version too");
  });
});

const apiSpec = (name: string, path: string) =>
  `apiVersion: config.mesh.io/v1alpha2\nkind: HTTPAPISpec\nmetadata: {name: ${name}, namespace: demo}\nspec:\n  patterns: [{httpMethod: GET, uriTemplate: "${path}"}]\n`;
const binding = (spec: string) =>
  `apiVersion: config.mesh.io/v1alpha2\nkind: HTTPAPISpecBinding\nmetadata: {name: petstore, namespace: demo}\nspec: {services: [{name: petstore}], apiSpecs: [{name: ${spec}}]}\n`;

describe("folder source: files that must agree (the sidecar's hub client resources)", () => {
  it("a binding may name a spec of another file; a change that breaks the reference is held back, the others apply", async () => {
    const dir = tempDir("folder-agree-");
    writeFileSync(join(dir, "binding.yaml"), binding("petstore"));
    writeFileSync(join(dir, "spec.yaml"), apiSpec("petstore", "/pets/{id}"));
    const applied: LoadedConfig[] = [];
    const refused: string[] = [];
    const watcher = new ConfigDirWatcher(
      dir,
      filterChecks(FilterModule.load()),
      DEFAULT_DOMAIN,
      (c) => applied.push(c) > 0,
      (p) => refused.push(p),
    );
    const templates = () => applied.at(-1)!.bundle.resources.flatMap((r) => (r.kind === "HTTPAPISpec" ? r.spec.patterns.map((p) => p.uriTemplate) : []));
    try {
      assert.equal(watcher.start(), true, "the files agree: one configuration from both");
      assert.deepEqual(templates(), ["/pets/{id}"]);

      // spec.yaml renames its spec: alone it decodes, but the binding would name nothing.
      replaceFile(join(dir, "spec.yaml"), apiSpec("renamed", "/v2/pets/{id}"));
      await waitFor("the change held back", () => (refused.length > 0 ? true : undefined));
      assert.match(refused[0], /binding\.yaml: HTTPAPISpecBinding demo\/petstore: spec\.apiSpecs\[0\].*; keeping .*spec\.yaml's last good version/);
      assert.deepEqual(templates(), ["/pets/{id}"], "spec.yaml's last good version stays");

      // Another file's change still applies while spec.yaml is held back.
      const before = applied.length;
      writeFileSync(join(dir, "extra.yaml"), apiSpec("extra", "/extra"));
      await waitFor("extra.yaml applied", () => (applied.length > before ? true : undefined));
      assert.deepEqual(templates().sort(), ["/extra", "/pets/{id}"]);

      // The binding follows the rename: both changes now agree and apply.
      replaceFile(join(dir, "binding.yaml"), binding("renamed"));
      await waitFor("the renamed spec applied", () => (templates().includes("/v2/pets/{id}") ? true : undefined));
    } finally {
      watcher.stop();
    }
  });
});
