// `disco-agent mesh-iptables`: the I/O edge of the capture rules. It runs in
// the pod's network namespace (the caller enters it: the init container, or
// `ip netns exec POD …`) and writes the nat table with `iptables-restore
// --noflush`, leaving every other rule of the namespace alone.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { EXIT_FAILURE, EXIT_OK } from "../daemon/exit_codes.ts";
import type { CaptureOptions } from "./capture_options.ts";
import { cleanupInput, MESH_CHAINS, meshChainsIn, restoreInput } from "./iptables_rules.ts";

export interface CommandOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Runs a program to its end with `input` on stdin. */
export type RunProgram = (program: string, args: readonly string[], input?: string) => { status: number | null; stdout: string; stderr: string; error?: Error };

const runProgram: RunProgram = (program, args, input) => {
  const r = spawnSync(program, args, { input, encoding: "utf8", env: { ...process.env, PATH: withSbin(process.env.PATH) } });
  return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "", ...(r.error ? { error: r.error } : {}) };
};

/** iptables lives in sbin, which a non-login environment may leave off PATH. */
function withSbin(path = ""): string {
  const dirs = path.split(":").filter(Boolean);
  for (const sbin of ["/usr/sbin", "/sbin"]) if (!dirs.includes(sbin)) dirs.push(sbin);
  return dirs.join(":");
}

const PROGRAM = "disco-agent mesh-iptables";

/**
 * Applies (or with `cleanupOnly` removes) the capture rules; with `dryRun`
 * prints the iptables-restore input instead. Rules already there from an
 * earlier run are removed first, so running twice leaves one set. Returns
 * the exit code: 0, or 1 when iptables failed (its message on stderr).
 */
export function runMeshIptables(o: CaptureOptions, out: CommandOutput, run: RunProgram = runProgram): number {
  if (o.dryRun) {
    out.stdout.write(o.cleanupOnly ? (cleanupInput(o) ?? "") : restoreInput(o));
    return EXIT_OK;
  }
  const fail = (what: string, r: ReturnType<RunProgram>) => {
    const why = r.error ? r.error.message : `exit ${r.status}: ${r.stderr.trim()}`;
    out.stderr.write(`${PROGRAM}: ${what}: ${why}\n`);
    return EXIT_FAILURE;
  };
  const save = run("iptables-save", ["-t", "nat"]);
  if (save.error || save.status !== 0) return fail("iptables-save -t nat", save);
  const present = meshChainsIn(save.stdout);
  if (present.length > 0 || o.cleanupOnly) {
    const input = cleanupInput(o, save.stdout);
    if (input !== undefined) {
      const r = run("iptables-restore", ["--noflush"], input);
      if (r.error || r.status !== 0) return fail(`removing the rules (iptables-restore --noflush)\n${input}`, r);
    }
    if (o.cleanupOnly) {
      out.stdout.write(
        input === undefined ? "mesh-iptables: no capture rules to remove\n" : `mesh-iptables: removed the capture rules and chains ${present.join(", ")}\n`,
      );
      return EXIT_OK;
    }
  }
  const input = restoreInput(o);
  const r = run("iptables-restore", ["--noflush"], input);
  if (r.error || r.status !== 0) return fail(`iptables-restore --noflush\n${input}`, r);
  const rules = input.split("\n").filter((l) => l.startsWith("-A ") || l.startsWith("-I ")).length;
  out.stdout.write(`mesh-iptables: ${rules} rules in the nat table (chains ${MESH_CHAINS.join(", ")}); proxy uid ${o.proxyUids.join(",")}\n${input}`);
  return EXIT_OK;
}

/** A user's uid from /etc/passwd (the default proxy uid is that of $ENVOY_USER). */
export function uidFromPasswd(user: string, passwd = "/etc/passwd"): string | undefined {
  try {
    for (const line of readFileSync(passwd, "utf8").split("\n")) {
      const [name, , uid] = line.split(":");
      if (name === user && uid !== undefined && /^\d+$/.test(uid)) return uid;
    }
  } catch {
    // No passwd file: the default uid.
  }
  return undefined;
}
