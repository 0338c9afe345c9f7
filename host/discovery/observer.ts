import type { AdsObserver } from "./ads_server.ts";
import type { MeshSnapshot } from "./mesh_snapshot.ts";

/** What happens in the control plane: stream events, and the configuration's changes and refusals. */
export interface DiscoveryObserver extends AdsObserver {
  /** A push was triggered (`reason`: `config`) for `changes` configuration versions. */
  pushed?(reason: string, changes: number): void;
  /** A configuration change was refused (the last good one stays). */
  rejected?(problem: string): void;
  /** A new configuration version. */
  snapshot?(s: MeshSnapshot): void;
}
