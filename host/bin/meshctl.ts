// meshctl: offline analysis and debugging of mesh configuration (spec 3).
import { Command } from "commander";
import { standardProgram } from "../cli/program.ts";
import { registerCommands } from "../cli/meshctl/commands/index.ts";
import { addGlobalFlags } from "../cli/meshctl/global_flags.ts";

const program = standardProgram(new Command("meshctl")).description("Operate the mesh: validate and debug configuration, inspect sidecars");
// Spec 3 global flags, accepted before or after the command name.
addGlobalFlags(program);

const experimental = program.command("experimental").alias("x").description("Experimental commands that may be modified or deprecated");

// Only the modules of the command being run are loaded (see COMMANDS).
await registerCommands(program, experimental, process.argv.slice(2));

await program.parseAsync(process.argv);
