// A proxyless gRPC client process (@grpc/grpc-js-xds): bootstrap from
// GRPC_XDS_BOOTSTRAP_CONFIG, target from argv[2]. Each stdin line names a
// health-check service to ask for; each stdout line is the answer
// (`SERVING`, `NOT_SERVING`, `SERVICE_UNKNOWN`, or `error <code> <details>`).
// A process of its own because the xDS client keeps its control-plane stream
// (and its retries) for the life of the process.
import { createInterface } from "node:readline";
import * as grpc from "@grpc/grpc-js";
import * as xds from "@grpc/grpc-js-xds";
import { service as healthService } from "grpc-health-check";

xds.register();
const client = new grpc.Client(process.argv[2], grpc.credentials.createInsecure());
const method = healthService.Check;

for await (const line of createInterface({ input: process.stdin })) {
  const who = line.trim();
  const answer = await new Promise<string>((resolve) => {
    client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      { service: who },
      { deadline: Date.now() + 30_000 },
      (err, res) => {
        resolve(err ? `error ${err.code} ${err.details}` : String((res as { status: string }).status));
      },
    );
  });
  process.stdout.write(`${answer}\n`);
}
client.close();
process.exit(0);
