import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SafetyNet } from "../../host/daemon/safety_net.ts";

// The policy of the process-wide safety net (issue 25), in process; the
// agent under it is tested through a real process in test/e2e/safety_net.test.ts.

function net() {
  const lines: string[] = [];
  const exits: number[] = [];
  const n = new SafetyNet({ error: (m) => lines.push(`error ${m}`), fatal: (m) => lines.push(`fatal ${m}`) }, (code) => exits.push(code));
  return { n, lines, exits };
}

describe("SafetyNet", () => {
  it("an error escaping a request's callbacks ends that request, is logged with its stack and counted; the process goes on", async () => {
    const { n, lines, exits } = net();
    const ended: unknown[] = [];
    await new Promise<void>((resolve) => {
      n.run({ listener: "inbound", end: (e) => ended.push(e) }, () => {
        setImmediate(() => {
          // What the process hook receives for a throw in this callback.
          n.handle(new Error("boom"), "uncaught exception");
          resolve();
        });
      });
    });
    assert.equal(n.caught, 1);
    assert.equal(ended.length, 1);
    assert.deepEqual(exits, []);
    assert.match(lines[0], /^error inbound: uncaught exception in a request path, request ended, serving on \(1 so far\): Error: boom\n\s+at /);
  });

  it("a rejection carries the request's mark through promises", async () => {
    const { n, exits } = net();
    let ended = 0;
    await n.run({ listener: "outbound", end: () => ended++ }, async () => {
      await Promise.resolve();
      n.handle("not an Error", "unhandled rejection");
    });
    assert.equal(ended, 1);
    assert.equal(n.caught, 1);
    assert.deepEqual(exits, []);
  });

  it("an error outside any request ends the process with exit code 1, logged as fatal", () => {
    const { n, lines, exits } = net();
    n.handle(new Error("start-up bug"), "uncaught exception");
    assert.deepEqual(exits, [1]);
    assert.equal(n.caught, 0);
    assert.match(lines[0], /^fatal uncaught exception outside any request: Error: start-up bug/);
  });

  it("a request whose ending throws does not take the net down", () => {
    const { n, exits } = net();
    n.run(
      {
        listener: "inbound",
        end: () => {
          throw new Error("already gone");
        },
      },
      () => n.handle(new Error("x"), "uncaught exception"),
    );
    assert.equal(n.caught, 1);
    assert.deepEqual(exits, []);
  });
});
