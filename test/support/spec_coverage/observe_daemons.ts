// Spec 2's asks of each daemon (spec2_model.ts) probed on the built daemons (daemons.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type DaemonObservations, probeDaemon } from "./daemons.ts";
import type { SpecDocument } from "./spec_rows.ts";
import {
  CODES,
  DAEMONS,
  type Daemon,
  discoveryCommonFlags,
  envOfRow,
  type FlagSpec,
  flagsOfRow,
  flagTableDaemons,
  specScopes,
  subcommandsOf,
} from "./spec2_model.ts";

export function daemonFlagSpecs(doc: SpecDocument, daemon: Daemon): FlagSpec[] {
  const out = doc.rows.flatMap((row) => (flagTableDaemons(row).includes(daemon) ? flagsOfRow(daemon, row) : []));
  if (daemon === "disco-discovery") out.push(...discoveryCommonFlags(doc));
  const seen = new Set<string>();
  return out.filter((f) => !seen.has(f.flag) && seen.add(f.flag));
}

export function envSpecs(doc: SpecDocument) {
  return doc.rows.flatMap(envOfRow);
}

export async function observeDaemons(doc: SpecDocument, tmp: string, only?: readonly Daemon[]): Promise<Map<Daemon, DaemonObservations>> {
  const scopes = specScopes(doc);
  const env = envSpecs(doc);
  const out = new Map<Daemon, DaemonObservations>();
  // One daemon at a time: their probes start processes of their own, and the machine is shared.
  for (const daemon of only ?? DAEMONS) {
    const dir = join(tmp, daemon);
    mkdirSync(join(dir, "config"), { recursive: true });
    const code = Object.entries(CODES).find(([, d]) => d === daemon)![0];
    const subcommands = subcommandsOf(doc, daemon);
    out.set(
      daemon,
      await probeDaemon(
        daemon,
        daemonFlagSpecs(doc, daemon),
        env.filter((e) => e.by.includes(code as never)),
        scopes.get(daemon) ?? [],
        dir,
        subcommands,
      ),
    );
  }
  return out;
}
