import { type Command, Option } from "commander";
import { EXIT_UNAVAILABLE } from "../../../daemon/exit_codes.ts";
import { parseBoolFlag } from "../../../daemon/flags.ts";
import { addVersionCommand, buildInfo } from "../../../daemon/version.ts";
import type { MeshctlIo } from "../io.ts";

/** What `version --remote` says: meshctl has no control plane to ask. */
export const NO_CONTROL_PLANE =
  "meshctl version: --remote: no control plane is reachable from here (meshctl works on files and running sidecars); only the client version is shown";

/** `meshctl version [-o json|yaml] [-s] [--remote]`. */
export function registerVersion(program: Command, _experimental: Command, io: MeshctlIo): void {
  addVersionCommand(program, () => buildInfo(io.env), io.stdout)
    .addOption(
      new Option("--remote [bool]", "also ask the control plane for its version; use --remote=false to skip (default)").argParser(parseBoolFlag).default(false),
    )
    .hook("postAction", (command) => {
      if ((command.opts() as { remote: boolean }).remote) {
        io.stderr.write(`${NO_CONTROL_PLANE}\n`);
        io.exitCode = EXIT_UNAVAILABLE;
      }
    });
}
