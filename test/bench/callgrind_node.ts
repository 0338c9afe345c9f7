// Node programs counted by callgrind (the *_callgrind.ts benches): how they
// are started, and how a dump's total is read.
import { readFileSync } from "node:fs";
import { type Daemon, startProgram } from "../../host/demo/processes.ts";

/** How long a daemon under valgrind (~50× slower) may take to listen. */
const READY_UNDER_CALLGRIND_MS = 300_000;

/**
 * `node <script> <args>` as a daemon under `valgrind --tool=callgrind`, one
 * dump file per thread in `out` (`callgrind.out.<pid>…`), counting nothing
 * until `callgrind_control --instr=on`: a warm-up runs several times faster
 * uninstrumented, and V8 has then tiered up what it will. Node runs with
 * V8's --single-threaded: no background compiler or GC threads, so V8
 * compiles and collects on the main thread when the same execution asks for
 * it and the count repeats (with them, two runs of one build differed by
 * 20 %). `nodeFlags` go before the script.
 */
export function startUnderCallgrind<T>(
  script: string,
  args: readonly string[],
  out: string,
  prefix: string,
  options: { nodeFlags?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<Daemon<T>> {
  return startProgram<T>({
    name: `${script} under callgrind`,
    command: "valgrind",
    args: [
      "--tool=callgrind",
      "--separate-threads=yes",
      "--instr-atstart=no",
      `--callgrind-out-file=${out}/callgrind.out.%p`,
      process.execPath,
      "--single-threaded",
      ...(options.nodeFlags ?? []),
      script,
      ...args,
    ],
    prefix,
    timeoutMs: READY_UNDER_CALLGRIND_MS,
    env: options.env,
  });
}

/** The instructions a callgrind dump counted (its `totals:` or `summary:` line); 0 when it has none. */
export function dumpTotal(dump: string): number {
  return Number(/^(?:totals|summary): (\d+)/m.exec(dump)?.[1] ?? 0);
}

/** dumpTotal of a dump file. */
export function dumpFileTotal(file: string): number {
  return dumpTotal(readFileSync(file, "utf8"));
}
