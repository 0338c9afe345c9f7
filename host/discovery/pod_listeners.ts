import { type EnvoyServing, withOutboundListeners } from "./envoy_sidecar.ts";
import type { SplitListener } from "./envoy_outbound.ts";
import type { Resource } from "./resource_set.ts";
import { LISTENER } from "./type_urls.ts";

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

function sameTemplates(a: readonly SplitListener[], b: readonly SplitListener[]): boolean {
  return a.length === b.length && a.every((t, i) => t.name === b[i].name && sameBytes(t.head, b[i].head) && sameBytes(t.tail, b[i].tail));
}

/**
 * The outbound listeners of one version of the mesh (`templates`, encoded on
 * first use) and each pod's copy of them with its loop guard spliced in
 * (withOutboundListeners), encoded once per pod address. When the templates
 * are the same bytes as the version before's, a pod's listeners are that
 * version's objects: a change elsewhere (one service's endpoints) neither
 * re-encodes nor re-digests any pod's listeners, and they read as unchanged.
 * Only the pods served in a version are carried on to the next, so a pod
 * gone is forgotten after one version.
 */
export class PodListeners {
  private readonly byPod = new Map<string, ReadonlyMap<string, Resource>>();
  private built: readonly SplitListener[] | undefined;
  private before: PodListeners | undefined;
  private carried: ReadonlyMap<string, ReadonlyMap<string, Resource>> | undefined;

  constructor(
    private readonly build: () => readonly SplitListener[],
    private readonly serving: EnvoyServing,
    previous?: PodListeners,
  ) {
    this.before = previous;
  }

  templates(): readonly SplitListener[] {
    return (this.built ??= this.build());
  }

  /** The outbound listeners of a pod (podAddress "": no loop guard), by name. */
  of(podAddress: string): ReadonlyMap<string, Resource> {
    if (this.before) {
      // Compared once, on first use; the version before is then let go (only its pods' listeners are kept).
      if (this.before.built && sameTemplates(this.before.built, this.templates())) this.carried = this.before.byPod;
      this.before = undefined;
    }
    let listeners = this.byPod.get(podAddress) ?? this.carried?.get(podAddress);
    listeners ??= withOutboundListeners(new Map(), this.templates(), this.serving, podAddress ? [podAddress] : []).get(LISTENER)!;
    this.byPod.set(podAddress, listeners);
    return listeners;
  }
}
