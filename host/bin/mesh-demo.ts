// `npm start`: a local mesh on loopback with the embedded default
// configuration (host/demo): a hub, a demo app and its sidecar running
// build/filter.wasm, with mesh_ca issuing the sidecar's certificate for a
// service-account token and mutual TLS between the sidecar, mesh_ca and the
// hub. Prints what to try, runs until Ctrl-C.
import { DEMO_SERVICE, startLocalMesh } from "../demo/local_mesh.ts";

const mesh = await startLocalMesh({ secure: true });
const inbound = mesh.inboundUrl;
console.log(`
A local mesh is running on loopback:
  mesh_ca                 ${mesh.ca!.address}   (TLS; tokens from ${mesh.ca!.issuerDir}, root ${mesh.ca!.rootCertFile})
  hub (mesh.hub.v1.Hub)   127.0.0.1:${mesh.hub.listening.grpcPort}   (mutual TLS)   metrics http://127.0.0.1:${mesh.hub.listening.monitoringPort}/metrics
  app (echo)              127.0.0.1:${mesh.app.port}
  sidecar inbound         ${inbound}      (in front of the app, service ${DEMO_SERVICE})
  sidecar admin           ${mesh.adminUrl}

Try:
  curl -i '${inbound}/pets/42?key=alice'
      200: the app's echo shows what the sidecar forwarded (x-mesh-attributes)
  curl -i '${inbound}/admin'
      403 PERMISSION_DENIED:admins only (a hub rule)
  for i in 1 2 3 4 5 6 7; do curl -s -o /dev/null -w '%{http_code} ' '${inbound}/pets?key=bob'; done
      200 … then 429 RESOURCE_EXHAUSTED:… (the hub grants 5 requests per 10 s)
  curl '${mesh.adminUrl}/stats'          the filter's counters (check cache hits, hub calls…)
  curl '${mesh.adminUrl}/config_dump'    the active configuration and the workload certificate (secrets)
  tail -f ${mesh.accessLog}
      what the mesh reported to the hub (batched, one JSON line per request)

Configuration: ${mesh.sidecarConfigDir} (sidecar, watched) and ${mesh.hubConfigDir} (hub, watched).
Press Ctrl-C to stop.
`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log("stopping…");
  await mesh.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
