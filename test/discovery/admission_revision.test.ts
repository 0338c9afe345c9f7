import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeInjectionSettings } from "../../host/inject/settings.ts";
import { discoveryVariables } from "../../host/daemon/spec_surface/disco_discovery.ts";
import { REVISION_LABEL, inject } from "../../host/discovery/admission.ts";

// REVISION: the injection webhook of a control plane with a revision injects
// the pods labelled mesh.io/rev: <revision> only; one without a revision the
// pods without that label (upstream selects the revision's webhook by its
// istio.io/rev label; a review carries the pod's labels, so they decide).

const settings = decodeInjectionSettings({}, []);
const review = (labels: Record<string, string>) => ({
  uid: "u",
  kind: { kind: "Pod" },
  namespace: "demo",
  object: { apiVersion: "v1", kind: "Pod", metadata: { name: "app", labels }, spec: { containers: [{ name: "app", image: "app:1" }] } },
});

describe("REVISION and the injection webhook", () => {
  it("a revision injects its own pods, skips the others with the reason", () => {
    assert.equal(inject(review({ [REVISION_LABEL]: "canary" }), settings, "canary").outcome, "success");
    const unlabelled = inject(review({}), settings, "canary");
    assert.deepEqual(
      [unlabelled.outcome, unlabelled.reason, unlabelled.response.patch],
      ["skip", "the pod has no label mesh.io/rev: canary (REVISION=canary injects its revision's pods only)", undefined],
    );
    assert.equal(
      inject(review({ [REVISION_LABEL]: "stable" }), settings, "canary").reason,
      'the pod selects revision "stable" (label mesh.io/rev), not this control plane\'s "canary"',
    );
  });

  it("without a revision, pods that select one are left to it", () => {
    assert.equal(inject(review({ app: "x" }), settings).outcome, "success");
    const other = inject(review({ [REVISION_LABEL]: "canary" }), settings);
    assert.deepEqual([other.outcome, other.response.allowed], ["skip", true]);
    assert.match(other.reason!, /selects revision "canary".*REVISION unset/);
  });

  it("REVISION is read as a DNS-1123 label; anything else names the variable", () => {
    assert.equal(discoveryVariables({ REVISION: "canary" }).revision, "canary");
    assert.equal(discoveryVariables({}).revision, undefined);
    assert.throws(() => discoveryVariables({ REVISION: "Canary_1" }), /^Error: REVISION="Canary_1": expected a revision name/);
  });
});
