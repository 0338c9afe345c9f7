// meshctl: offline analysis and debugging of mesh configuration (spec 3).
import { handleBrokenPipe } from "../daemon/program.ts";
import { processIo } from "../cli/meshctl/io.ts";
import { runMeshctl } from "../cli/meshctl/main.ts";

handleBrokenPipe();
process.exitCode = await runMeshctl(process.argv.slice(2), processIo());
