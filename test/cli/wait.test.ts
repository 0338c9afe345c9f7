import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { AGENT_BIN, DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import type { SyncedVersion } from "../../host/discovery/distribution.ts";
import { CONFIG_DOCUMENT } from "../../host/discovery/type_urls.ts";
import { type AdsResponse, RawAdsClient } from "../discovery/support/raw_ads_client.ts";
import { type Daemon, startDaemon, tempDir, waitFor } from "../support/processes.ts";
import { meshctlAsync } from "./sidecar_cli_support.ts";

// `meshctl x wait` against real processes: a disco-discovery daemon, two of
// our sidecars configured only by --discoveryAddress, and a hand-spoken ADS
// client that NACKs every change. A change in the control plane's folder is
// waited for until both sidecars have ACKed it; the NACKing client keeps a
// full distribution from happening (upstream's timeout message), a threshold
// below its share lets the wait succeed; `--for delete` waits for removal.

const RESOURCE = "AuthorizationPolicy/demo/deny";

const policy = (path: string) => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: demo}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["${path}"]}}]}]
`;

const OTHER = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: allow-all, namespace: demo}
spec: {action: ALLOW, rules: [{}]}
`;

interface DiscoveryListening {
  grpc: string;
  http: string;
}

describe("meshctl x wait: distribution of a resource to the proxies of disco-discovery", async () => {
  const dir = tempDir("wait-config-");
  let disco: Daemon<DiscoveryListening>;
  const sidecars: Array<Daemon<unknown>> = [];
  let client: grpc.Client | undefined;
  let nacker: RawAdsClient | undefined;
  let nacking = false;
  const wait = (...args: string[]) => meshctlAsync(["x", "wait", "--debugAddress", disco.listening.http, ...args]);
  const distribution = async (): Promise<SyncedVersion[]> =>
    (await fetch(`http://${disco.listening.http}/debug/config_distribution?resource=${RESOURCE}`)).json() as Promise<SyncedVersion[]>;
  const currentVersion = async (): Promise<string | undefined> => {
    const configz = (await (await fetch(`http://${disco.listening.http}/debug/configz`)).json()) as {
      resources: Array<{ kind: string; namespace: string; name: string; resourceVersion: string }>;
    };
    return configz.resources.find((r) => `${r.kind}/${r.namespace}/${r.name}` === RESOURCE)?.resourceVersion;
  };

  before(async () => {
    writeFileSync(join(dir, "policy.yaml"), policy("/admin"));
    writeFileSync(join(dir, "other.yaml"), OTHER);
    disco = await startDaemon<DiscoveryListening>(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        dir,
        "--grpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "",
        "--secureGrpcAddr",
        "",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_DEBOUNCE_AFTER: "100ms" },
    );
    for (const name of ["petstore-v1", "petstore-v2"]) {
      sidecars.push(
        await startDaemon(
          AGENT_BIN,
          [
            "proxy",
            "--inboundPort",
            "0",
            "--outboundPort",
            "0",
            "--proxyAdminPort",
            "0",
            "--appPort",
            "9",
            "--discoveryAddress",
            disco.listening.grpc,
            "--controlPlaneAuthPolicy",
            "NONE",
          ],
          "disco-agent listening ",
          undefined,
          {
            ...process.env,
            POD_NAME: name,
            POD_NAMESPACE: "demo",
          },
        ),
      );
    }
    await waitFor("both sidecars' ACK", async () => (await distribution()).filter((p) => p.State === "present").length === 2);
  });
  after(async () => {
    nacker?.stream.cancel();
    client?.close();
    await Promise.all([...sidecars.map((s) => s.stop()), disco?.stop()]);
  });

  it("exits 0 once both sidecars have the current version, with upstream's message", async () => {
    const run = await wait("--for", "distribution", "authorizationpolicy", "deny.demo", "--timeout", "60s");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `Resource ${RESOURCE} present on 2 out of 2 sidecars\n`);
    const rows = await distribution();
    assert.deepEqual(
      rows.map((r) => r.ResourceVersion),
      [await currentVersion(), await currentVersion()],
    );
    assert.ok(
      rows.every((r) => r.DocumentVersion === r.ResourceVersion && r.Generation === 1),
      JSON.stringify(rows),
    );
  });

  it("a change in the folder is waited for until both sidecars ACK it (namespace from -n, kind with dashes)", async () => {
    const before = await currentVersion();
    writeFileSync(join(dir, "policy.yaml"), policy("/secret"));
    const changed = await waitFor("the change in disco-discovery's configuration", async () => {
      const now = await currentVersion();
      return now !== before ? now : undefined;
    });
    const run = await wait("authorization-policy", "deny", "-n", "demo", "--timeout", "60s");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `Resource ${RESOURCE} present on 2 out of 2 sidecars\n`);
    const rows = await distribution();
    assert.deepEqual(
      rows.map((r) => [r.ResourceVersion, r.Generation]),
      [
        [changed, 2],
        [changed, 2],
      ],
    );
  });

  it("a proxy that NACKs the change keeps a full distribution from happening: timeout, upstream's message, exit 1; --threshold below its share succeeds", async () => {
    client = new grpc.Client(disco.listening.grpc, grpc.credentials.createInsecure());
    nacker = new RawAdsClient(client, { id: "sidecar~10.0.0.9~nacker.demo~demo.svc.cluster.local", user_agent_name: "disco-agent" });
    nacker.send({ type_url: CONFIG_DOCUMENT });
    nacker.ack(await nacker.next());
    void (async () => {
      for (;;) {
        let r: AdsResponse;
        try {
          r = await nacker!.next();
        } catch {
          return;
        }
        if (nacking)
          nacker!.send({ type_url: r.type_url, version_info: "", response_nonce: r.nonce, error_detail: { code: 3, message: "refused by the test" } });
        else nacker!.ack(r);
      }
    })();
    await waitFor("the NACKing client's ACK", async () => (await distribution()).filter((p) => p.State === "present").length === 3);
    nacking = true;
    const old = await currentVersion();
    writeFileSync(join(dir, "policy.yaml"), policy("/private"));
    await waitFor("the change in disco-discovery's configuration", async () => {
      const now = await currentVersion();
      return now !== undefined && now !== old;
    });

    const started = Date.now();
    const timedOut = await wait("authorizationpolicy", "deny.demo", "--timeout", "3s");
    assert.equal(timedOut.status, 1, timedOut.stdout);
    assert.equal(timedOut.stdout, "");
    const [message, detail] = timedOut.stderr.split("\n");
    assert.equal(message, `Error: timeout expired before resource ${RESOURCE} became effective on all sidecars`);
    assert.match(
      detail,
      new RegExp(`^  2 out of 3 sidecars; not yet: sidecar~10\\.0\\.0\\.9~nacker\\.demo~demo\\.svc\\.cluster\\.local \\(present ${old!}, generation 2\\)$`),
    );
    assert.ok(Date.now() - started >= 3000, "waited the whole timeout");

    const enough = await wait("authorizationpolicy", "deny.demo", "--threshold", "0.6", "--timeout", "60s");
    assert.equal(enough.status, 0, enough.stderr);
    assert.equal(enough.stdout, `Resource ${RESOURCE} present on 2 out of 3 sidecars\n`);
    // The version the NACKing client still holds is there for whoever asks for it.
    const pinned = await wait("authorizationpolicy", "deny.demo", "--resource-version", old!, "--threshold", "0.3", "--timeout", "60s");
    assert.equal(pinned.status, 0, pinned.stderr);
    assert.equal(pinned.stdout, `Resource ${RESOURCE} present on 1 out of 3 sidecars\n`);
    const generation = await wait("authorizationpolicy", "deny.demo", "--generation", "3", "--timeout", "60s", "--threshold", "0.6");
    assert.equal(generation.status, 0, generation.stderr);
  });

  it("--for delete waits until the resource is gone from the proxies", async () => {
    rmSync(join(dir, "policy.yaml"));
    const run = await wait("authorizationpolicy", "deny.demo", "--for", "delete", "--threshold", "0.6", "--timeout", "60s");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `Resource ${RESOURCE} removed from 2 out of 3 sidecars\n`);
    const full = await wait("authorizationpolicy", "deny.demo", "--for", "delete", "--timeout", "2s");
    assert.equal(full.status, 1);
    assert.match(full.stderr, new RegExp(`^Error: timeout expired before resource ${RESOURCE} was removed from all sidecars\n`));
  });

  it("usage errors exit 2 naming the problem; an unreachable disco-discovery exits 1", async () => {
    const badFor = await wait("authorizationpolicy", "deny.demo", "--for", "ready");
    assert.equal(badFor.status, 2);
    assert.equal(badFor.stderr, "Error: meshctl x wait: --for must be 'delete' or 'distribution', got: ready\n");
    const badType = await wait("gizmo", "deny.demo");
    assert.equal(badType.status, 2);
    assert.equal(badType.stderr, "Error: meshctl x wait: type gizmo is not recognized\n");
    const missing = await wait("authorizationpolicy", "nothing.demo", "--timeout", "1s");
    assert.equal(missing.status, 1);
    assert.equal(
      missing.stderr,
      "Error: unable to retrieve resource AuthorizationPolicy/demo/nothing: disco-discovery's configuration (/debug/configz) has no such resource\n",
    );
    const down = await meshctlAsync(["x", "wait", "authorizationpolicy", "deny.demo", "--debugAddress", "127.0.0.1:1"]);
    assert.equal(down.status, 1);
    assert.match(down.stderr, /^Error: unable to query disco-discovery for distribution .*127\.0\.0\.1:1\/debug\/configz: connect ECONNREFUSED/);
  });
});
