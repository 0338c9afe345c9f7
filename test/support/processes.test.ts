// The owner of test and demo processes: process groups, readiness errors, cleanup on exit and on signals.
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startDaemon as startOwnedDaemon } from "../../host/demo/processes.ts";
import { runProcess, spawnOwned, stopOwned, tempDir, waitFor } from "./processes.ts";

const PROCESSES_TS = join(import.meta.dirname, "..", "..", "host", "demo", "processes.ts");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function script(body: string): string {
  const file = join(tempDir("processes-test-"), "daemon.mjs");
  writeFileSync(file, body);
  return file;
}

describe("owned processes", () => {
  it("a daemon that exits before listening: the error names it, its exit code and its last log lines", async () => {
    const file = script(`for (let i = 1; i <= 30; i++) console.error("line " + i); process.exit(3);`);
    await assert.rejects(startOwnedDaemon(file, ["serve"], "daemon listening "), (e: Error) => {
      assert.match(e.message, /^daemon\.mjs serve \(pid \d+\) exited with 3 before listening; its last log lines:\n… \(10 earlier lines\)\nline 11\n/);
      assert.match(e.message, /line 30$/);
      return true;
    });
  });

  it("a daemon that never prints its listening line is killed at the limit, and the error says what it waited for", async () => {
    const file = script(`console.log("starting"); setInterval(() => {}, 1000);`);
    let pid = 0;
    await assert.rejects(startOwnedDaemon(file, [], "daemon listening ", 1000), (e: Error) => {
      assert.match(e.message, /^daemon\.mjs \(pid (\d+)\) did not print "daemon listening" within 1 s; its last log lines:\n(starting|\(none\))$/);
      pid = Number(/pid (\d+)/.exec(e.message)![1]);
      return true;
    });
    await waitFor("the daemon to be gone", () => !alive(pid));
  });

  it("stopping a child stops its whole process group, grandchildren included", async () => {
    const child = spawnOwned("sh", ["-c", "sleep 600 & echo $!; wait"], { stdio: ["ignore", "pipe", "ignore"] });
    const grandchild = await new Promise<number>((resolve) => child.stdout!.once("data", (c: Buffer) => resolve(Number(c.toString().trim()))));
    assert.ok(alive(grandchild));
    await stopOwned(child, "SIGTERM");
    await waitFor("the grandchild to be gone", () => !alive(grandchild));
  });

  for (const [how, code] of [
    ["exits", "process.exit(0)"],
    ["is stopped by SIGTERM with no handler of its own", "process.kill(process.pid, 'SIGTERM')"],
  ] as const) {
    it(`a process that ${how} takes its process groups and temporary folders with it`, async () => {
      const program = `
        const { spawnOwned, ownedTempDir } = await import(${JSON.stringify(PROCESSES_TS)});
        const child = spawnOwned("sleep", ["600"], { stdio: "ignore" });
        console.log(JSON.stringify({ pid: child.pid, dir: ownedTempDir("processes-exit-") }));
        setTimeout(() => { ${code}; }, 100);
        setInterval(() => {}, 1000);`;
      const run = await runProcess(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program]);
      const { pid, dir } = JSON.parse(run.stdout) as { pid: number; dir: string };
      await waitFor("the owned child to be gone", () => !alive(pid));
      assert.equal(existsSync(dir), false, "the temporary folder is removed");
    });
  }
});
