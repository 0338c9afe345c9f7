import assert from "node:assert/strict";

import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { service as healthService } from "grpc-health-check";
import { AGENT_BIN } from "../../host/demo/local_mesh.ts";
import { type Daemon, startDaemon } from "../../host/demo/processes.ts";
import { SIDE_LISTENERS_OFF } from "../discovery/support/daemon_args.ts";
import { tempDir } from "../support/processes.ts";

// grpc.health.v1.Health (grpc-health-check's own service definition as the
// client) and server reflection (the reflection proto shipped with
// @grpc/reflection) against real `hubs server`, `mesh_ca` and
// `disco-discovery discovery` processes.

const OUT = join(AGENT_BIN, "..");
const START_MS = 60_000;
const Health = grpc.makeClientConstructor(healthService, "grpc.health.v1.Health");
const reflectionProto = join(OUT, "..", "..", "node_modules", "@grpc", "reflection", "build", "proto", "grpc", "reflection", "v1", "reflection.proto");
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const reflectionPkg = grpc.loadPackageDefinition(loadSync(reflectionProto, { keepCase: true })) as any;

interface Listening {
  /** hubs and mesh_ca */
  grpcPort?: number;
  /** disco-discovery: `host:port` */
  grpc?: string;
}

type HealthClient = grpc.Client & {
  Check(req: { service: string }, cb: (e: grpc.ServiceError | null, r?: { status: string }) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }>;
};

function check(client: HealthClient, service: string): Promise<{ status?: string; code?: number }> {
  return new Promise((resolve) => client.Check({ service }, (e, r) => resolve(e ? { code: e.code } : { status: r!.status })));
}

/** ListServices, then the file that defines `symbol`, over one reflection stream. */
function reflect(address: string, symbol: string): Promise<{ services: string[]; files: number }> {
  const client = new reflectionPkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    const answers: Array<Record<string, any>> = [];
    call.on("data", (m: Record<string, any>) => {
      answers.push(m);
      if (answers.length === 2) call.end();
    });
    call.on("error", (e: Error) => {
      client.close();
      reject(e);
    });
    call.on("end", () => {
      client.close();
      resolve({
        services: answers[0].list_services_response.service.map((s: { name: string }) => s.name).sort(),
        files: answers[1].file_descriptor_response?.file_descriptor_proto?.length ?? 0,
      });
    });
    call.write({ list_services: "" });
    call.write({ file_containing_symbol: symbol });
  });
}

const daemons: Array<{ name: string; bin: string; args: string[]; prefix: string; service: string; env?: NodeJS.ProcessEnv }> = [
  {
    name: "hubs",
    bin: join(OUT, "hubs.mjs"),
    args: ["server", "--address", "tcp://127.0.0.1:0", "--monitoringPort", "0", "--ctrlz_port", "0", "--ctrlz_address", "127.0.0.1"],
    prefix: "hubs listening ",
    service: "mesh.hub.v1.Hub",
  },
  {
    name: "mesh_ca",
    bin: join(OUT, "mesh_ca.mjs"),
    args: [
      "--self-signed-ca",
      "--grpc-plaintext",
      "--grpc-port",
      "0",
      "--grpc-address",
      "127.0.0.1",
      "--monitoring-port",
      "0",
      "--ctrlz_port",
      "0",
      "--ctrlz_address",
      "127.0.0.1",
    ],
    prefix: "mesh_ca listening ",
    service: "mesh.anchor.v1.CertificateService",
    // mesh_ca's own variable: the other daemons refuse it (they run no CA).
    env: { ANCHOR_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false" },
  },
  {
    name: "disco-discovery",
    bin: join(OUT, "disco-discovery.mjs"),
    args: ["discovery", "--configDir", tempDir("disco-introspection-"), "--grpcAddr", "127.0.0.1:0", "--httpAddr", "", ...SIDE_LISTENERS_OFF],
    prefix: "disco-discovery listening: ",
    service: "envoy.service.discovery.v3.AggregatedDiscoveryService",
  },
];

for (const d of daemons) {
  describe(`${d.name}: gRPC health and reflection`, { timeout: 600_000 }, () => {
    let daemon: Daemon<Listening>;
    let address: string;
    let client: HealthClient;
    before(async () => {
      daemon = await startDaemon<Listening>(d.bin, d.args, d.prefix, START_MS, { ...process.env, ...d.env });
      address = daemon.listening.grpc ?? `127.0.0.1:${daemon.listening.grpcPort}`;
      client = new Health(address, grpc.credentials.createInsecure()) as unknown as HealthClient;
    });
    after(async () => {
      client?.close();
      await daemon?.stop("SIGKILL");
    });

    it("a standard health check answers SERVING for the server and its service, NOT_FOUND for others", async () => {
      assert.deepEqual(await check(client, ""), { status: "SERVING" });
      assert.deepEqual(await check(client, d.service), { status: "SERVING" });
      assert.deepEqual(await check(client, "no.such.Service"), { code: grpc.status.NOT_FOUND });
    });

    it("reflection lists the daemon's service and health, and serves the file defining it", async () => {
      const r = await reflect(address, d.service);
      assert.deepEqual(r.services, [d.service, "grpc.health.v1.Health"].sort());
      assert.ok(r.files >= 1, "the file descriptor of the service");
    });

    it("a Watch hears NOT_SERVING when the daemon starts draining, and the daemon exits 0", async () => {
      const watch = client.Watch({ service: d.service });
      const seen: string[] = [];
      const notServing = new Promise<void>((resolve, reject) => {
        watch.on("data", (m: { status: string }) => {
          seen.push(m.status);
          if (m.status === "SERVING") daemon.proc.kill("SIGTERM");
          if (m.status === "NOT_SERVING") resolve();
        });
        watch.on("error", (e) => (seen.includes("NOT_SERVING") ? resolve() : reject(e)));
      });
      await notServing;
      assert.deepEqual(seen, ["SERVING", "NOT_SERVING"]);
      watch.cancel();
      assert.equal(await daemon.stop(), 0);
    });
  });
}
