// meshctl run inside the test's own process (host/cli/meshctl/main.ts
// `runMeshctl`): the same command line, files, stdin and environment as the
// built program, its stdout, stderr and exit status read back, without a
// Node start and a bundle load per command (about 0.3 s of CPU each: the
// CLI tests ran hundreds). What only a process shows (the bundle's wiring,
// signals, a closed pipe, the status a process exits with) stays with real
// processes: test/cli/program_conventions.test.ts, simulate's tests.
import { Readable, Writable } from "node:stream";
import type { MeshctlIo } from "../../host/cli/meshctl/io.ts";
import { runMeshctl } from "../../host/cli/meshctl/main.ts";

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface InProcessOptions {
  /** The folder the command runs in (relative paths and the names messages give them); default: the test's. */
  cwd?: string;
  /** Standard input (none: empty, as a child given no input has). */
  input?: string;
  /** The environment; default: the test process's. */
  env?: NodeJS.ProcessEnv;
}

class TextSink extends Writable {
  text = "";
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

// One run at a time: a run changes the process's folder while it lasts.
let queue: Promise<unknown> = Promise.resolve();

/** Runs `meshctl <args>` in-process; resolves with what it printed and its exit status. */
export function meshctlInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<Run> {
  const run = async (): Promise<Run> => {
    const stdout = new TextSink();
    const stderr = new TextSink();
    const input = options.input ?? "";
    const io: MeshctlIo = {
      stdout,
      stderr,
      stdin: () => Readable.from(input.length > 0 ? [Buffer.from(input)] : [], { objectMode: false }),
      stdinText: () => input,
      env: options.env ?? process.env,
      exitCode: 0,
    };
    const back = process.cwd();
    process.chdir(options.cwd ?? back);
    try {
      const status = await runMeshctl(args, io);
      return { status, stdout: stdout.text, stderr: stderr.text };
    } finally {
      process.chdir(back);
    }
  };
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}
