import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { HUB_RULES, get, sidecarConfig, stats, waitFor } from "./sidecar_support.ts";

// `disableQuotaCache: true` turns off the caching of quota, not its
// enforcement: as upstream, every quota then rides exactly in a remote check,
// even after a policy-cache hit, so the hub's count is the truth.
describe("sidecar end to end: quota with the quota cache disabled", () => {
  let mesh: LocalMesh;
  before(async () => {
    const config = sidecarConfig("FAIL_CLOSE").replace("  transport:\n", "  transport:\n    disableQuotaCache: true\n");
    assert.ok(config.includes("disableQuotaCache: true"));
    mesh = await startLocalMesh({ hubConfig: HUB_RULES, sidecarConfig: config });
  });
  after(async () => {
    await mesh?.stop();
  });

  it("five requests against a hub quota of 3: three 200, then 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await get(`${mesh.inboundUrl}/limited/0`)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  });

  it("each of those requests asked the hub for its quota: no quota cache hits", async () => {
    const s = await waitFor(
      "published counters",
      async () => {
        const m = await stats(mesh.adminUrl);
        return (m.get("hub_client.total_quota_calls") ?? 0) >= 5 ? m : undefined;
      },
      60_000,
    );
    assert.equal(s.get("hub_client.total_quota_cache_hits"), 0);
    assert.ok(s.get("hub_client.total_remote_quota_calls")! >= 5, JSON.stringify([...s]));
  });
});
