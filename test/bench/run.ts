// `npm run bench`: every benchmark of the project, each printing figures
// measured side by side in this one run (machines here are shared and noisy,
// so only ratios within a run are meaningful).
import { runDiscoveryBench } from "./discovery.ts";
import { runHubBench } from "./hub.ts";
import { runHotPathBench } from "./hot_path.ts";
import { runSecurityBench } from "./security.ts";
import { runSidecarBench } from "./sidecar.ts";
import { runSimulateBench } from "./simulate.ts";

for (const line of runHotPathBench()) console.log(line);
console.log();
console.log(await runHubBench());
console.log();
for (const line of await runSidecarBench()) console.log(line);
console.log();
for (const line of await runSecurityBench()) console.log(line);
console.log();
for (const line of await runSimulateBench()) console.log(line);
console.log();
for (const line of await runDiscoveryBench()) console.log(line);
