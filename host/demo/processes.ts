import { type ChildProcess, spawn } from "node:child_process";

/** A daemon started as a child process, with the JSON of its listening line. */
export interface Daemon<T> {
  proc: ChildProcess;
  listening: T;
  output(): string;
  /** SIGTERM (or another signal) and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `node <script> <args>` and waits for the line `<prefix>{json}` on
 * stdout, which the project's daemons print once every listener is bound.
 */
export function startDaemon<T>(script: string, args: string[], prefix: string, timeoutMs = 60_000, env: NodeJS.ProcessEnv = process.env): Promise<Daemon<T>> {
  const proc = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${script} did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith(prefix));
      if (!line) return;
      clearTimeout(timer);
      proc.stdout!.off("data", onData);
      proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
      resolve({
        proc,
        listening: JSON.parse(line.slice(prefix.length)) as T,
        output: () => out,
        stop: (signal = "SIGTERM") => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
          return exited;
        },
      });
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before listening:\n${out}`));
    });
  });
}
