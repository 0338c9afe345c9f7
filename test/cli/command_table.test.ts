// meshctl loads only the command modules a command line names
// (host/cli/meshctl/commands/index.ts): each word of the table must bring its
// command, and a line naming none (help, a typo) must bring them all.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Command } from "commander";
import { COMMANDS, loadersFor, registerCommands } from "../../host/cli/meshctl/commands/index.ts";
import { processIo } from "../../host/cli/meshctl/io.ts";
import { meshctlInProcess } from "./in_process.ts";

async function programFor(args: string[]): Promise<{ program: Command; experimental: Command }> {
  const program = new Command("meshctl");
  const experimental = program.command("experimental").alias("x");
  await registerCommands(program, experimental, args, processIo());
  return { program, experimental };
}

const answersTo = (c: Command, word: string) => c.name() === word || c.aliases().includes(word);
const words = (c: Command) => c.commands.map((s) => s.name());

describe("meshctl's command table", () => {
  for (const word of Object.keys(COMMANDS)) {
    it(`\`${word}\` alone registers the command it names (top-level or under experimental), and not all of them`, async () => {
      const { program, experimental } = await programFor([word]);
      assert.ok(
        [...program.commands, ...experimental.commands].some((c) => answersTo(c, word)),
        `${word}: not registered`,
      );
      assert.ok(loadersFor([word]).length < new Set(Object.values(COMMANDS)).size);
    });
  }

  for (const word of Object.keys(COMMANDS)) {
    it(`\`${word} --help\` prints the command's usage, exit 0`, async () => {
      const { experimental } = await programFor([word]);
      const args = [...(experimental.commands.some((c) => answersTo(c, word)) ? ["x"] : []), word, "--help"];
      const r = await meshctlInProcess(args);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^Usage: meshctl /, args.join(" "));
    });
  }

  it("a command line naming no command (--help, help, a typo) registers every command, in the table's order", async () => {
    const all = await programFor(["--help"]);
    for (const word of Object.keys(COMMANDS)) {
      assert.ok(
        [...all.program.commands, ...all.experimental.commands].some((c) => answersTo(c, word)),
        `${word}: not registered`,
      );
    }
    assert.deepEqual(loadersFor(["valdiate"]), loadersFor([]));
    // What `meshctl --help` lists first: the table's top-level commands, in order, before the orchestrator-only ones.
    assert.deepEqual(words(all.program).slice(0, 10), [
      "experimental",
      "validate",
      "version",
      "orch-inject",
      "convert-ingress",
      "analyze",
      "authn",
      "authz",
      "manifest",
      "proxy-config",
    ]);
  });

  it("global flags and their values around the command do not change what is loaded", async () => {
    assert.deepEqual(loadersFor(["-n", "foo", "x", "simulate", "-f", "a.json"]), loadersFor(["simulate"]));
    assert.deepEqual(loadersFor(["pc", "listeners"]), loadersFor(["proxy-config"]));
    const { experimental } = await programFor(["-i", "mesh-system", "x", "hub-eval"]);
    assert.ok(experimental.commands.some((c) => answersTo(c, "hub-eval")));
  });
});
