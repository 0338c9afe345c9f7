import { readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";

/**
 * What a meshctl command reads, writes and ends with. The program uses the
 * process's own (`processIo`); a caller that runs meshctl inside its own
 * process (the tests, `runMeshctl`) passes its streams and environment and
 * reads `exitCode` afterwards. Commands never touch `process.stdout`,
 * `process.stderr`, `process.stdin`, `process.env` or `process.exitCode`.
 */
export interface MeshctlIo {
  readonly stdout: Writable & { readonly isTTY?: boolean };
  readonly stderr: Writable;
  /** Standard input as a stream (`x hub-eval` reads request lines as they come). */
  stdin(): Readable;
  /** All of standard input as text (`-` among a command's files). */
  stdinText(): string;
  readonly env: NodeJS.ProcessEnv;
  /** The status the command ends with: commands set it, `runMeshctl` returns it. */
  exitCode: number;
}

/** The process's streams and environment (stdin is opened only when a command reads it). */
export function processIo(): MeshctlIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: () => process.stdin,
    stdinText: () => readFileSync(0, "utf8"),
    env: process.env,
    exitCode: 0,
  };
}
