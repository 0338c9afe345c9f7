// Instructions per request of the filter host and module in process (issue
// 30): FilterHost driven as the sidecar drives it — RequestProperties of 16
// keep-alive connections, the request headers the listener makes, the
// response headers, the outcome, finish — with the hub answered at once
// (grants valid for the whole run, so the check cache never expires and
// wall time does not change the count). Each checkout is run under
// `valgrind --tool=callgrind` with V8's --single-threaded; only the measured
// requests are counted (callgrind_control zeroes the counts after the
// warm-up and dumps them after the last request).
//   node --import tsx test/bench/filter_host_callgrind.ts [checkout ...]   (after npm run build)
// A checkout is `.` (default) or the directory of another checkout whose
// build/ holds filter.wasm and deploy/plugin-config.json, for a before and
// after. FILTER_HOST_CALLGRIND_WARM_UP (2000) and FILTER_HOST_CALLGRIND_REQUESTS
// (3000) set the request counts. Not part of `npm run bench`: valgrind is slow.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { dumpFileTotal } from "./callgrind_node.ts";
import { checkoutRequests } from "./sidecar_like_requests.ts";

const WARM_UP = Number(process.env.FILTER_HOST_CALLGRIND_WARM_UP ?? 2000);
const REQUESTS = Number(process.env.FILTER_HOST_CALLGRIND_REQUESTS ?? 3000);
const HERE = resolve(join(import.meta.dirname, "..", ".."));

/** Runs the requests through `checkout`'s FilterHost (inside valgrind: this file with --drive). */
async function drive(checkout: string): Promise<void> {
  const { request, close } = await checkoutRequests(checkout);
  const control = (flag: string) => execFileSync("callgrind_control", [flag, String(process.pid)], { stdio: "ignore" });
  for (let i = 0; i < WARM_UP; i++) await request(i);
  control("-z");
  for (let i = 0; i < REQUESTS; i++) await request(WARM_UP + i);
  control("-d");
  await close();
}

/** Instructions per measured request of `checkout` (the dump callgrind_control -d wrote). */
function count(checkout: string): number {
  const out = mkdtempSync(join(tmpdir(), "mesh-filter-host-callgrind-"));
  try {
    execFileSync(
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${join(out, "cg.%p")}`,
        "--smc-check=all-non-file",
        process.execPath,
        "--single-threaded",
        "--import",
        "tsx",
        fileURLToPath(import.meta.url),
        "--drive",
        checkout,
      ],
      { cwd: HERE, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 26 },
    );
    const dump = readdirSync(out).find((f) => /^cg\.\d+\.1$/.test(f));
    if (!dump) throw new Error(`no dump of the measured requests for ${checkout}`);
    const total = dumpFileTotal(join(out, dump));
    if (total === 0) throw new Error(`no totals in ${dump}`);
    return total / REQUESTS;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--drive") {
  await drive(resolve(process.argv[3]));
} else {
  const checkouts = process.argv.length > 2 ? process.argv.slice(2) : ["."];
  console.log(`filter host in process under callgrind: ${REQUESTS} requests after ${WARM_UP}, load average ${loadavg()[0].toFixed(1)}`);
  for (const checkout of checkouts) console.log(`  ${checkout}: ${Math.round(count(resolve(checkout)))} instructions per request`);
}
