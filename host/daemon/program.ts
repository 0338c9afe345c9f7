import { type Command, CommanderError } from "commander";
import { EXIT_BAD_CONFIG, EXIT_OK } from "./exit_codes.ts";
import { buildInfo } from "./version.ts";

/**
 * Exit code when stdout's reader went away (`meshctl … | head`): the status
 * of a Unix program killed by SIGPIPE, which is what upstream's Go programs
 * end with. Nothing is printed.
 */
export const EXIT_BROKEN_PIPE = 141;

/** Thrown by a program's `exit` when it runs inside another process (meshctl's `runMeshctl`): the status it would exit with. */
export class ProgramExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Where a program writes and how it ends: the process's streams and `process.exit` unless a caller runs it in-process. */
export interface ProgramOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  exit(code: number): never;
}

/**
 * The conventions every program of the project follows (docs/daemon-reference.md
 * "Conventions"), applied to a commander program before its commands are
 * added (subcommands inherit them):
 * - a usage error or a bad flag value prints one line naming the flag on
 *   stderr and exits 2 (`EXIT_BAD_CONFIG`); `--help` exits 0;
 * - `--version` prints the version (as `version -s` does);
 * - a closed stdout (EPIPE) ends the program quietly with 141 (when it
 *   writes to the process's own streams).
 */
export function standardProgram(program: Command, output?: ProgramOutput): Command {
  if (!output) handleBrokenPipe();
  const out = output ?? { stdout: process.stdout, stderr: process.stderr, exit: (code: number): never => process.exit(code) };
  return program
    .version(buildInfo().version, "--version", "print the version and exit")
    .showHelpAfterError(false)
    .configureOutput({
      writeOut: (text) => void out.stdout.write(text),
      writeErr: (text) => void out.stderr.write(text),
      // commander's messages are one line already; the hint keeps it one line
      outputError: (text, write) => write(`${text.trimEnd()} (see --help)\n`),
    })
    .exitOverride((err: CommanderError) => {
      const ok = err.exitCode === 0 || err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help";
      return out.exit(ok ? EXIT_OK : EXIT_BAD_CONFIG);
    });
}

let pipeHandled = false;

/** Installs (once) the quiet end on EPIPE for stdout and stderr. */
export function handleBrokenPipe(): void {
  if (pipeHandled) return;
  pipeHandled = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(EXIT_BROKEN_PIPE);
      throw e;
    });
  }
}

/**
 * A usage error found after parsing (a flag's value that only makes sense
 * with others, a variable that is not applicable): one line on stderr, exit 2.
 */
export function usageError(program: string, message: string): never {
  process.stderr.write(`${program}: ${message}\n`);
  process.exit(EXIT_BAD_CONFIG);
}
