// `meshctl x simulate` makes only the RSA signing keys a file uses
// (host/cli/meshctl/simulate/tokens.ts): each costs a quarter of a second of CPU.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { decodeScenarioFile } from "../../host/cli/meshctl/simulate/scenario.ts";
import { createTokenKeys, tokenKeysNeeded } from "../../host/cli/meshctl/simulate/tokens.ts";

const FIXTURES = join(import.meta.dirname, "fixtures", "simulate");
const scenariosOf = (file: string) => decodeScenarioFile(readFileSync(join(FIXTURES, file), "utf8"), file, []);

describe("simulate: the token keys a file needs", () => {
  it("a file without tokens, placeholders or jwks servers needs none", () => {
    assert.deepEqual([...tokenKeysNeeded(scenariosOf("single.json"))], []);
    assert.deepEqual([...tokenKeysNeeded(scenariosOf("mtls.json"))], []);
  });

  it("the JWT fixtures need key-1 (placeholders, jwks servers, tokens), key-2 and the rogue key (tokens signed by them)", () => {
    assert.deepEqual([...tokenKeysNeeded(scenariosOf("jwt.json"))].sort(), ["key-1", "key-2", "rogue"]);
  });

  it("each kind of token names the key it is signed with", () => {
    const scenario = (token: object) =>
      decodeScenarioFile(
        JSON.stringify({
          workloads: [{ name: "a" }, { name: "b", service: "b", ports: [{ name: "http", servicePort: 80, containerPort: 80 }] }],
          request: { from: "default/a", to: "b.default.svc.cluster.local:80", token },
        }),
        "t.json",
        [],
      );
    assert.deepEqual([...tokenKeysNeeded(scenario({ kind: "valid", key: "key-2" }))], ["key-2"]);
    assert.deepEqual([...tokenKeysNeeded(scenario({ kind: "invalid-signature" }))], ["rogue"]);
    assert.deepEqual([...tokenKeysNeeded(scenario({ kind: "alg-confusion" }))], ["key-1"]);
    assert.deepEqual([...tokenKeysNeeded(scenario({ kind: "alg-none" }))], []);
  });

  it("a key that was not made is an error, never a silently different key", async () => {
    const keys = await createTokenKeys(["key-2"]);
    assert.equal(keys.jwks("key-2").keys[0].kid, "key-2");
    assert.throws(() => keys.jwks("key-1"), /key-1 was not generated/);
  });
});
