// `npm run bench`: every benchmark of the project, each printing figures
// measured side by side in this one run (machines here are shared and noisy,
// so only ratios within a run are meaningful).
// `npm run bench -- <part>…` runs only the named parts (hot-path, hub,
// sidecar, security, simulate, discovery, pwhost, analyze, embed).
import { runAnalyzeBench } from "./analyze.ts";
import { runDiscoveryBench } from "./discovery.ts";
import { runEmbedBench } from "./embed.ts";
import { runHubBench } from "./hub.ts";
import { runHubQuotaBench } from "./hub_quota.ts";
import { runHotPathBench } from "./hot_path.ts";
import { runPwhostBench } from "./pwhost.ts";
import { runSecurityBench } from "./security.ts";
import { runSidecarBench } from "./sidecar.ts";
import { runSimulateBench } from "./simulate.ts";

const PARTS: Record<string, () => Promise<string[]>> = {
  "hot-path": async () => runHotPathBench(),
  hub: async () => [await runHubBench(), "", ...(await runHubQuotaBench())],
  sidecar: runSidecarBench,
  security: runSecurityBench,
  simulate: runSimulateBench,
  discovery: runDiscoveryBench,
  pwhost: async () => runPwhostBench(),
  analyze: runAnalyzeBench,
  embed: runEmbedBench,
};

const asked = process.argv.slice(2);
const unknown = asked.filter((p) => !(p in PARTS));
if (unknown.length > 0) {
  console.error(`unknown benchmark part ${unknown.map((p) => JSON.stringify(p)).join(", ")}; the parts: ${Object.keys(PARTS).join(", ")}`);
  process.exit(2);
}
const parts = asked.length > 0 ? asked : Object.keys(PARTS);
for (const [i, name] of parts.entries()) {
  if (i > 0) console.log();
  for (const line of await PARTS[name]()) console.log(line);
}
