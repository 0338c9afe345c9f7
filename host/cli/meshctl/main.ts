// meshctl's command line, runnable inside any process: the program
// (host/bin/meshctl.ts) runs it with the process's streams, the tests with
// their own, so most of them need not start a Node process per command.
import { Command } from "commander";
import { ProgramExit, standardProgram } from "../../daemon/program.ts";
import { registerCommands } from "./commands/index.ts";
import { addGlobalFlags, globalFlags } from "./global_flags.ts";
import { meshctlLog } from "./log.ts";
import type { MeshctlIo } from "./io.ts";

/**
 * Runs one meshctl command line (`argv`: the words after the program's name)
 * with `io`, and resolves with its exit status: the command's own, 2 for a
 * usage error, 0 after `--help` or `--version`. A fresh commander program
 * each time, so runs share no state.
 */
export async function runMeshctl(argv: readonly string[], io: MeshctlIo): Promise<number> {
  const exit = (code: number): never => {
    throw new ProgramExit(code);
  };
  const program = standardProgram(new Command("meshctl"), { stdout: io.stdout, stderr: io.stderr, exit }).description(
    "Operate the mesh: validate and debug configuration, inspect sidecars",
  );
  // Spec 3 global flags, accepted before or after the command name.
  addGlobalFlags(program, io, exit);
  program.hook("preAction", (_root, action) => {
    const g = globalFlags(action);
    meshctlLog(g.logOutputLevel, io.stderr).debug(
      "default",
      `meshctl ${commandWords(action)}: meshNamespace=${g.meshNamespace} namespace=${g.namespace || "(none)"}`,
    );
  });
  const experimental = program.command("experimental").alias("x").description("Experimental commands that may be modified or deprecated");
  // Only the modules of the command being run are loaded (see COMMANDS).
  await registerCommands(program, experimental, argv, io);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (e) {
    if (e instanceof ProgramExit) return e.code;
    throw e;
  }
  return io.exitCode;
}

function commandWords(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}
