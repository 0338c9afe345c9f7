// The whole generation: read the three spec documents, probe the built
// programs (one daemon at a time, then meshctl beside one running
// disco-agent for its offline modes), classify every row, render the page.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Entry } from "./classes.ts";
import { classifyDaemonRows } from "./classify_daemons.ts";
import { classifyCommands, classifyPolicyRows, scenarioIds, versionProbes } from "./classify_cli.ts";
import { RECIPES } from "./daemons.ts";
import { probeMeshctl } from "./meshctl.ts";
import { envSpecs, observeDaemons } from "./observe_daemons.ts";
import { fieldProbes, probeFields, probeScenarios } from "./policies.ts";
import { render } from "./render.ts";
import { attemptStart, baseEnv, setProbeCwd } from "./run.ts";
import { readSpecs } from "./spec_rows.ts";
import { specCommands } from "./spec3_model.ts";

export interface Coverage {
  readonly entries: readonly Entry[];
  readonly markdown: string;
}

export async function generateCoverage(): Promise<Coverage> {
  const docs = readSpecs();
  const [policies, daemons, cli] = docs;
  const tmp = mkdtempSync(join(tmpdir(), "spec-coverage-"));
  mkdirSync(join(tmp, "cwd"));
  setProbeCwd(join(tmp, "cwd"));
  try {
    const observed = await observeDaemons(daemons, join(tmp, "daemons"));

    const meshctlTmp = join(tmp, "meshctl");
    mkdirSync(join(meshctlTmp, "agent-config"), { recursive: true });
    const agent = await attemptStart("disco-agent", RECIPES["disco-agent"].base(join(meshctlTmp, "agent-config")), RECIPES["disco-agent"].prefix, baseEnv());
    if (!agent.started) throw new Error(`disco-agent for meshctl's offline modes did not start: ${agent.stderr}`);
    const items = specCommands(cli);
    let meshctl: Awaited<ReturnType<typeof probeMeshctl>>;
    try {
      meshctl = await probeMeshctl(
        items,
        meshctlTmp,
        `http://127.0.0.1:${agent.listening.admin}`,
        envSpecs(daemons).filter((e) => e.by.includes("CT")),
      );
    } finally {
      await agent.stop();
    }

    const probes = fieldProbes(policies);
    const versions = versionProbes(policies);
    const fields = await probeFields(probes, tmp, versions);
    const scenarios = await probeScenarios(scenarioIds(), tmp);

    const entries = [
      ...classifyPolicyRows(
        policies,
        fields.fields,
        fields.samples,
        versions.map((v, i) => ({ ...v, complaints: fields.versionComplaints[i] })),
        scenarios,
      ),
      ...classifyDaemonRows(daemons, observed, meshctl),
      ...classifyCommands(items, meshctl),
    ];
    return { entries, markdown: render(docs, entries) };
  } finally {
    setProbeCwd(undefined);
    rmSync(tmp, { recursive: true, force: true });
  }
}
